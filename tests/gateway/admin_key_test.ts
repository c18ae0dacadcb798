// The admin key (SVC_ADMIN_API_KEY) against the inference key (SVC_CHAT_API_KEY): the inference
// key alone no longer manages the gateway (issue 23, item 8: a client holding it registered its
// own backend and received other users' prompts). Callers are simulated with a fake TCP peer, as
// in tests/http/admin_guard_test.ts, since this box has only loopback interfaces.
import { join } from "node:path";
import { assert, assertEquals, assertMatch } from "../_assert.ts";
import { setupLogger } from "../../src/core/logging.ts";
import { EngineStore } from "../../src/gateway/engines/engine_store.ts";
import { createGateway, type Gateway } from "../../src/gateway/gateway.ts";
import { HandlerTransport } from "../../src/gateway/transport.ts";
import type { HttpLogger } from "../../src/http/logger.ts";
import { createEngineApp } from "../../src/server/engine_app.ts";
import { FakeEngine } from "../_helpers/fake_engine.ts";
import { CHILD_HOME } from "./_child_home.ts";

setupLogger("error");
const QUIET: HttpLogger = { error: () => {}, warn: () => {} };
const CHAT_KEY = "chat-key-1";
const ADMIN_KEY = "admin-key-1";
const BASE = "http://127.0.0.1:8000";
const LOOPBACK: Deno.NetAddr = { transport: "tcp", hostname: "127.0.0.1", port: 40000 };
const REMOTE: Deno.NetAddr = { transport: "tcp", hostname: "192.168.1.20", port: 40000 };
const ATTACK = {
  id: "evil",
  base_url: "http://127.0.0.1:9/v1",
  kind: "chat",
  models: ["fake/chat"],
};

// Every management route, with a body that passes validation where there is one.
const MANAGEMENT: [string, string, unknown?][] = [
  ["GET", "/v1/management/engines"],
  ["POST", "/v1/management/engines", { model: "fake/chat", port: 0 }],
  ["POST", "/v1/management/engines/register", ATTACK],
  ["GET", "/v1/management/engines/fake-1"],
  ["DELETE", "/v1/management/engines/nobody"],
  ["GET", "/v1/management/status"],
  ["GET", "/v1/management/dashboard"],
];

async function withGateway(
  keys: { apiKey?: string; adminApiKey?: string },
  fn: (gw: Gateway) => Promise<void>,
): Promise<void> {
  const dir = await Deno.makeTempDir();
  const gw = await createGateway({
    ...keys,
    logger: QUIET,
    health: { intervalMs: 60_000 },
    management: { home: CHILD_HOME, store: new EngineStore(join(dir, "engines.json")) },
  });
  gw.dispatcher.addBackend(
    { id: "fake-1", baseUrl: "http://in-process/v1", kind: "llm", models: ["fake/chat"] },
    {
      transport: new HandlerTransport(
        createEngineApp({ engines: [new FakeEngine({ eosAfter: 3 })], logger: QUIET }),
      ),
    },
  );
  try {
    await fn(gw);
  } finally {
    await gw.close();
    await Deno.remove(dir, { recursive: true });
  }
}

async function call(
  gw: Gateway,
  method: string,
  path: string,
  options: { key?: string; body?: unknown; peer?: Deno.NetAddr } = {},
): Promise<{ status: number; code: string | null; message: string }> {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (options.key !== undefined) headers.authorization = `Bearer ${options.key}`;
  const body = options.body === undefined ? undefined : JSON.stringify(options.body);
  const res = await gw.handler(new Request(`${BASE}${path}`, { method, headers, body }), {
    remoteAddr: options.peer ?? LOOPBACK,
  });
  const text = await res.text();
  const error = res.status >= 400 ? JSON.parse(text).error : null;
  return { status: res.status, code: error?.code ?? null, message: error?.message ?? "" };
}

const chat = (gw: Gateway, key?: string) =>
  call(gw, "POST", "/v1/chat/completions", {
    key,
    body: { model: "fake/chat", messages: [{ role: "user", content: "hi" }], max_tokens: 3 },
  });

const engineIds = (gw: Gateway) => gw.manager!.list().map((e) => e.id);

Deno.test("admin key set: the inference key gets 403 admin_key_required on every management route", async () => {
  await withGateway({ apiKey: CHAT_KEY, adminApiKey: ADMIN_KEY }, async (gw) => {
    for (const peer of [LOOPBACK, REMOTE]) {
      for (const [method, path, body] of MANAGEMENT) {
        const res = await call(gw, method, path, { key: CHAT_KEY, body, peer });
        assertEquals([res.status, res.code], [403, "admin_key_required"], `${method} ${path}`);
        assertMatch(res.message, /SVC_ADMIN_API_KEY/);
      }
    }
    for (const [method, path, body] of MANAGEMENT) {
      const res = await call(gw, method, path, { body, peer: REMOTE });
      assertEquals(res.status, 401, `no key: ${method} ${path}`);
    }
    assertEquals(engineIds(gw), [], "nothing was registered or started");
  });
});

Deno.test("admin key set: the admin key opens management from anywhere; both keys serve chat", async () => {
  await withGateway({ apiKey: CHAT_KEY, adminApiKey: ADMIN_KEY }, async (gw) => {
    const admin = { key: ADMIN_KEY, peer: REMOTE };
    for (const path of ["/v1/management/engines", "/v1/management/status"]) {
      assertEquals((await call(gw, "GET", path, admin)).status, 200, path);
    }
    assertEquals((await call(gw, "GET", "/v1/management/dashboard", admin)).status, 200);
    const registered = await call(gw, "POST", "/v1/management/engines/register", {
      ...admin,
      body: { ...ATTACK, id: "mine" },
    });
    assertEquals(registered.status, 201);
    assertEquals((await call(gw, "GET", "/v1/management/engines/mine", admin)).status, 200);
    assertEquals((await call(gw, "DELETE", "/v1/management/engines/mine", admin)).status, 200);
    // Past the key check: the body itself is what is refused.
    const bad = await call(gw, "POST", "/v1/management/engines", { ...admin, body: { nope: 1 } });
    assertEquals(bad.status, 400);

    assertEquals((await chat(gw, CHAT_KEY)).status, 200, "inference key on chat");
    assertEquals((await chat(gw, ADMIN_KEY)).status, 200, "admin key on chat");
    assertEquals((await chat(gw)).status, 401, "no key on chat");
    assertEquals((await chat(gw, "wrong")).status, 401, "wrong key on chat");
  });
});

Deno.test("admin key only: inference stays open, management needs the admin key", async () => {
  await withGateway({ adminApiKey: ADMIN_KEY }, async (gw) => {
    assertEquals((await chat(gw)).status, 200);
    const none = await call(gw, "GET", "/v1/management/engines", { peer: REMOTE });
    assertEquals(none.status, 401);
    const other = await call(gw, "GET", "/v1/management/engines", { key: "x", peer: LOOPBACK });
    assertEquals(other.status, 401);
    const ok = await call(gw, "GET", "/v1/management/engines", { key: ADMIN_KEY, peer: REMOTE });
    assertEquals(ok.status, 200);
  });
});

Deno.test("inference key only: management is loopback-only, even with the key", async () => {
  await withGateway({ apiKey: CHAT_KEY }, async (gw) => {
    for (const [method, path, body] of MANAGEMENT) {
      const res = await call(gw, method, path, { key: CHAT_KEY, body, peer: REMOTE });
      assertEquals([res.status, res.code], [403, "not_loopback"], `${method} ${path}`);
      assertMatch(res.message, /SVC_ADMIN_API_KEY/);
    }
    // Loopback callers with the key are served as before; without it they are not.
    assertEquals((await call(gw, "GET", "/v1/management/engines", { key: CHAT_KEY })).status, 200);
    assertEquals(
      (await call(gw, "GET", "/v1/management/dashboard", { key: CHAT_KEY })).status,
      200,
    );
    assertEquals((await call(gw, "GET", "/v1/management/engines")).status, 401);
    // A loopback peer that addresses a foreign host name is not loopback (DNS rebinding).
    const rebound = await gw.handler(
      new Request("http://attacker.example:8000/v1/management/engines", {
        headers: { authorization: `Bearer ${CHAT_KEY}` },
      }),
      { remoteAddr: LOOPBACK },
    );
    assertEquals(rebound.status, 403);
    await rebound.body?.cancel();
    // Remote inference with the key still works.
    const remoteChat = await call(gw, "POST", "/v1/chat/completions", {
      key: CHAT_KEY,
      peer: REMOTE,
      body: { model: "fake/chat", messages: [{ role: "user", content: "hi" }], max_tokens: 3 },
    });
    assertEquals(remoteChat.status, 200);
  });
});

Deno.test("the attack: a remote client with the inference key cannot register its backend", async () => {
  for (const keys of [{ apiKey: CHAT_KEY }, { apiKey: CHAT_KEY, adminApiKey: ADMIN_KEY }]) {
    await withGateway(keys, async (gw) => {
      const res = await call(gw, "POST", "/v1/management/engines/register", {
        key: CHAT_KEY,
        body: ATTACK,
        peer: REMOTE,
      });
      assertEquals(res.status, 403, JSON.stringify(keys));
      assertEquals(engineIds(gw), []);
      // Prompts still reach the configured backend only.
      assertEquals((await chat(gw, CHAT_KEY)).status, 200);
      assert(!gw.dispatcher.snapshot().backends.some((b) => b.id === "evil"));
    });
  }
});

Deno.test("inference key without an admin key: one warning at start-up names SVC_ADMIN_API_KEY", async () => {
  const lines: string[] = [];
  setupLogger({ level: "warn", stderr: false, sink: (line) => lines.push(line) });
  try {
    await withGateway({ apiKey: CHAT_KEY }, async () => {});
    const warned = lines.filter((l) => l.includes("SVC_ADMIN_API_KEY"));
    assertEquals(warned.length, 1, lines.join("\n"));
    lines.length = 0;
    await withGateway({ apiKey: CHAT_KEY, adminApiKey: ADMIN_KEY }, async () => {});
    await withGateway({}, async () => {});
    assertEquals(lines.filter((l) => l.includes("SVC_ADMIN_API_KEY")), []);
  } finally {
    setupLogger("error");
  }
});

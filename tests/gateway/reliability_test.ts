// Reliability of the gateway on loopback: an engine process killed under load, overload far past
// the limits, thousands of hostile bodies, and auth on every endpoint.
import { join } from "node:path";
import { assert, assertEquals } from "../_assert.ts";
import { setupLogger } from "../../src/core/logging.ts";
import { type GatewayServer, startGateway } from "../../src/gateway/gateway_server.ts";
import type { HttpLogger } from "../../src/http/logger.ts";
import { FakeEngine, until } from "./_fake_backend.ts";
import { CHILD_HOME } from "./_child_home.ts";
import { demoEngineServer } from "../_helpers/demo_server.ts";

setupLogger("error");
const QUIET: HttpLogger = { error: () => {}, warn: () => {} };
const CHAT = { model: "m", messages: [{ role: "user", content: "hi" }] };

function post(gw: GatewayServer, path: string, body: BodyInit, headers: HeadersInit = {}) {
  return fetch(`${gw.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body,
  });
}

Deno.test("reliability: killing one of two engine processes under load costs no client a request", async () => {
  const dir = await Deno.makeTempDir();
  const gw = await startGateway({
    logger: QUIET,
    health: { intervalMs: 250 },
    management: {
      home: CHILD_HOME,
      portCandidates: () => [],
      device: "cpu",
      offline: true,
      supervisor: { restartDelayMs: 200 },
    },
  });
  try {
    const manager = gw.gateway.manager!;
    const a = await manager.startEngine({ model: "demo/chat", reuse: false });
    const b = await manager.startEngine({ model: "demo/chat", reuse: false });
    await Promise.all([manager.whenReady(a.engine.id), manager.whenReady(b.engine.id)]);
    const victim = manager.get(a.engine.id).pid!;
    const body = JSON.stringify({ ...CHAT, model: "demo/chat", max_tokens: 3 });
    const statuses: number[] = [];
    const failures: string[] = [];
    // Counted, not timed: 20 answers before the kill and 40 after it, however slow the machine.
    let killed = false;
    let afterKill = 0;
    const worker = async () => {
      while (!killed || afterKill < 40) {
        const res = await post(gw, "/v1/chat/completions", body);
        statuses.push(res.status);
        if (killed) afterKill++;
        const json = await res.json();
        if (res.status !== 200) failures.push(JSON.stringify(json));
        else assertEquals(json.object, "chat.completion");
        if (!killed && statuses.length >= 20) {
          killed = true;
          Deno.kill(victim, "SIGKILL");
        }
      }
    };
    await Promise.all(Array.from({ length: 8 }, worker));
    assert(killed, "the engine was killed during the load");
    const hit = gw.gateway.dispatcher.backend(a.engine.id)!.snapshot();
    assert(hit.errors >= 1, "requests did reach the killed engine and were failed over");
    assertEquals(failures, [], "no client saw an error");
  } finally {
    await gw.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("reliability: 10x overload gets 429/503 with Retry-After; accepted work is answered; memory stays bounded", async () => {
  const fake = new FakeEngine("busy");
  const url = fake.serve();
  const gw = await startGateway({
    logger: QUIET,
    maxInFlight: 150,
    dispatcher: { maxQueue: 16, policy: "fifo" },
    backends: [{ id: "busy", baseUrl: url, kind: "llm", models: ["m"], maxConcurrency: 4 }],
  });
  try {
    const body = JSON.stringify(CHAT);
    // The backend holds every request until the 180 over the limits were refused, so exactly
    // the capacity (4 in flight + 16 queued) is accepted whatever the machine's speed.
    const wave = async () => {
      const release = fake.hold();
      let refused = 0;
      const pending = Promise.all(Array.from({ length: 200 }, async () => {
        const res = await post(gw, "/v1/chat/completions", body);
        const json = await res.json();
        if (res.status !== 200) refused++;
        return { status: res.status, retryAfter: res.headers.get("retry-after"), json };
      }));
      await until(() => refused >= 180, 20_000);
      release();
      const results = await pending;
      for (const r of results) {
        if (r.status === 200) {
          assertEquals(r.json.choices[0].message.content, "from busy");
        } else {
          assert(r.status === 429 || r.status === 503, `status ${r.status}`);
          assert(Number(r.retryAfter) >= 1, "Retry-After is set");
          assert(typeof r.json.error.message === "string");
        }
      }
      const codes = results.filter((r) => r.status !== 200).map((r) => r.json.error.code);
      assertEquals(
        results.filter((r) => r.status === 200).length,
        20,
        `the accepted are answered (refusals: ${JSON.stringify(countBy(codes))})`,
      );
      return results;
    };
    const first = await wave();
    assert(first.some((r) => r.status === 429), "the full queue answered 429");
    // This module's own memory (its V8 heap and the buffers it holds), not the process's RSS: other
    // test modules run in the same process at the same time (--parallel) and load models.
    const before = isolateBytes();
    for (let i = 0; i < 3; i++) await wave();
    const growthMiB = (isolateBytes() - before) / 2 ** 20;
    assert(growthMiB < 64, `memory grew ${growthMiB.toFixed(1)} MiB over 600 requests`);
    const snap = gw.gateway.dispatcher.snapshot();
    assertEquals(snap.pools[0].queueLength, 0);
    await until(() => gw.gateway.dispatcher.backend("busy")!.inFlight === 0);
    assert(fake.maxInFlight <= 4, "the backend never got more than its max concurrency");
  } finally {
    await gw.stop();
    await fake.close();
  }
});

Deno.test("reliability: thousands of malformed or hostile bodies get only 4xx and the gateway stays up", async () => {
  // Real engines behind the gateway: it checks only the envelope, so they judge the rest.
  const chat = await demoEngineServer("demo/chat");
  const embed = await demoEngineServer("demo/embed");
  const gw = await startGateway({
    logger: QUIET,
    maxBodyBytes: 256 * 1024,
    backends: [
      {
        id: "chat",
        baseUrl: chat.baseUrl,
        kind: "llm",
        models: ["demo/chat"],
        aliases: { m: "demo/chat" },
      },
      {
        id: "embed",
        baseUrl: embed.baseUrl,
        kind: "embedding",
        models: ["demo/embed"],
        aliases: { m: "demo/embed" },
      },
    ],
  });
  try {
    const bodies = hostileBodies(2400);
    const statuses = new Map<number, number>();
    for (let i = 0; i < bodies.length; i += 48) {
      await Promise.all(
        bodies.slice(i, i + 48).map(async ([path, body]) => {
          const res = await post(gw, path, body);
          const json = await res.json();
          assert(res.status >= 400 && res.status < 500, `${res.status} for ${preview(body)}`);
          assert(typeof json.error?.message === "string");
          statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        }),
      );
    }
    assert((statuses.get(400) ?? 0) > 1000);
    assert((statuses.get(413) ?? 0) > 0);
    const healthy = await post(
      gw,
      "/v1/chat/completions",
      JSON.stringify({ ...CHAT, max_tokens: 2 }),
    );
    assertEquals(healthy.status, 200);
    await healthy.body?.cancel();
  } finally {
    await gw.stop();
    await chat.stop();
    await embed.stop();
  }
});

Deno.test("reliability: with a key, no endpoint but health answers without it", async () => {
  const dir = await Deno.makeTempDir();
  const gw = await startGateway({
    logger: QUIET,
    apiKey: "gw-only-key",
    management: { home: join(dir, "home"), portCandidates: () => [] },
  });
  try {
    const open = ["/health", "/health/ready"];
    const closed: [string, string][] = [
      ["GET", "/v1/models"],
      ["GET", "/v1/models/demo/chat"],
      ["POST", "/v1/chat/completions"],
      ["POST", "/v1/completions"],
      ["POST", "/v1/embeddings"],
      ["GET", "/metrics"],
      ["GET", "/v1/management/engines"],
      ["POST", "/v1/management/engines"],
      ["POST", "/v1/management/engines/register"],
      ["GET", "/v1/management/engines/x"],
      ["DELETE", "/v1/management/engines/x"],
      ["GET", "/v1/management/status"],
      ["GET", "/no/such/path"],
    ];
    for (const path of open) {
      const res = await fetch(`${gw.url}${path}`);
      assert(res.status !== 401, path);
      await res.body?.cancel();
    }
    for (const [method, path] of closed) {
      for (const auth of [undefined, "Bearer wrong", "Basic Z3ctb25seS1rZXk="]) {
        // JSON, as the management routes refuse other bodies (415) before their key check.
        const headers: Record<string, string> = { "content-type": "application/json" };
        if (auth) headers.authorization = auth;
        const res = await fetch(`${gw.url}${path}`, {
          method,
          headers,
          body: method === "POST" ? "{}" : undefined,
        });
        assertEquals(res.status, 401, `${method} ${path} ${auth}`);
        assertEquals((await res.json()).error.type, "authentication_error");
      }
    }
    const withKey = await fetch(`${gw.url}/v1/models`, {
      headers: { authorization: "Bearer gw-only-key" },
    });
    assertEquals(withKey.status, 200);
    await withKey.body?.cancel();
  } finally {
    await gw.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

function preview(body: BodyInit): string {
  return typeof body === "string" ? body.slice(0, 120) : `<${(body as Uint8Array).length} bytes>`;
}

// Deterministic hostile bodies over the three POST routes, each certain to be invalid.
function hostileBodies(count: number): [string, string | Uint8Array<ArrayBuffer>][] {
  let seed = 42;
  const random = () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)];
  const weird: unknown[] = [null, true, -1, 1.5, 1e308, "", "\u0000", [], [null], {}, { a: 1 }];
  const paths = ["/v1/chat/completions", "/v1/completions", "/v1/embeddings"];
  const makers: ((path: string) => string | Uint8Array<ArrayBuffer>)[] = [
    // Wrong types for required fields, with unknown fields riding along.
    (path) => {
      const field = path.endsWith("embeddings")
        ? "input"
        : path.endsWith("chat/completions")
        ? "messages"
        : "prompt";
      return JSON.stringify({ model: "m", [field]: pick([null, 5, true, {}]), extra: pick(weird) });
    },
    (_) => JSON.stringify({ model: pick([5, null, [], {}, ""]), messages: [], prompt: "x" }),
    (_) => JSON.stringify(pick(weird)),
    // Huge strings: over the body limit.
    (path) => JSON.stringify({ model: "m", input: "x".repeat(300_000), path }),
    // Deep nesting.
    (_) => "[".repeat(5000 + Math.floor(random() * 100_000)) + "]".repeat(10),
    (path) =>
      `{"model":"m","${path.endsWith("embeddings") ? "input" : "messages"}":` +
      "[".repeat(3000) + "]".repeat(3000) + "}",
    // Invalid UTF-8 and truncated JSON.
    (_) => new Uint8Array([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]),
    (_) => `{"model":"m","messages":[{"role":"user","content":"${"é".repeat(10)}`,
    (_) => new Uint8Array(Array.from({ length: 64 }, () => Math.floor(random() * 256))),
    // Valid JSON, invalid values.
    (_) =>
      JSON.stringify({
        ...CHAT,
        temperature: pick([-1, 3, "hot"]),
        n: pick([0, -2, 1.5]),
        unknown_field: { nested: [1, 2, 3] },
      }),
    (_) =>
      JSON.stringify({
        model: "m",
        messages: [{ role: pick(["wizard", 3, null]), content: "x", __proto__: { x: 1 } }],
      }),
    (_) => JSON.stringify({ model: "m", prompt: "x", max_tokens: pick([0, -1, "ten", 1e20]) }),
    (_) => JSON.stringify({ model: "m", input: pick([[], [[]], [-1], [1.5], [null]]) }),
    (_) => "",
  ];
  return Array.from({ length: count }, (_, i) => {
    const path = pick(paths);
    return [path, makers[i % makers.length](path)];
  });
}

function countBy(values: string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const v of values) counts[v] = (counts[v] ?? 0) + 1;
  return counts;
}

function isolateBytes(): number {
  const { heapUsed, external } = Deno.memoryUsage();
  return heapUsed + external;
}

// The dashboard's usage per managed key (GET /v1/management/dashboard `usage`): today's requests
// and tokens per key and model with the keys' limits, from a real SQLite state store, read at most
// once per refresh interval whatever the number of polls, and absent without managed keys.
import { assert, assertEquals } from "../_assert.ts";
import { setupLogger } from "../../src/core/logging.ts";
import { ApiKeys } from "../../src/gateway/api_keys.ts";
import { dashboardRoute } from "../../src/gateway/dashboard_route.ts";
import { Dispatcher } from "../../src/gateway/dispatcher.ts";
import { createGatewayApp } from "../../src/gateway/gateway_app.ts";
import { TokenMeter } from "../../src/gateway/token_meter.ts";
import { HandlerTransport } from "../../src/gateway/transport.ts";
import { createHttpApp } from "../../src/http/http_app.ts";
import type { HttpLogger } from "../../src/http/logger.ts";
import { createEngineApp } from "../../src/server/engine_app.ts";
import { openStateStore } from "../../src/state/open_state_store.ts";
import type { StateStore } from "../../src/state/state_store.ts";
import { FakeEngine } from "../_helpers/fake_engine.ts";
import { SILENT } from "./_fake_backend.ts";

setupLogger("error");
const QUIET: HttpLogger = { error: () => {}, warn: () => {} };
const URL_BASE = "http://127.0.0.1:8000";
const LOOPBACK: Deno.NetAddr = { transport: "tcp", hostname: "127.0.0.1", port: 40000 };
const today = () => new Date().toISOString().slice(0, 10);

// The state store with a count of the reads the dashboard makes (and a switch to make them fail).
function counted(state: StateStore) {
  const reads = { listKeys: 0, listUsage: 0, fail: false };
  const wrapped = new Proxy(state, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (prop !== "listKeys" && prop !== "listUsage") {
        return typeof value === "function" ? value.bind(target) : value;
      }
      return (...args: unknown[]) => {
        reads[prop]++;
        if (reads.fail) return Promise.reject(new Error("database is gone"));
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { wrapped, reads };
}

function gatewaySetup(state?: StateStore) {
  const dispatcher = new Dispatcher({ logger: SILENT });
  dispatcher.addBackend({
    id: "fake-1",
    baseUrl: "http://in-process/v1",
    kind: "llm",
    models: ["fake/chat"],
  }, {
    transport: new HandlerTransport(
      createEngineApp({ engines: [new FakeEngine({ eosAfter: 5 })], logger: QUIET }),
    ),
  });
  const app = createGatewayApp({ dispatcher, state, logger: QUIET });
  const dashboard = async () => {
    const res = await app(new Request(`${URL_BASE}/v1/management/dashboard`), {
      remoteAddr: LOOPBACK,
    });
    assertEquals(res.status, 200);
    return {
      text: await res.text(),
      get json() {
        return JSON.parse(this.text);
      },
    };
  };
  const chat = async (secret?: string) => {
    const res = await app(
      new Request(`${URL_BASE}/v1/chat/completions`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          ...(secret ? { authorization: `Bearer ${secret}` } : {}),
        },
        body: JSON.stringify({ model: "fake/chat", messages: [{ role: "user", content: "hi" }] }),
      }),
      { remoteAddr: LOOPBACK },
    );
    assertEquals(res.status, 200);
    return (await res.json()).usage as { prompt_tokens: number; completion_tokens: number };
  };
  return { dispatcher, dashboard, chat };
}

// Usage is recorded after the answer, off the request path: wait until it has landed.
async function usageLanded(keys: ApiKeys, keyId: string, requests: number): Promise<void> {
  const deadline = Date.now() + 5000;
  while (true) {
    const rows = await keys.usage({ keyId });
    if (rows.reduce((s, r) => s + r.requests, 0) >= requests) return;
    assert(Date.now() < deadline, `usage of ${keyId} not recorded within 5 s`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

Deno.test("dashboard: usage shows today's requests and tokens per key and model with the keys' limits", async () => {
  const state = await openStateStore("sqlite::memory:");
  const { wrapped, reads } = counted(state);
  const { dispatcher, dashboard, chat } = gatewaySetup(wrapped);
  const keys = new ApiKeys(state);
  try {
    const a = await keys.create({ name: "team-a", scope: "inference", rpm: 60, tpm: 1000 });
    const b = await keys.create({ name: "team-b", scope: "inference" });
    const first = await chat(a.secret);
    const second = await chat(a.secret);
    await chat(); // no key (the gateway needs none here): not a key's usage
    await usageLanded(keys, a.key.id, 2);

    // Ten pages polling at once: one read of the keys and one of the usage.
    const polls = await Promise.all(Array.from({ length: 10 }, () => dashboard()));
    assertEquals([reads.listKeys, reads.listUsage], [1, 1]);
    const { usage } = polls[0].json;
    assertEquals(usage.day, today());
    assertEquals(usage.omitted_keys, 0);
    assert(Math.abs(usage.updated - Date.now() / 1000) < 10);
    const prompt = first.prompt_tokens + second.prompt_tokens;
    const completion = first.completion_tokens + second.completion_tokens;
    assert(completion > 0);
    assertEquals(usage.keys, [
      {
        id: a.key.id,
        name: "team-a",
        prefix: a.key.prefix,
        scope: "inference",
        rpm: 60,
        tpm: 1000,
        revoked: false,
        requests: 2,
        prompt_tokens: prompt,
        completion_tokens: completion,
        models: [
          { model: "fake/chat", requests: 2, prompt_tokens: prompt, completion_tokens: completion },
        ],
      },
      // A key without requests today is listed with its limits (busiest first).
      {
        id: b.key.id,
        name: "team-b",
        prefix: b.key.prefix,
        scope: "inference",
        rpm: null,
        tpm: null,
        revoked: false,
        requests: 0,
        prompt_tokens: 0,
        completion_tokens: 0,
        models: [],
      },
    ]);
    // Never a secret, nor its hash.
    for (const { text } of polls) {
      for (const k of [a, b]) {
        assert(!text.includes(k.secret) && !text.includes(k.key.hash), "no secret on the wire");
      }
    }
    // The engines part is as before.
    assertEquals(polls[0].json.engines[0].requests, 3);
  } finally {
    dispatcher.close();
    await state.close();
  }
});

Deno.test("dashboard: no usage without managed keys, with or without a state store", async () => {
  const state = await openStateStore("sqlite::memory:");
  const withState = gatewaySetup(state);
  const without = gatewaySetup();
  try {
    await withState.chat();
    for (const { dashboard } of [withState, without]) {
      const d = (await dashboard()).json;
      assertEquals(d.object, "gateway.dashboard");
      assertEquals("usage" in d, false);
    }
  } finally {
    withState.dispatcher.close();
    without.dispatcher.close();
    await state.close();
  }
});

Deno.test("dashboard: usage is re-read after the refresh interval; a revoked key stays on the day it was used", async () => {
  const state = await openStateStore("sqlite::memory:");
  const { wrapped, reads } = counted(state);
  const keys = new ApiKeys(state);
  const app = createHttpApp([
    dashboardRoute({
      dispatcher: new Dispatcher({ logger: SILENT }),
      tokens: new TokenMeter(),
      keys: new ApiKeys(wrapped),
      usageRefreshMs: 400,
    }),
  ], { logger: QUIET });
  const usage = async () => {
    const res = await app(new Request(`${URL_BASE}/v1/management/dashboard`), {
      remoteAddr: LOOPBACK,
    });
    assertEquals(res.status, 200);
    return (await res.json()).usage;
  };
  const later = () => new Promise((r) => setTimeout(r, 450));
  try {
    assertEquals(await usage(), undefined, "no key yet");
    const used = await keys.create({ name: "used", scope: "inference" });
    const idle = await keys.create({ name: "idle", scope: "admin" });
    await keys.recordUsage(used.key.id, "m1", { promptTokens: 3, completionTokens: 4 });
    assertEquals(await usage(), undefined, "still the cached read");
    await later();
    let u = await usage();
    assertEquals(u.keys.map((k: { name: string }) => k.name), ["used", "idle"]);
    assertEquals(u.keys[0].requests, 1);

    await keys.recordUsage(used.key.id, "m2", { promptTokens: 10, completionTokens: 20 });
    await keys.recordUsage(used.key.id, "m2", { promptTokens: 10, completionTokens: 20 });
    await keys.revoke(used.key.id);
    await keys.revoke(idle.key.id);
    const before = reads.listUsage;
    assertEquals((await usage()).keys[0].requests, 1, "cached");
    assertEquals(reads.listUsage, before);
    await later();
    u = await usage();
    assertEquals(reads.listUsage, before + 1);
    // Revoked: kept because it was used today; the idle revoked key is gone.
    assertEquals(u.keys.length, 1);
    assertEquals(u.keys[0].revoked, true);
    assertEquals([u.keys[0].requests, u.keys[0].prompt_tokens, u.keys[0].completion_tokens], [
      3,
      23,
      44,
    ]);
    assertEquals(u.keys[0].models.map((m: { model: string }) => m.model), ["m2", "m1"]);

    // A failing store: the dashboard still answers, with the last read and the reason.
    reads.fail = true;
    await later();
    u = await usage();
    assertEquals(u.error, "database is gone");
    assertEquals(u.keys[0].requests, 3);
  } finally {
    await state.close();
  }
});

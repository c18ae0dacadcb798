// GET /v1/management/dashboard on the gateway app: its content, and the admin rules it obeys.
import { assert, assertEquals } from "../_assert.ts";
import { Dispatcher } from "../../src/gateway/dispatcher.ts";
import { createGatewayApp } from "../../src/gateway/gateway_app.ts";
import { HandlerTransport } from "../../src/gateway/transport.ts";
import { createEngineApp } from "../../src/server/engine_app.ts";
import type { HttpLogger } from "../../src/http/logger.ts";
import { FakeEngine } from "../_helpers/fake_engine.ts";
import { readEvents, SILENT } from "./_fake_backend.ts";

const QUIET: HttpLogger = { error: () => {}, warn: () => {} };
const URL_BASE = "http://127.0.0.1:8000";
const LOOPBACK: Deno.NetAddr = { transport: "tcp", hostname: "127.0.0.1", port: 40000 };

function setup(apiKey?: string) {
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
  const app = createGatewayApp({ dispatcher, apiKey, logger: QUIET });
  const get = (headers: Record<string, string> = {}, peer: Deno.NetAddr = LOOPBACK) =>
    app(new Request(`${URL_BASE}/v1/management/dashboard`, { headers }), { remoteAddr: peer });
  return { dispatcher, app, get };
}

Deno.test("dashboard: engines with circuit state, queues, totals and tokens/s", async () => {
  const { dispatcher, app, get } = setup();
  try {
    const chat = (stream: boolean) =>
      app(
        new Request(`${URL_BASE}/v1/chat/completions`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({
            model: "fake/chat",
            messages: [{ role: "user", content: "hi" }],
            stream,
          }),
        }),
      );
    const json = await chat(false);
    assertEquals(json.status, 200);
    const { usage } = await json.json();
    const tokens = usage.completion_tokens;
    await readEvents(await chat(true));
    const res = await get();
    assertEquals(res.status, 200);
    const d = await res.json();
    assertEquals(d.object, "gateway.dashboard");
    assertEquals(d.requests, 2);
    const [engine] = d.engines;
    assertEquals(engine.id, "fake-1");
    assertEquals(engine.circuit, "closed");
    assertEquals(engine.state, "registered");
    assertEquals(engine.requests, 2);
    // Both answers were metered: the JSON one by usage, the stream chunk by chunk.
    assertEquals(engine.generated_tokens, 2 * tokens);
    assert(engine.tokens_per_s > 0 && d.tokens_per_s === engine.tokens_per_s);
    // Prompt tokens from the JSON answer's usage (the stream sent none: no include_usage).
    assertEquals(engine.prompt_tokens, usage.prompt_tokens);
    assertEquals(engine.cached_prompt_tokens, usage.prompt_tokens_details?.cached_tokens ?? 0);
    assertEquals(Object.keys(d.queues[0]).sort(), ["capacity", "length", "name", "rejected"]);
  } finally {
    dispatcher.close();
  }
});

Deno.test("dashboard: pages of other origins and remote callers without a key are refused", async () => {
  const { dispatcher, get } = setup();
  try {
    const foreign: Record<string, string>[] = [
      { origin: "http://evil.example" },
      { "sec-fetch-site": "cross-site" },
      { "sec-fetch-site": "same-site" },
    ];
    for (const headers of foreign) {
      const res = await get(headers);
      assertEquals(res.status, 403, JSON.stringify(headers));
      assertEquals((await res.json()).error.code, "origin_not_allowed");
      assertEquals(res.headers.get("access-control-allow-origin"), null);
    }
    const remote = await get({}, { transport: "tcp", hostname: "192.168.1.9", port: 4000 });
    assertEquals(remote.status, 403);
    assertEquals((await remote.json()).error.code, "not_loopback");
    // The page's own fetches (same origin) are answered.
    const same = await get({ "sec-fetch-site": "same-origin", origin: URL_BASE });
    assertEquals(same.status, 200);
    await same.body?.cancel();
  } finally {
    dispatcher.close();
  }
});

Deno.test("dashboard: needs the gateway key when one is set", async () => {
  const { dispatcher, get } = setup("dash-key");
  try {
    const none = await get();
    assertEquals(none.status, 401);
    await none.body?.cancel();
    const ok = await get({ authorization: "Bearer dash-key" });
    assertEquals(ok.status, 200);
    await ok.body?.cancel();
  } finally {
    dispatcher.close();
  }
});

// While engines the gateway started are loading: a request that may be for a default model (the
// default reranker among them, whose id is not known yet) waits and gets 503 model_loading, never
// a 404; and /health/ready, the dashboard's `ready`, the `ready` gauge of /metrics and the
// management status agree. The engines are stand-in processes that turn ready when told.
import { assert, assertEquals, assertMatch } from "../_assert.ts";
import { join } from "node:path";
import { createGateway, type Gateway } from "../../src/gateway/gateway.ts";
import type { ProcessCommand } from "../../src/gateway/engines/engine_command.ts";
import type { EngineProcessSpec } from "../../src/gateway/engines/engine_command.ts";
import { ENGINE_INSTANCE_ENV, ENGINE_INSTANCE_HEADER } from "../../src/server/engine_instance.ts";
import type { HttpLogger } from "../../src/http/logger.ts";
import { setupLogger } from "../../src/core/logging.ts";
import { FakeEngine } from "./_fake_backend.ts";

setupLogger("error");
const QUIET: HttpLogger = { error: () => {}, warn: () => {} };
const LOOPBACK: Deno.NetAddr = { transport: "tcp", hostname: "127.0.0.1", port: 40000 };

// An engine that loads until the file `ready` exists, then lists its models (an embedding engine
// with the default reranker: demo/embed and demo/rerank; a chat engine: demo/chat) and answers.
function standIn(ready: string): (spec: EngineProcessSpec) => ProcessCommand {
  return (spec) => {
    const data = spec.kind === "chat"
      ? [{ id: "demo/chat", kind: "chat", random_weights: true }]
      : [
        { id: "demo/embed", kind: "embedding", random_weights: true },
        ...(spec.rerank ? [{ id: "demo/rerank", kind: "rerank", random_weights: true }] : []),
      ];
    const code = `
      const token = Deno.env.get("${ENGINE_INSTANCE_ENV}") ?? "";
      Deno.serve({ hostname: "127.0.0.1", port: ${spec.port}, onListen() {} }, (req) => {
        const path = new URL(req.url).pathname;
        let loaded = false;
        try { Deno.statSync(${JSON.stringify(ready)}); loaded = true; } catch { /* loading */ }
        const headers = { "${ENGINE_INSTANCE_HEADER}": token };
        if (!loaded) return Response.json({ status: "loading" }, { status: 503, headers });
        if (path === "/health") return Response.json({ status: "ok" }, { headers });
        if (path === "/v1/models") return Response.json({ data: ${JSON.stringify(data)} });
        if (path === "/v1/rerank") return Response.json({ results: [{ index: 0, relevance_score: 1 }] });
        return Response.json({ error: { message: "no", type: "x", param: null, code: null } }, { status: 404 });
      });
    `;
    return { command: Deno.execPath(), args: ["eval", "--no-config", code], env: {} };
  };
}

async function gatewayWith(
  dir: string,
  engines: NonNullable<Parameters<typeof createGateway>[0]>["engines"],
  backends: NonNullable<Parameters<typeof createGateway>[0]>["backends"] = [],
): Promise<Gateway> {
  return await createGateway({
    logger: QUIET,
    loadWaitMs: 0,
    backends,
    management: {
      home: dir,
      portCandidates: () => [],
      supervisor: {
        command: standIn(join(dir, "ready")),
        pollIntervalMs: 20,
        stopTimeoutMs: 2000,
      },
    },
    engines,
  });
}

function call(gw: Gateway, path: string, body?: unknown): Promise<Response> {
  const init = body === undefined ? {} : {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  };
  return gw.handler(new Request(`http://127.0.0.1:8000${path}`, init), {
    remoteAddr: LOOPBACK,
    completed: Promise.resolve(),
  });
}

const rerank = (model: string) => ({ model, query: "q", documents: ["a"] });

Deno.test("gateway: a rerank request while the default reranker loads gets 503 model_loading, as chat with a default model does", async () => {
  const dir = await Deno.makeTempDir();
  const gw = await gatewayWith(dir, [
    { id: "embedding", model: "demo/embed", kind: "embedding", rerank: {}, persist: false },
    { id: "chat", kind: "chat", persist: false },
  ]);
  try {
    for (const path of ["/v1/rerank", "/rerank"]) {
      const loading = await call(gw, path, rerank("Xenova/ms-marco-MiniLM-L-6-v2"));
      assertEquals(loading.status, 503, path);
      const body = await loading.json();
      assertEquals(body.error.code, "model_loading");
      assertEquals(body.error.type, "service_unavailable_error");
      assertMatch(body.error.message, /default reranker of an engine still loading/);
      assert(Number(loading.headers.get("retry-after")) >= 1);
    }
    // The chat engine loads its default model: any chat model may be it.
    const chat = await call(gw, "/v1/chat/completions", {
      model: "some/chat",
      messages: [{ role: "user", content: "hi" }],
    });
    assertEquals([chat.status, (await chat.json()).error.code], [503, "model_loading"]);
    // The embedding model was named: another embedding model is not it.
    const embed = await call(gw, "/v1/embeddings", { model: "other/embed", input: "a" });
    assertEquals([embed.status, (await embed.json()).error.code], [404, "model_not_found"]);

    await Deno.writeTextFile(join(dir, "ready"), "");
    await gw.manager!.whenReady("embedding", { timeoutMs: 20_000 });
    await gw.manager!.whenReady("chat", { timeoutMs: 20_000 });
    const ok = await call(gw, "/v1/rerank", rerank("demo/rerank"));
    assertEquals(ok.status, 200);
    await ok.body?.cancel();
    // Now its id is known: another model is a 404.
    const unknown = await call(gw, "/v1/rerank", rerank("Xenova/ms-marco-MiniLM-L-6-v2"));
    assertEquals([unknown.status, (await unknown.json()).error.code], [404, "model_not_found"]);
  } finally {
    await gw.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("gateway: a named reranker loading makes no other rerank model wait", async () => {
  const dir = await Deno.makeTempDir();
  const gw = await gatewayWith(dir, [{
    id: "embedding",
    model: "demo/embed",
    kind: "embedding",
    rerank: { model: "demo/rerank" },
    persist: false,
  }]);
  try {
    const named = await call(gw, "/v1/rerank", rerank("demo/rerank"));
    assertEquals([named.status, (await named.json()).error.code], [503, "model_loading"]);
    const other = await call(gw, "/v1/rerank", rerank("other/rerank"));
    assertEquals([other.status, (await other.json()).error.code], [404, "model_not_found"]);
  } finally {
    await gw.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("gateway: /health/ready, the dashboard's ready, the ready gauge and the status agree while a started engine loads", async () => {
  const dir = await Deno.makeTempDir();
  const fake = new FakeEngine("configured");
  const url = fake.serve();
  const gw = await gatewayWith(
    dir,
    [{ id: "late", model: "demo/embed", kind: "embedding", persist: false }],
    [{ id: "configured", baseUrl: url, kind: "llm", models: ["m"] }],
  );
  const states = async () => {
    const ready = await call(gw, "/health/ready");
    const dashboard = await (await call(gw, "/v1/management/dashboard")).json();
    const metrics = await (await call(gw, "/metrics")).text();
    const gauge = metrics.match(/^svc_gateway_ready (\d+)/m)?.[1];
    await ready.body?.cancel();
    return [ready.status, dashboard.ready, gauge, gw.manager!.status().ready];
  };
  try {
    await gw.checker.checkAll();
    assertEquals(gw.dispatcher.backend("configured")?.health, "healthy");
    // A backend is healthy, but the engine the gateway started is loading: not ready anywhere.
    assertEquals(await states(), [503, false, "0", false]);
    const body = await (await call(gw, "/health/ready")).json();
    assertEquals([body.error.code, body.loading], ["not_ready", ["late"]]);

    await Deno.writeTextFile(join(dir, "ready"), "");
    await gw.manager!.whenReady("late", { timeoutMs: 20_000 });
    assertEquals(await states(), [200, true, "1", true]);
  } finally {
    await gw.close();
    await fake.close();
    await Deno.remove(dir, { recursive: true });
  }
});

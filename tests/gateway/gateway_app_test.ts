// The gateway app end to end: the official `openai` package against a served gateway in front of
// real demo-model engines (one over a socket, one in-process), plus fakes for the edge cases.
import OpenAI from "openai";
import { assert, assertEquals, assertMatch, assertRejects } from "../_assert.ts";
import { setupLogger } from "../../src/core/logging.ts";
import { startGateway } from "../../src/gateway/gateway_server.ts";
import { HandlerTransport } from "../../src/gateway/transport.ts";
import { createEngineApp } from "../../src/server/engine_app.ts";
import type { HttpLogger } from "../../src/http/logger.ts";
import { serveApp } from "../../src/http/serve.ts";
import { demoChatEngine, demoEmbeddingEngine, TEST_MODEL_CACHE } from "../_helpers/demo_engines.ts";
import { createEngine } from "../../src/engine/create_engine.ts";
import { FakeEngine, until } from "./_fake_backend.ts";

setupLogger("error");
const QUIET: HttpLogger = { error: () => {}, warn: () => {} };
const GW_KEY = "gw-secret-key-123";
const ENGINE_KEY = "engine-secret-key-456";

Deno.test("gateway: chat, stream, completions, embeddings and models through the openai SDK", async () => {
  const chatEngine = await demoChatEngine();
  const embedEngine = await demoEmbeddingEngine();
  const engineServer = serveApp(
    createEngineApp({ engines: [chatEngine], apiKey: ENGINE_KEY, logger: QUIET }),
    { port: 0, logger: QUIET },
  );
  const gw = await startGateway({ apiKey: GW_KEY, logger: QUIET });
  try {
    gw.gateway.dispatcher.addBackend({
      id: "chat-socket",
      baseUrl: `${engineServer.url}/v1`,
      kind: "llm",
      models: ["demo/chat"],
      aliases: { "my-chat": "demo/chat" },
      apiKey: ENGINE_KEY,
    });
    gw.gateway.dispatcher.addBackend({
      id: "embed-inproc",
      baseUrl: "http://in-process/v1",
      kind: "embedding",
      models: ["demo/embed"],
    }, { transport: new HandlerTransport(createEngineApp({ engines: [embedEngine] })) });
    await gw.gateway.checker.checkAll();
    const client = new OpenAI({ baseURL: gw.baseUrl, apiKey: GW_KEY, maxRetries: 0 });
    const messages = [{ role: "user" as const, content: "Hello there" }];

    const chat = await client.chat.completions.create({
      model: "my-chat",
      messages,
      max_tokens: 6,
      temperature: 0,
    });
    assertEquals(chat.object, "chat.completion");
    assertEquals(chat.model, "demo/chat");
    assert(chat.usage!.prompt_tokens > 0);

    const stream = await client.chat.completions.create({
      model: "demo/chat",
      messages,
      max_tokens: 6,
      temperature: 0,
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = "";
    let chunks = 0;
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      chunks++;
      if (chunk.usage) usage = chunk.usage;
      text += chunk.choices[0]?.delta.content ?? "";
    }
    assertEquals(
      text,
      chat.choices[0].message.content,
      "the relayed stream equals the JSON answer",
    );
    assert(chunks >= 3, `chunks relayed one by one (${chunks})`);
    assertEquals(usage?.completion_tokens, chat.usage!.completion_tokens);

    const completion = await client.completions.create({
      model: "demo/chat",
      prompt: "Once upon a time",
      max_tokens: 4,
    });
    assertEquals(completion.object, "text_completion");

    const floats = await client.embeddings.create({
      model: "demo/embed",
      input: ["one", "two words"],
      encoding_format: "float",
    });
    const base64 = await client.embeddings.create({ model: "demo/embed", input: ["one"] });
    assertEquals(floats.data.length, 2);
    assertEquals(base64.data[0].embedding.length, floats.data[0].embedding.length);

    const models = await client.models.list();
    const byId = new Map(models.data.map((m) => [m.id, m as unknown as Record<string, unknown>]));
    assertEquals(byId.get("demo/chat")?.kind, "chat");
    assertEquals(byId.get("my-chat")?.backends, ["chat-socket"]);
    assertEquals(byId.get("demo/embed")?.kind, "embedding");
    // A backend added by hand: created when it was added (seconds since the epoch).
    const created = byId.get("demo/chat")?.created as number;
    assert(created > 1_700_000_000 && created <= Date.now() / 1000, String(created));
    assertEquals((await client.models.retrieve("demo/embed")).id, "demo/embed");
    await assertRejects(() => client.models.retrieve("nope/model"), OpenAI.NotFoundError);

    const missing = await assertRejects(
      () => client.chat.completions.create({ model: "nope/model", messages }),
      OpenAI.NotFoundError,
    );
    assertMatch(missing.message, /nope\/model/);
    await assertRejects(
      () => client.embeddings.create({ model: "demo/embed", input: [] }),
      OpenAI.BadRequestError,
    );

    const metrics = await (await fetch(`${gw.url}/metrics`, {
      headers: { authorization: `Bearer ${GW_KEY}` },
    })).text();
    assertMatch(metrics, /svc_gateway_backend_requests_total\{backend="chat-socket"\} [3-9]/);
    assertMatch(
      metrics,
      /svc_gateway_backend_circuit_state\{backend="embed-inproc",state="closed"\} 1/,
    );
    assertMatch(
      metrics,
      /svc_gateway_backend_request_duration_seconds_count\{backend="chat-socket"\}/,
    );
    assertMatch(metrics, /svc_gateway_queue_length\{pool="/);
    assertMatch(metrics, /svc_gateway_http_requests_total\{route="\/v1\/chat\/completions"/);
    assert(!metrics.includes(ENGINE_KEY) && !metrics.includes(GW_KEY));
  } finally {
    await gw.stop();
    await engineServer.shutdown();
    await chatEngine.dispose();
    await embedEngine.dispose();
  }
});

Deno.test("gateway: liveness always, readiness 503 until a backend passed its health check", async () => {
  const fake = new FakeEngine("a");
  const url = fake.serve();
  const gw = await startGateway({ logger: QUIET, health: { intervalMs: 60_000 } });
  try {
    assertEquals((await getJson(`${gw.url}/health`)).status, 200);
    const before = await fetch(`${gw.url}/health/ready`);
    assertEquals(before.status, 503);
    assertEquals(before.headers.get("retry-after"), "1");
    assertEquals((await before.json()).error.code, "not_ready");
    gw.gateway.dispatcher.addBackend({ id: "a", baseUrl: url, kind: "llm", models: ["m"] });
    assertEquals((await getJson(`${gw.url}/health/ready`)).status, 503, "unknown is not ready");
    await gw.gateway.checker.checkAll();
    const after = await getJson(`${gw.url}/health/ready`);
    assertEquals(after.status, 200);
    assertEquals((after.body as { status: string }).status, "ready");
  } finally {
    await gw.stop();
    await fake.close();
  }
});

Deno.test("gateway: only the envelope is checked; the rest of a body reaches the backend untouched", async () => {
  const fake = new FakeEngine("a");
  const url = fake.serve();
  const gw = await startGateway({
    logger: QUIET,
    backends: [{ id: "a", baseUrl: url, kind: "llm", models: ["m"] }],
  });
  const post = (path: string, body: unknown) =>
    fetch(`${gw.url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: typeof body === "string" ? body : JSON.stringify(body),
    });
  try {
    // What the gateway routes on: a JSON object with a model, and a boolean stream.
    const refused: [string, unknown, string | undefined][] = [
      ["/v1/chat/completions", { messages: [] }, "model"],
      ["/v1/chat/completions", { model: 42, messages: [] }, "model"],
      ["/v1/completions", { model: "m", prompt: "x", stream: "yes" }, "stream"],
      ["/v1/embeddings", "not json", undefined],
      ["/v1/embeddings", ["m"], undefined],
    ];
    for (const [path, body, param] of refused) {
      const res = await post(path, body);
      assertEquals(res.status, 400, `${path} ${JSON.stringify(body)}`);
      const { error } = await res.json();
      assertEquals(error.type, "invalid_request_error");
      assertEquals(error.param ?? undefined, param);
    }
    assertEquals(fake.seen.length, 0);
    // Fields other backends take (vLLM's larger n and min_p, an image part) go through as sent.
    const accepted = {
      model: "m",
      messages: [{
        role: "user",
        content: [{ type: "text", text: "x" }, {
          type: "image_url",
          image_url: { url: "data:," },
        }],
      }],
      n: 200,
      min_p: 0.1,
    };
    const res = await post("/v1/chat/completions", accepted);
    assertEquals(res.status, 200);
    await res.body?.cancel();
    assertEquals(fake.seen.length, 1);
    assertEquals(fake.seen[0].body, accepted);
  } finally {
    await gw.stop();
    await fake.close();
  }
});

Deno.test("gateway: backend keys go upstream only, never back to clients", async () => {
  const echoKey = async (req: Request): Promise<Response> => {
    const url = new URL(req.url);
    const auth = req.headers.get("authorization") ?? "";
    if (url.pathname === "/health") return Response.json({ status: "ok" });
    await req.body?.cancel();
    const status = url.pathname.endsWith("/embeddings") ? 400 : 500;
    return Response.json(
      { error: { message: `bad request with ${auth}`, type: "x", param: null, code: null } },
      { status, headers: { "x-upstream-auth": auth, "set-cookie": "s=1" } },
    );
  };
  const upstream = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen: () => {} }, echoKey);
  const base = `http://127.0.0.1:${upstream.addr.port}/v1`;
  const gw = await startGateway({
    logger: QUIET,
    apiKey: GW_KEY,
    dispatcher: { maxRetries: 0 },
    backends: [
      { id: "echo-chat", baseUrl: base, kind: "llm", models: ["m"], apiKey: ENGINE_KEY },
      { id: "echo-embed", baseUrl: base, kind: "embedding", models: ["e"], apiKey: ENGINE_KEY },
    ],
  });
  try {
    const headers = { authorization: `Bearer ${GW_KEY}`, "content-type": "application/json" };
    const passed = await fetch(`${gw.url}/v1/embeddings`, {
      method: "POST",
      headers,
      body: JSON.stringify({ model: "e", input: "x" }),
    });
    const passedText = await passed.text();
    assertEquals(passed.status, 400, "the backend's 400 is passed through");
    assertMatch(passedText, /bad request with Bearer \[REDACTED\]/);
    assertEquals(passed.headers.get("x-upstream-auth"), null);
    assertEquals(passed.headers.get("set-cookie"), null);
    assertEquals(passed.headers.get("x-svc-backend"), "echo-embed");

    const failed = await fetch(`${gw.url}/v1/chat/completions`, {
      method: "POST",
      headers,
      body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }] }),
    });
    const failedText = await failed.text();
    assertEquals(failed.status, 502);
    for (const text of [passedText, failedText]) {
      assert(!text.includes(ENGINE_KEY), text);
      assert(!text.includes(GW_KEY), text);
    }
  } finally {
    await gw.stop();
    await upstream.shutdown();
  }
});

Deno.test("gateway: a client that disconnects cancels the upstream request", async () => {
  const fake = new FakeEngine("slow", { delayMs: 5_000, chunks: 50, chunkDelayMs: 100 });
  const url = fake.serve();
  const gw = await startGateway({
    logger: QUIET,
    backends: [{ id: "slow", baseUrl: url, kind: "llm", models: ["m"] }],
  });
  try {
    const body = { model: "m", messages: [{ role: "user", content: "hi" }] };
    const ctrl = new AbortController();
    const pending = fetch(`${gw.url}/v1/chat/completions`, {
      method: "POST",
      body: JSON.stringify(body),
      signal: ctrl.signal,
    }).catch((err) => err);
    await until(() => fake.inFlight === 1);
    ctrl.abort();
    assert((await pending) instanceof Error);
    await until(() => fake.aborted === 1 && fake.inFlight === 0);

    fake.behavior = { chunks: 50, chunkDelayMs: 50 };
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: "POST",
      body: JSON.stringify({ ...body, stream: true }),
    });
    const reader = res.body!.getReader();
    await reader.read();
    await reader.cancel();
    await until(() => fake.aborted === 2 && fake.inFlight === 0);
    await until(() => gw.gateway.dispatcher.backend("slow")!.inFlight === 0);
  } finally {
    await gw.stop();
    await fake.close();
  }
});

async function getJson(url: string): Promise<{ status: number; body: unknown }> {
  const res = await fetch(url);
  return { status: res.status, body: await res.json() };
}

Deno.test("gateway: a model asked of the other kind's endpoint is a 400 invalid_model_kind, as from an engine", async () => {
  const chatEngine = await demoChatEngine();
  const embedEngine = await demoEmbeddingEngine();
  const reranker = await createEngine("demo/rerank", { cacheDir: TEST_MODEL_CACHE, device: "cpu" });
  const gw = await startGateway({ logger: QUIET });
  try {
    gw.gateway.dispatcher.addBackend({
      id: "chat",
      baseUrl: "http://chat.in-process/v1",
      kind: "llm",
      models: ["demo/chat"],
    }, { transport: new HandlerTransport(createEngineApp({ engines: [chatEngine] })) });
    gw.gateway.dispatcher.addBackend({
      id: "embed",
      baseUrl: "http://embed.in-process/v1",
      kind: "embedding",
      models: ["demo/embed", "demo/rerank"],
    }, {
      transport: new HandlerTransport(createEngineApp({ engines: [embedEngine, reranker] })),
    });
    await gw.gateway.checker.checkAll();
    const post = async (path: string, body: Record<string, unknown>) => {
      const res = await fetch(`${gw.baseUrl}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      return { status: res.status, error: (await res.json()).error };
    };
    const messages = [{ role: "user", content: "hi" }];
    const cases = [
      ["/embeddings", { model: "demo/chat", input: "x" }, /a chat model .*\/v1\/chat\/completions/],
      ["/rerank", { model: "demo/chat", query: "q", documents: ["d"] }, /a chat model/],
      [
        "/chat/completions",
        { model: "demo/embed", messages },
        /an embedding model .*\/v1\/embeddings/,
      ],
      ["/chat/completions", { model: "demo/rerank", messages }, /a reranker .*\/v1\/rerank/],
      ["/embeddings", { model: "demo/rerank", input: "x" }, /a reranker/],
    ] as const;
    for (const [path, body, message] of cases) {
      const { status, error } = await post(path, body);
      assertEquals([status, error.code, error.param], [400, "invalid_model_kind", "model"], path);
      assertMatch(error.message, message);
    }
    assertEquals((await post("/embeddings", { model: "no/such", input: "x" })).status, 404);
  } finally {
    await gw.stop();
    await Promise.all([chatEngine, embedEngine, reranker].map((e) => e.dispose()));
  }
});

import { deriveChoiceSeed } from "../../src/protocol/sampling.ts";
import { decodeFloat32Base64 } from "../../src/protocol/embedding_response.ts";
import { createEngineApp } from "../../src/server/engine_app.ts";
import { FakeEngine, fakeVector } from "../_helpers/fake_engine.ts";
import { get, post, sseEvents } from "../_helpers/http.ts";
import { assert, assertAlmostEquals, assertEquals, assertMatch } from "../_assert.ts";
import { type Json, QUIET, setup, USER } from "./_engine_app_setup.ts";

Deno.test("models: unknown model is 404 model_not_found, naming the models served", async () => {
  const { app } = setup();
  const unknown = await post(app, "/v1/chat/completions", { model: "nope", messages: USER });
  assertEquals(unknown.status, 404);
  const err: Json = (await unknown.json()).error;
  assertEquals([err.code, err.param, err.type], ["model_not_found", "model", "not_found_error"]);
  assertMatch(err.message, /fake\/chat/);
});

Deno.test("models: a model of the wrong kind is 400 invalid_model_kind on model, before its engine runs", async () => {
  const chat = new FakeEngine();
  const embed = new FakeEngine({ kind: "embedding" });
  const rerank = new FakeEngine({ kind: "rerank" });
  const app = createEngineApp({ engines: [chat, embed, rerank], logger: QUIET });
  const cases: [string, Json, RegExp][] = [
    ["/v1/embeddings", { model: "fake/chat", input: "x" }, /is a chat model .*an embedding model/],
    [
      "/v1/rerank",
      { model: "fake/chat", query: "q", documents: ["d"] },
      /is a chat model .*\/v1\/chat\/completions.*pick a reranker/,
    ],
    [
      "/v1/chat/completions",
      { model: "fake/embed", messages: USER },
      /is an embedding model .*\/v1\/embeddings.*pick a chat model/,
    ],
    ["/v1/completions", { model: "fake/embed", prompt: "x" }, /is an embedding model/],
    ["/v1/embeddings", { model: "fake/rerank", input: "x" }, /is a reranker .*\/v1\/rerank/],
    ["/v1/chat/completions", { model: "fake/rerank", messages: USER }, /is a reranker/],
  ];
  for (const [path, body, message] of cases) {
    const res = await post(app, path, body);
    assertEquals(res.status, 400, `${path} ${body.model}`);
    const err: Json = (await res.json()).error;
    assertEquals([err.code, err.param, err.type], [
      "invalid_model_kind",
      "model",
      "invalid_request_error",
    ]);
    assertMatch(err.message, message);
  }
  // The registry refused them: no engine was called as another kind.
  assertEquals([chat.embedCalls.length, embed.generateCalls.length], [0, 0]);
  // Each serves its own endpoint.
  const ranked = await post(app, "/v1/rerank", {
    model: "fake/rerank",
    query: "a",
    documents: ["a"],
  });
  assertEquals(ranked.status, 200);
  await ranked.body?.cancel();
});

Deno.test("models: list, retrieve by id with or without an escaped slash, and aliases", async () => {
  const chat = new FakeEngine({ id: "demo/chat" });
  const app = createEngineApp({
    engines: new Map([["demo/chat", chat], ["gpt-4o-mini", chat]]),
    logger: QUIET,
  });
  const list: Json = await (await get(app, "/v1/models")).json();
  assertEquals(list.object, "list");
  assertEquals(list.data.map((m: Json) => [m.id, m.object, m.owned_by, m.kind]), [
    ["demo/chat", "model", "tests", "chat"],
    ["gpt-4o-mini", "model", "tests", "chat"],
  ]);
  assertEquals((await (await get(app, "/v1/models/demo/chat")).json()).id, "demo/chat");
  assertEquals((await (await get(app, "/v1/models/demo%2Fchat")).json()).id, "demo/chat");
  const missing = await get(app, "/v1/models/none");
  assertEquals(missing.status, 404);
  assertEquals((await missing.json()).error.code, "model_not_found");
  const viaAlias: Json = await (await post(app, "/v1/chat/completions", {
    model: "gpt-4o-mini",
    messages: USER,
  })).json();
  assertEquals(viaAlias.model, "demo/chat");
});

Deno.test("completions: one choice per prompt times n, usage summed over prompts", async () => {
  const { app, chat } = setup();
  const body: Json = await (await post(app, "/v1/completions", {
    model: "fake/chat",
    prompt: ["a b", "c d e"],
    n: 2,
    seed: 5,
  })).json();
  assertEquals(body.object, "text_completion");
  assertMatch(body.id, /^cmpl-/);
  assertEquals(body.choices.map((c: Json) => c.index), [0, 1, 2, 3]);
  assertEquals(chat.generateCalls.map((c) => c.input), [
    { prompt: "a b" },
    { prompt: "a b" },
    { prompt: "c d e" },
    { prompt: "c d e" },
  ]);
  assertEquals(chat.generateCalls.map((c) => c.params.seed), [
    5,
    deriveChoiceSeed(5, 1),
    5,
    deriveChoiceSeed(5, 1),
  ]);
  assertEquals(chat.generateCalls[0].params.maxTokens, 16);
  assertEquals(body.usage, {
    prompt_tokens: 5,
    completion_tokens: 32,
    total_tokens: 37,
    prompt_tokens_details: { cached_tokens: 0 },
  });
  assertEquals(
    body.choices[2].text,
    chat.tokensFor({ prompt: "c d e" }, { seed: 5 }, 8).join(""),
  );
});

Deno.test("completions: token-id prompts, legacy logprobs and streaming with usage", async () => {
  const { app, chat } = setup();
  const body: Json = await (await post(app, "/v1/completions", {
    model: "fake/chat",
    prompt: [1, 2, 3],
    logprobs: 1,
    max_tokens: 2,
  })).json();
  assertEquals(chat.generateCalls[0].input, { tokenIds: [1, 2, 3] });
  assertEquals(body.choices[0].logprobs.tokens.join(""), body.choices[0].text);
  assertEquals(body.choices[0].logprobs.top_logprobs[0], { alpha: -0.5 });
  assertEquals(body.choices[0].finish_reason, "length");
  const events: Json[] = await sseEvents(
    await post(app, "/v1/completions", {
      model: "fake/chat",
      prompt: "x y",
      stream: true,
      stream_options: { include_usage: true },
    }),
  );
  assertEquals(events.at(-1), "[DONE]");
  const chunks = events.slice(0, -1);
  assert(chunks.every((c) => c.object === "text_completion"));
  assertEquals(chunks.at(-1).usage, {
    prompt_tokens: 2,
    completion_tokens: 8,
    total_tokens: 10,
    prompt_tokens_details: { cached_tokens: 0 },
  });
  assertEquals(chunks.at(-2).choices[0].finish_reason, "stop");
  assertEquals(
    chunks.slice(0, -2).map((c) => c.choices[0].text).join(""),
    chat.tokensFor({ prompt: "x y" }, {}, 8).join(""),
  );
});

Deno.test("completions: suffix, and echo with logprobs on an engine that cannot score prompts, are refused with 400", async () => {
  const { app } = setup();
  for (const extra of [{ echo: true, logprobs: 1 }, { suffix: "end" }]) {
    const res = await post(app, "/v1/completions", { model: "fake/chat", prompt: "x", ...extra });
    assertEquals(res.status, 400);
    assertEquals((await res.json()).error.param, Object.keys(extra)[0]);
  }
});

Deno.test("embeddings: float and base64 vectors match the engine's, in order", async () => {
  const { app, embed } = setup();
  const floats: Json = await (await post(app, "/v1/embeddings", {
    model: "fake/embed",
    input: ["one", "two words"],
  })).json();
  assertEquals(floats.object, "list");
  assertEquals(floats.usage, { prompt_tokens: 3, total_tokens: 3 });
  assertEquals(floats.data.map((d: Json) => d.index), [0, 1]);
  assertEquals(floats.data[1].embedding, Array.from(fakeVector("two words", 8)));
  const b64: Json = await (await post(app, "/v1/embeddings", {
    model: "fake/embed",
    input: [[5, 6], [7]],
    encoding_format: "base64",
    dimensions: 4,
  })).json();
  assertEquals(typeof b64.data[0].embedding, "string");
  assertEquals(decodeFloat32Base64(b64.data[0].embedding), fakeVector([5, 6], 4, 8));
  assertEquals(embed.embedCalls[1].inputs, [[5, 6], [7]]);
  assertEquals(embed.embedCalls[1].options?.dimensions, 4);
  const norm = Math.hypot(...decodeFloat32Base64(b64.data[1].embedding));
  assertAlmostEquals(norm, 1, 1e-6);
});

Deno.test("embeddings: too-long inputs are 400 naming the index unless truncation is asked", async () => {
  const { app, embed } = setup();
  const long = Array(20).fill("w").join(" ");
  const res = await post(app, "/v1/embeddings", { model: "fake/embed", input: ["ok", long] });
  assertEquals(res.status, 400);
  const err: Json = (await res.json()).error;
  assertEquals([err.code, err.param], ["context_length_exceeded", "input.1"]);
  const truncated = await post(app, "/v1/embeddings", {
    model: "fake/embed",
    input: ["ok", long],
    truncate_prompt_tokens: -1,
  });
  assertEquals(truncated.status, 200);
  assertEquals((await truncated.json()).usage.prompt_tokens, 17);
  assertEquals(embed.embedCalls.at(-1)?.options?.truncate, true);
  const big = await post(app, "/v1/embeddings", { model: "fake/embed", input: "x", dimensions: 9 });
  assertEquals(big.status, 400);
  assertEquals((await big.json()).error.param, "dimensions");
});

Deno.test("health: 200 when ready, 503 with Retry-After while loading, 503 on error", async () => {
  const { app, chat, embed } = setup();
  const ok = await get(app, "/health");
  assertEquals(ok.status, 200);
  assertEquals((await ok.json()).status, "ok");
  chat.setState("loading");
  const loading = await get(app, "/health");
  assertEquals(loading.status, 503);
  assertEquals(loading.headers.get("retry-after"), "5");
  const body: Json = await loading.json();
  assertEquals(body.status, "loading");
  assertEquals(body.error.type, "service_unavailable_error");
  const req = await post(app, "/v1/chat/completions", { model: "fake/chat", messages: USER });
  assertEquals(req.status, 503);
  assertEquals(req.headers.get("retry-after"), "5");
  assertEquals((await req.json()).error.code, "model_loading");
  chat.setState("ready");
  embed.setState("error", "weights missing");
  const failed = await get(app, "/health");
  assertEquals(failed.status, 503);
  assertMatch((await failed.json()).error.message, /weights missing/);
  const none = createEngineApp({ engines: [], logger: QUIET });
  const empty = await get(none, "/health");
  assertEquals(empty.status, 503);
  await empty.body?.cancel();
});

Deno.test("metrics: requests, tokens, queue depth and batch sizes in Prometheus text", async () => {
  const { app, chat } = setup();
  chat.queueDepth = 3;
  chat.batchSizes.set(1, 5).set(4, 2);
  await (await post(app, "/v1/chat/completions", { model: "fake/chat", messages: USER })).text();
  await (await post(app, "/v1/embeddings", { model: "fake/embed", input: "a b" })).text();
  const res = await get(app, "/metrics");
  assertEquals(res.headers.get("content-type"), "text/plain; version=0.0.4; charset=utf-8");
  const text = await res.text();
  const lines = [
    'svc_http_requests_total{route="/v1/chat/completions",method="POST",status="200"} 1',
    'svc_prompt_tokens_total{model="fake/chat"} 3',
    'svc_generation_tokens_total{model="fake/chat"} 8',
    'svc_prompt_tokens_total{model="fake/embed"} 2',
    'svc_engine_queue_depth{model="fake/chat"} 3',
    'svc_engine_ready{model="fake/chat"} 1',
    'svc_engine_batch_size_bucket{model="fake/chat",le="2"} 5',
    'svc_engine_batch_size_bucket{model="fake/chat",le="4"} 7',
    'svc_engine_batch_size_sum{model="fake/chat"} 13',
  ];
  for (const line of lines) assert(text.includes(line), `missing ${line} in\n${text}`);
});

Deno.test("auth: every endpoint but /health needs the key", async () => {
  const { app } = setup({}, { apiKey: "k-123" });
  assertEquals((await get(app, "/health")).status, 200);
  for (
    const [method, path] of [
      ["POST", "/v1/chat/completions"],
      ["POST", "/v1/completions"],
      ["POST", "/v1/embeddings"],
      ["GET", "/v1/models"],
      ["GET", "/v1/models/fake/chat"],
      ["GET", "/metrics"],
    ]
  ) {
    const res = await app(
      new Request(`http://localhost${path}`, {
        method,
        body: method === "POST" ? "{}" : undefined,
      }),
    );
    assertEquals(res.status, 401, path);
    assertEquals((await res.json()).error.type, "authentication_error");
  }
  const ok = await get(app, "/v1/models", { authorization: "Bearer k-123" });
  assertEquals(ok.status, 200);
  await ok.body?.cancel();
});

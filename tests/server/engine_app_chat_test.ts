import { RateLimitError } from "../../src/core/errors.ts";
import { deriveChoiceSeed } from "../../src/protocol/sampling.ts";
import { post, sseEvents } from "../_helpers/http.ts";
import { waitFor } from "../_helpers/wait.ts";
import { assert, assertEquals, assertMatch } from "../_assert.ts";
import { type Json, setup, USER } from "./_engine_app_setup.ts";

Deno.test("chat: answers a chat.completion with the engine's text and usage", async () => {
  const { app, chat } = setup();
  const res = await post(app, "/v1/chat/completions", { model: "fake/chat", messages: USER });
  assertEquals(res.status, 200);
  assertEquals(res.headers.get("content-type"), "application/json");
  const body: Json = await res.json();
  const expected = chat.tokensFor(chat.generateCalls[0].input, {}, 8).join("");
  assertEquals(body.object, "chat.completion");
  assertMatch(body.id, /^chatcmpl-/);
  assertEquals(body.model, "fake/chat");
  assertEquals(body.choices, [{
    index: 0,
    message: { role: "assistant", content: expected, refusal: null },
    logprobs: null,
    finish_reason: "stop",
  }]);
  assertEquals(body.usage, {
    prompt_tokens: 3,
    completion_tokens: 8,
    total_tokens: 11,
    prompt_tokens_details: { cached_tokens: 0 },
  });
  assertEquals(chat.generateCalls[0].input, {
    messages: [{ role: "user", content: "hello there" }],
  });
  assertEquals(chat.generateCalls[0].params, {});
});

Deno.test("chat: passes every sampling parameter and reports finish_reason length", async () => {
  const { app, chat } = setup();
  const res = await post(app, "/v1/chat/completions", {
    model: "fake/chat",
    messages: USER,
    temperature: 0.3,
    top_p: 0.8,
    top_k: 5,
    seed: 9,
    max_completion_tokens: 3,
    stop: ["zzz"],
    presence_penalty: 0.1,
    frequency_penalty: 0.2,
    repetition_penalty: 1.3,
    user: "me",
  });
  const body: Json = await res.json();
  assertEquals(body.choices[0].finish_reason, "length");
  assertEquals(body.usage.completion_tokens, 3);
  assertEquals(chat.generateCalls[0].params, {
    temperature: 0.3,
    topP: 0.8,
    topK: 5,
    seed: 9,
    maxTokens: 3,
    stop: ["zzz"],
    presencePenalty: 0.1,
    frequencyPenalty: 0.2,
    repetitionPenalty: 1.3,
  });
  assert(chat.generateCalls[0].signal instanceof AbortSignal);
});

Deno.test("chat: n choices get derived seeds and prompt tokens are counted once", async () => {
  const { app, chat } = setup();
  const res = await post(app, "/v1/chat/completions", {
    model: "fake/chat",
    messages: USER,
    n: 3,
    seed: 42,
  });
  const body: Json = await res.json();
  assertEquals(body.choices.map((c: Json) => c.index), [0, 1, 2]);
  assertEquals(
    chat.generateCalls.map((c) => c.params.seed),
    [42, deriveChoiceSeed(42, 1), deriveChoiceSeed(42, 2)],
  );
  assertEquals(body.usage, {
    prompt_tokens: 3,
    completion_tokens: 24,
    total_tokens: 27,
    prompt_tokens_details: { cached_tokens: 0 },
  });
  assert(body.choices[0].message.content !== body.choices[1].message.content);
  // Same seed, same answer; choice 0 equals an n=1 request.
  const again: Json = await (await post(app, "/v1/chat/completions", {
    model: "fake/chat",
    messages: USER,
    seed: 42,
  })).json();
  assertEquals(again.choices[0].message.content, body.choices[0].message.content);
});

Deno.test("chat: stop strings are never emitted, also across tokens", async () => {
  const { app, chat } = setup();
  const full = chat.tokensFor({ messages: [{ role: "user", content: "hello there" }] }, {}, 8)
    .join("");
  const stop = full.slice(full.indexOf(" ") - 2, full.indexOf(" ") + 3); // spans two tokens
  const body: Json = await (await post(app, "/v1/chat/completions", {
    model: "fake/chat",
    messages: USER,
    stop,
  })).json();
  assertEquals(body.choices[0].message.content, full.slice(0, full.indexOf(stop)));
  assertEquals(body.choices[0].finish_reason, "stop");
});

Deno.test("chat: logprobs and top_logprobs come back in OpenAI's format", async () => {
  const { app } = setup();
  const body: Json = await (await post(app, "/v1/chat/completions", {
    model: "fake/chat",
    messages: USER,
    max_tokens: 2,
    logprobs: true,
    top_logprobs: 2,
  })).json();
  const content = body.choices[0].logprobs.content;
  assertEquals(content.length, 2);
  assertEquals(content[0].logprob, -0.125);
  assertEquals(content[0].top_logprobs.length, 2);
  assertEquals(content[0].bytes, [...new TextEncoder().encode(content[0].token)]);
  assertEquals(content.map((c: Json) => c.token).join(""), body.choices[0].message.content);
});

Deno.test("chat stream: role chunk, deltas, finish chunk, then [DONE]", async () => {
  const { app, chat } = setup();
  const res = await post(app, "/v1/chat/completions", {
    model: "fake/chat",
    messages: USER,
    stream: true,
  });
  assertEquals(res.status, 200);
  assertMatch(res.headers.get("content-type")!, /^text\/event-stream/);
  const events: Json[] = await sseEvents(res);
  assertEquals(events.at(-1), "[DONE]");
  const chunks = events.slice(0, -1);
  assert(chunks.every((c) => c.object === "chat.completion.chunk" && c.id === chunks[0].id));
  assert(chunks.every((c) => !("usage" in c)));
  assertEquals(chunks[0].choices[0].delta, { role: "assistant", content: "" });
  const text = chunks.slice(1, -1).map((c) => c.choices[0].delta.content).join("");
  assertEquals(text, chat.tokensFor(chat.generateCalls[0].input, {}, 8).join(""));
  assertEquals(chunks.at(-1).choices[0], {
    index: 0,
    delta: {},
    logprobs: null,
    finish_reason: "stop",
  });
  assertEquals(chunks.slice(0, -1).map((c) => c.choices[0].finish_reason).filter(Boolean), []);
});

Deno.test("chat stream: include_usage adds usage null to chunks and a final usage chunk", async () => {
  const { app } = setup();
  const events: Json[] = await sseEvents(
    await post(app, "/v1/chat/completions", {
      model: "fake/chat",
      messages: USER,
      stream: true,
      max_tokens: 4,
      stream_options: { include_usage: true },
    }),
  );
  const chunks = events.slice(0, -1);
  const last = chunks.at(-1);
  assertEquals(last.choices, []);
  assertEquals(last.usage, {
    prompt_tokens: 3,
    completion_tokens: 4,
    total_tokens: 7,
    prompt_tokens_details: { cached_tokens: 0 },
  });
  assert(chunks.slice(0, -1).every((c) => c.usage === null));
  assertEquals(chunks.at(-2).choices[0].finish_reason, "length");
});

Deno.test("chat stream: n choices are interleaved and each is complete", async () => {
  const { app } = setup({ tokenDelayMs: 1 });
  const events: Json[] = await sseEvents(
    await post(app, "/v1/chat/completions", {
      model: "fake/chat",
      messages: USER,
      stream: true,
      n: 2,
      seed: 1,
    }),
  );
  const chunks = events.slice(0, -1);
  const byIndex = [0, 1].map((i) => chunks.filter((c) => c.choices[0].index === i));
  for (const own of byIndex) {
    assertEquals(own[0].choices[0].delta.role, "assistant");
    assertEquals(own.at(-1).choices[0].finish_reason, "stop");
    assertEquals(own.length, 10);
  }
  const order = chunks.map((c) => c.choices[0].index);
  assert(order.slice(2, 6).includes(0) && order.slice(2, 6).includes(1), `order ${order}`);
});

Deno.test("chat stream: an engine failure mid-stream ends with an error event, no [DONE]", async () => {
  const { app, metrics } = setup({
    failAfterTokens: { tokens: 2, error: new RateLimitError("engine queue overflow") },
  });
  const events: Json[] = await sseEvents(
    await post(app, "/v1/chat/completions", { model: "fake/chat", messages: USER, stream: true }),
  );
  assertEquals(events.length, 4);
  assertEquals(events.at(-1).error.type, "rate_limit_error");
  assertEquals(events.at(-1).error.message, "engine queue overflow");
  assertMatch(
    metrics.render(),
    /svc_http_errors_total\{route="\/v1\/chat\/completions",code="rate_limit_exceeded"\} 1/,
  );
});

Deno.test("chat stream: cancelling the response body aborts the generation", async () => {
  const { app, chat } = setup({ tokenDelayMs: 20, eosAfter: 1000, contextLength: 5000 });
  const res = await post(app, "/v1/chat/completions", {
    model: "fake/chat",
    messages: USER,
    stream: true,
  });
  const reader = res.body!.getReader();
  await reader.read(); // role chunk
  await reader.read(); // first token
  await reader.cancel();
  await waitFor(() => chat.aborted === 1, { what: "the fake engine to see the abort" });
  assertEquals(chat.running, 0);
});

Deno.test("chat: a client that goes away (request signal) aborts a non-streamed generation", async () => {
  const { app, chat } = setup({ tokenDelayMs: 20, eosAfter: 1000, contextLength: 5000 });
  const controller = new AbortController();
  const pending = post(app, "/v1/chat/completions", { model: "fake/chat", messages: USER }, {
    signal: controller.signal,
  });
  await waitFor(() => chat.running === 1);
  controller.abort();
  const res = await pending;
  assertEquals(res.status, 499);
  await res.body?.cancel();
  assertEquals(chat.aborted, 1);
});

Deno.test("chat: engine errors before streaming keep their status", async () => {
  const { app } = setup({ contextLength: 4 });
  const long = await post(app, "/v1/chat/completions", {
    model: "fake/chat",
    messages: [{ role: "user", content: "one two three four five" }],
    stream: true,
  });
  assertEquals(long.status, 400);
  const err: Json = (await long.json()).error;
  assertEquals(err.code, "context_length_exceeded");
  assertMatch(err.message, /6 tokens/);
  const busy = setup({ failGenerate: new RateLimitError("busy", { retryAfterSeconds: 3 }) });
  const res = await post(busy.app, "/v1/chat/completions", { model: "fake/chat", messages: USER });
  assertEquals(res.status, 429);
  assertEquals(res.headers.get("retry-after"), "3");
  await res.body?.cancel();
});

Deno.test("chat: an unexpected engine error is a logged 500 with a generic message", async () => {
  const lines: string[] = [];
  const { app } = setup({ failGenerate: new Error("onnx exploded at 0xdead") }, {
    logger: { error: (m, f) => lines.push(`${m} ${f?.error}`), warn: () => {} },
  });
  const res = await post(app, "/v1/chat/completions", { model: "fake/chat", messages: USER });
  assertEquals(res.status, 500);
  const text = await res.text();
  assert(!text.includes("0xdead"));
  assertMatch(lines[0], /onnx exploded/);
});

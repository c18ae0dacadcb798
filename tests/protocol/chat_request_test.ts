import { ValidationError } from "../../src/core/errors.ts";
import {
  chatSamplingParams,
  parseChatCompletionRequest,
  toChatJob,
  toChatMessages,
} from "../../src/protocol/chat_request.ts";
import { assertEquals, assertThrows } from "../_assert.ts";

const BASE = { model: "m", messages: [{ role: "user", content: "hi" }] };

function rejects(body: unknown, param: string | null, includes?: string): ValidationError {
  const err = assertThrows(() => parseChatCompletionRequest(body), ValidationError, includes);
  assertEquals(err.param, param);
  assertEquals(err.status, 400);
  return err;
}

Deno.test("parseChatCompletionRequest() accepts a minimal request and refuses fields it does not know", () => {
  assertEquals(parseChatCompletionRequest(BASE) as unknown, BASE);
  for (const field of ["foo", "guided_whatever", "logits_processors"]) {
    const err = rejects({ ...BASE, [field]: 1 }, field, `'${field}' is not supported`);
    assertEquals(err.code, "unknown_parameter");
  }
});

Deno.test("parseChatCompletionRequest() accepts every role and content as text parts", () => {
  const messages = [
    { role: "system", content: "s" },
    { role: "developer", content: "d" },
    { role: "user", content: [{ type: "text", text: "a" }, { type: "text", text: "b" }] },
    {
      role: "assistant",
      content: null,
      tool_calls: [{ id: "1", type: "function", function: { name: "f", arguments: "{}" } }],
    },
    { role: "tool", content: "r", tool_call_id: "1" },
    { role: "user", content: "u", name: "bob" },
  ];
  const req = parseChatCompletionRequest({ model: "m", messages });
  assertEquals(toChatMessages(req.messages), [
    { role: "system", content: "s" },
    { role: "developer", content: "d" },
    { role: "user", content: "a\nb" },
    { role: "assistant", content: "", toolCalls: [{ id: "1", name: "f", arguments: "{}" }] },
    { role: "tool", content: "r", toolCallId: "1" },
    { role: "user", content: "u", name: "bob" },
  ]);
});

Deno.test("an assistant message's refusal part is its text; other roles may not hold one", () => {
  const refusal = { type: "refusal", refusal: "I can't help with that." };
  const req = parseChatCompletionRequest({
    model: "m",
    messages: [
      { role: "user", content: "Do it." },
      { role: "assistant", content: [refusal], refusal: refusal.refusal },
    ],
  });
  assertEquals(toChatMessages(req.messages)[1], {
    role: "assistant",
    content: "I can't help with that.",
  });
  rejects(
    { model: "m", messages: [{ role: "user", content: [refusal] }] },
    "messages.0.content.0.type",
    "only an assistant message",
  );
});

Deno.test("parseChatCompletionRequest() names the field path of a bad message", () => {
  rejects(
    { model: "m", messages: [{ role: "user", content: "a" }, { role: "bot" }] },
    "messages.1.role",
  );
  rejects({ model: "m", messages: [{ role: "user", content: 5 }] }, "messages.0.content");
  rejects(
    {
      model: "m",
      messages: [{ role: "user", content: [{ type: "text", text: "a" }, { type: "image_url" }] }],
    },
    "messages.0.content.1.type",
    'only "text" content parts',
  );
  rejects(
    { model: "m", messages: [{ role: "user", content: [{ type: "text", text: 1 }] }] },
    "messages.0.content.0.text",
  );
  rejects({ model: "m", messages: [{ role: "user", content: null }] }, "messages.0.content");
  rejects({ model: "m", messages: [{ role: "user" }] }, "messages.0.content");
  rejects({ model: "m", messages: [] }, "messages");
  rejects({ model: "m", messages: "hi" }, "messages");
  // `model` may be left out (the engine server defaults it, as vLLM does), but not empty.
  assertEquals(parseChatCompletionRequest({ messages: BASE.messages }).model, undefined);
  rejects({ model: "", messages: BASE.messages }, "model");
  rejects([BASE], null, "must be a JSON object");
  rejects("text", null);
  rejects(null, null);
});

Deno.test("parseChatCompletionRequest() checks the range of every sampling parameter", () => {
  const bad: [string, unknown][] = [
    ["temperature", -0.1],
    ["temperature", 2.01],
    ["temperature", "1"],
    ["top_p", 1.5],
    ["top_p", -1],
    ["top_k", -2],
    ["top_k", 1.5],
    ["seed", 0.5],
    ["seed", 2 ** 60],
    ["max_tokens", 0],
    ["max_tokens", 1.5],
    ["max_completion_tokens", 0],
    ["n", 0],
    ["presence_penalty", -2.5],
    ["presence_penalty", 2.5],
    ["frequency_penalty", 3],
    ["repetition_penalty", 0],
    ["repetition_penalty", -1],
    ["logprobs", "yes"],
    ["top_logprobs", -1],
    ["stream", 1],
    ["user", 5],
    ["stop", 5],
  ];
  for (const [field, value] of bad) {
    const body = { ...BASE, logprobs: field === "logprobs" ? value : true, [field]: value };
    rejects(body, field);
  }
});

Deno.test("parseChatCompletionRequest() limits stop to 64 sequences (vLLM clients send more than 4)", () => {
  rejects({ ...BASE, stop: Array(65).fill("a") }, "stop", "at most 64 stop sequences");
  rejects({ ...BASE, stop: ["a", 1] }, "stop.1");
  const many = Array.from({ length: 64 }, (_, i) => `stop ${i}`);
  assertEquals(parseChatCompletionRequest({ ...BASE, stop: many }).stop, many);
});

Deno.test("parseChatCompletionRequest() requires logprobs for top_logprobs", () => {
  rejects({ ...BASE, top_logprobs: 2 }, "top_logprobs", "requires logprobs");
  rejects({ ...BASE, top_logprobs: 2, logprobs: false }, "top_logprobs");
  assertEquals(
    parseChatCompletionRequest({ ...BASE, top_logprobs: 2, logprobs: true }).top_logprobs,
    2,
  );
});

Deno.test("parseChatCompletionRequest() refuses min_tokens above the token limit in effect", () => {
  rejects({ ...BASE, min_tokens: 10, max_tokens: 4 }, "min_tokens", "at most the token limit (4)");
  rejects({ ...BASE, min_tokens: 10, max_tokens: 99, max_completion_tokens: 4 }, "min_tokens");
  assertEquals(parseChatCompletionRequest({ ...BASE, min_tokens: 4, max_tokens: 4 }).min_tokens, 4);
  assertEquals(parseChatCompletionRequest({ ...BASE, min_tokens: 40 }).min_tokens, 40);
});

Deno.test("parseChatCompletionRequest() allows stream_options only with stream", () => {
  rejects({ ...BASE, stream_options: { include_usage: true } }, "stream_options");
  rejects(
    { ...BASE, stream: true, stream_options: { include_usage: "y" } },
    "stream_options.include_usage",
  );
  const req = parseChatCompletionRequest({
    ...BASE,
    stream: true,
    stream_options: { include_usage: true },
  });
  assertEquals(req.stream_options, { include_usage: true });
});

Deno.test("parseChatCompletionRequest() treats null as absent", () => {
  const req = parseChatCompletionRequest({
    ...BASE,
    temperature: null,
    max_tokens: null,
    stop: null,
    seed: null,
    n: null,
    stream_options: null,
    top_logprobs: null,
  });
  assertEquals(chatSamplingParams(req), {});
});

Deno.test("chatSamplingParams() converts every parameter to camelCase", () => {
  const req = parseChatCompletionRequest({
    ...BASE,
    temperature: 0.7,
    top_p: 0.9,
    top_k: 40,
    seed: 42,
    max_tokens: 100,
    stop: "\n",
    presence_penalty: 0.5,
    frequency_penalty: -0.5,
    repetition_penalty: 1.1,
    logprobs: true,
    top_logprobs: 3,
    user: "u1",
  });
  assertEquals(chatSamplingParams(req), {
    temperature: 0.7,
    topP: 0.9,
    topK: 40,
    seed: 42,
    maxTokens: 100,
    stop: ["\n"],
    presencePenalty: 0.5,
    frequencyPenalty: -0.5,
    repetitionPenalty: 1.1,
    logprobs: true,
    topLogprobs: 3,
  });
});

Deno.test("chatSamplingParams() prefers max_completion_tokens and maps top_k -1 to 0", () => {
  const req = parseChatCompletionRequest({
    ...BASE,
    max_tokens: 10,
    max_completion_tokens: 20,
    top_k: -1,
  });
  assertEquals(chatSamplingParams(req), { maxTokens: 20, topK: 0 });
});

Deno.test("chatSamplingParams() drops empty stop strings and keeps logprobs without top", () => {
  const req = parseChatCompletionRequest({ ...BASE, stop: ["", "x"], logprobs: true });
  assertEquals(chatSamplingParams(req), { stop: ["x"], logprobs: true });
  const none = parseChatCompletionRequest({ ...BASE, stop: "", logprobs: false });
  assertEquals(chatSamplingParams(none), {});
});

Deno.test("toChatJob() gathers messages, params, n and stream settings in camelCase", () => {
  const job = toChatJob(parseChatCompletionRequest({
    ...BASE,
    n: 2,
    stream: true,
    stream_options: { include_usage: true },
    temperature: 0,
  }));
  assertEquals(job, {
    model: "m",
    messages: [{ role: "user", content: "hi" }],
    params: { temperature: 0 },
    n: 2,
    stream: true,
    includeUsage: true,
  });
  const plain = toChatJob(parseChatCompletionRequest(BASE));
  assertEquals([plain.n, plain.stream, plain.includeUsage], [1, false, false]);
});

Deno.test("parseChatCompletionRequest() takes chat_template_kwargs as an object of JSON values", () => {
  const kwargs = { enable_thinking: false, n: 2, s: "x", list: [1, null, { a: true }], nil: null };
  const req = parseChatCompletionRequest({ ...BASE, chat_template_kwargs: kwargs });
  assertEquals(req.chat_template_kwargs, kwargs);
  assertEquals(toChatJob(req).templateKwargs, kwargs);
  assertEquals("templateKwargs" in toChatJob(parseChatCompletionRequest(BASE)), false);
  assertEquals(
    "templateKwargs" in
      toChatJob(parseChatCompletionRequest({ ...BASE, chat_template_kwargs: null })),
    false,
  );
  for (const bad of ["enable_thinking", [1], 3, true]) {
    rejects({ ...BASE, chat_template_kwargs: bad }, "chat_template_kwargs", "template variables");
  }
  // Deep nesting is refused (not a stack overflow).
  let deep: unknown = 1;
  for (let i = 0; i < 50_000; i++) deep = { a: deep };
  rejects({ ...BASE, chat_template_kwargs: deep }, "chat_template_kwargs", "at most 32 levels");
  let ok: unknown = [1];
  for (let i = 0; i < 30; i++) ok = { a: ok };
  parseChatCompletionRequest({ ...BASE, chat_template_kwargs: ok });
});

Deno.test("parseChatCompletionRequest() takes tools, tool_choice and response_format into the job", () => {
  const tool = {
    type: "function",
    function: { name: "f", description: "d", parameters: { type: "object" }, strict: true },
  };
  const job = toChatJob(parseChatCompletionRequest({
    ...BASE,
    tools: [tool],
    tool_choice: { type: "function", function: { name: "f" } },
    parallel_tool_calls: false,
    response_format: {
      type: "json_schema",
      json_schema: { name: "s", schema: { type: "object" } },
    },
  }));
  assertEquals(job.tools, [{ name: "f", description: "d", parameters: { type: "object" } }]);
  assertEquals(job.params.toolChoice, { name: "f" });
  assertEquals(job.params.parallelToolCalls, false);
  assertEquals(job.params.responseFormat, { type: "json_schema", schema: { type: "object" } });
  const text = toChatJob(
    parseChatCompletionRequest({ ...BASE, response_format: { type: "text" } }),
  );
  assertEquals(text.params.responseFormat, undefined);
});

Deno.test("parseChatCompletionRequest() refuses tool fields it does not support, naming them", () => {
  const tool = { type: "function", function: { name: "f" } };
  rejects({ ...BASE, tool_choice: "required" }, "tool_choice", "needs tools");
  rejects(
    { ...BASE, tools: [tool], tool_choice: { type: "function", function: { name: "g" } } },
    "tool_choice.function.name",
  );
  rejects({ ...BASE, tools: [tool, tool] }, "tools.1.function.name", "two tools");
  rejects({ ...BASE, tools: [{ type: "code_interpreter" }] }, "tools.0.type");
  rejects({ ...BASE, tools: [{ ...tool, cache: true }] }, "tools.0.cache", "not supported");
  // A call's arguments are an object, so parameters must describe one (OpenAI's rule).
  const params = (parameters: unknown) => ({
    ...BASE,
    tools: [{ ...tool, function: { name: "f", parameters } }],
  });
  rejects(params({ type: "string" }), "tools.0.function.parameters.type", 'type "object"');
  rejects(params({ type: ["array", "null"] }), "tools.0.function.parameters.type", 'type "object"');
  for (const ok of [{}, { type: "object" }, { type: ["object", "null"] }]) {
    parseChatCompletionRequest(params(ok));
  }
  rejects({ ...BASE, response_format: { type: "yaml" } }, "response_format.type");
  rejects(
    { ...BASE, response_format: { type: "json_schema", json_schema: { schema: {} } } },
    "response_format.json_schema.name",
  );
});

Deno.test("parseChatCompletionRequest() suggests the known field a mistyped one meant", () => {
  const typo = rejects({ ...BASE, max_token: 5 }, "max_token", "did you mean 'max_tokens'?");
  assertEquals(typo.code, "unknown_parameter");
  // Inside a nested object, the nested object's fields are the candidates.
  rejects(
    { ...BASE, response_format: { type: "json_schema", json_schema: { name: "a", shema: {} } } },
    "response_format.json_schema.shema",
    "did you mean 'schema'?",
  );
  // Nothing close: no guess.
  const far = rejects({ ...BASE, colour: 1 }, "colour", "leave it out");
  assertEquals(far.message.includes("did you mean"), false);
});

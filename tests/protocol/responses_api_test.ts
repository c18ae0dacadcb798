// The Responses API's request parsing and translation, and its response assembly.
import { ValidationError } from "../../src/core/errors.ts";
import { parseResponsesRequest } from "../../src/protocol/responses_request.ts";
import {
  inputToMessages,
  responsesParamOf,
  toChatRequest,
} from "../../src/protocol/responses_to_chat.ts";
import {
  outputItemAsInput,
  parseItemId,
  ResponseAssembler,
} from "../../src/protocol/responses_response.ts";
import { assertEquals, assertMatch, assertThrows } from "../_assert.ts";

const none = () => Promise.resolve(undefined);

function paramOf(body: unknown): string | null {
  return assertThrows(() => parseResponsesRequest(body), ValidationError).param;
}

Deno.test("parseResponsesRequest() names unknown and unsupported fields", () => {
  assertEquals(paramOf({ model: "m", input: "hi", best_of: 2 }), "best_of");
  assertEquals(paramOf({ model: "m", input: "hi", background: true }), "background");
  assertEquals(
    paramOf({ model: "m", input: "hi", reasoning: { effort: "max" } }),
    "reasoning.effort",
  );
  assertEquals(paramOf({ model: "m", input: "hi", include: ["x"] }), "include.0");
  assertEquals(paramOf({ model: "m", input: "hi", top_logprobs: 21 }), "top_logprobs");
  assertEquals(paramOf({ model: "m", input: "hi", conversation: "conv_1" }), "conversation");
  assertEquals(paramOf({ model: "m", input: "hi", truncation: "auto" }), "truncation");
  assertEquals(
    paramOf({ model: "m", input: "hi", tools: [{ type: "web_search" }] }),
    "tools.0.type",
  );
  assertEquals(
    paramOf({ model: "m", input: [{ role: "user", content: [{ type: "input_image" }] }] }),
    "input.0.content.0.type",
  );
  assertEquals(paramOf({ model: "m" }), "input");
  const many = Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, "v"]));
  assertEquals(paramOf({ model: "m", input: "hi", metadata: many }), "metadata");
  assertEquals(
    paramOf({ model: "m", input: "hi", metadata: { k: "v".repeat(513) } }),
    "metadata.k",
  );
});

Deno.test("parseResponsesRequest() accepts fields that ask for nothing we lack", () => {
  const req = parseResponsesRequest({
    model: "m",
    input: "hi",
    background: false,
    reasoning: { effort: "high", summary: "auto" },
    max_tool_calls: 3,
    include: ["reasoning.encrypted_content"],
    truncation: "disabled",
    service_tier: "auto",
    store: false,
  });
  assertEquals(req.store, false);
  const a = new ResponseAssembler(req, { model: "m" });
  // Echoed as OpenAI does, though no model here takes an effort or makes built-in tool calls.
  assertEquals(a.response.reasoning, { effort: "high", summary: "auto" });
  assertEquals(a.response.max_tool_calls, 3);
});

Deno.test("inputToMessages() joins calls to the assistant turn and outputs as tool messages", async () => {
  const messages = await inputToMessages([
    {
      role: "user",
      content: [{ type: "input_text", text: "a" }, { type: "input_text", text: "b" }],
    },
    { role: "assistant", content: [{ type: "output_text", text: "Let me look." }] },
    { type: "function_call", call_id: "c1", name: "f", arguments: "{}" },
    { type: "function_call", call_id: "c2", name: "g", arguments: '{"x":1}' },
    { type: "function_call_output", call_id: "c1", output: "one" },
    { type: "function_call_output", call_id: "c2", output: "two" },
  ], none);
  assertEquals(messages, [
    { role: "user", content: "a\nb" },
    {
      role: "assistant",
      content: "Let me look.",
      tool_calls: [
        { id: "c1", type: "function", function: { name: "f", arguments: "{}" } },
        { id: "c2", type: "function", function: { name: "g", arguments: '{"x":1}' } },
      ],
    },
    { role: "tool", tool_call_id: "c1", content: "one" },
    { role: "tool", tool_call_id: "c2", content: "two" },
  ]);
});

Deno.test("inputToMessages() resolves item references, and names one it cannot find", async () => {
  const found = await inputToMessages(
    [{ type: "item_reference", id: "msg_1" }],
    () => Promise.resolve({ role: "assistant", content: "stored" }),
  );
  assertEquals(found, [{ role: "assistant", content: "stored" }]);
  const err = await inputToMessages(
    ["x", "y"].map(() => ({ type: "item_reference" as const, id: "msg_2" })),
    none,
  ).catch((e) => e);
  assertEquals(err.param, "input.0.id");
  assertMatch(err.message, /msg_2/);
});

Deno.test("toChatRequest() maps the Responses fields to the chat request's", () => {
  const req = parseResponsesRequest({
    model: "m",
    input: "hi",
    instructions: "Be brief.",
    max_output_tokens: 9,
    temperature: 0.5,
    top_p: 0.9,
    stream: true,
    text: { format: { type: "json_schema", name: "p", schema: { type: "object" }, strict: true } },
    tools: [{ type: "function", name: "f", parameters: { type: "object" } }],
    tool_choice: { type: "function", name: "f" },
    parallel_tool_calls: false,
    top_logprobs: 2,
  });
  assertEquals(toChatRequest(req, [{ role: "user", content: "hi" }]), {
    model: "m",
    messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "hi" }],
    max_completion_tokens: 9,
    temperature: 0.5,
    top_p: 0.9,
    stream: true,
    stream_options: { include_usage: true },
    response_format: {
      type: "json_schema",
      json_schema: { name: "p", schema: { type: "object" }, strict: true },
    },
    tools: [{ type: "function", function: { name: "f", parameters: { type: "object" } } }],
    tool_choice: { type: "function", function: { name: "f" } },
    parallel_tool_calls: false,
    logprobs: true,
    top_logprobs: 2,
  });
  // Streamed either way (one reading makes both answers); log-probabilities only when asked for.
  const plain = toChatRequest(parseResponsesRequest({ model: "m", input: "hi" }), []);
  assertEquals([plain.stream, plain.logprobs, plain.top_logprobs], [true, undefined, undefined]);
  const included = toChatRequest(
    parseResponsesRequest({ model: "m", input: "hi", include: ["message.output_text.logprobs"] }),
    [],
  );
  assertEquals([included.logprobs, included.top_logprobs], [true, 0]);
});

Deno.test("responsesParamOf() names the Responses field behind a chat field", () => {
  assertEquals(responsesParamOf("response_format.json_schema.schema.a"), "text.format.schema.a");
  assertEquals(responsesParamOf("tools.3.function.parameters.x"), "tools.3.parameters.x");
  assertEquals(responsesParamOf("tool_choice.function.name"), "tool_choice.name");
  assertEquals(responsesParamOf("max_completion_tokens"), "max_output_tokens");
  assertEquals(responsesParamOf("messages.4.content"), "input");
  assertEquals(responsesParamOf("temperature"), "temperature");
  assertEquals(responsesParamOf("top_logprobs"), "top_logprobs");
});

const lp = (token: string) => ({
  token,
  logprob: -1,
  bytes: [...new TextEncoder().encode(token)],
  top_logprobs: [],
});

Deno.test("ResponseAssembler: the answer's tokens carry their log-probabilities, held-back ones with the text that follows", () => {
  const a = new ResponseAssembler({ model: "m", input: "hi" }, { model: "m" });
  const deltas = [
    ...a.text("", [lp("\xf0\x9f")]), // half a character: its text comes with the next token
    ...a.text("🙂 ok", [lp("\x99\x82"), lp(" ok")]),
    ...a.text("", [lp("STOP")]), // a stop string's token: no text, so not the answer's
    ...a.finish("stop", { promptTokens: 1, completionTokens: 4 }),
  ].filter((e) =>
    e.type === "response.output_text.delta" || e.type === "response.output_text.done"
  );
  const tokens = (list: unknown) => (list as { token: string }[]).map((l) => l.token);
  assertEquals(deltas.map((e) => tokens(e.logprobs)), [
    ["\xf0\x9f", "\x99\x82", " ok"],
    ["\xf0\x9f", "\x99\x82", " ok"],
  ]);
  const message = a.response.output[0];
  assertEquals(message.type === "message" && tokens(message.content[0].logprobs), [
    "\xf0\x9f",
    "\x99\x82",
    " ok",
  ]);
});

Deno.test("ResponseAssembler: reasoning tokens, its closing tag's and a call's markup are not the answer's", () => {
  const a = new ResponseAssembler({ model: "m", input: "hi" }, { model: "m" });
  a.reasoning("hmm");
  a.text("", [lp("hmm")]); // the route passes a chunk's logprobs with its text, after its reasoning
  a.text("", [lp("</think>"), lp("\n\n")]);
  a.text("Yes", [lp("Yes")]);
  a.text("", [lp("<tool_call>")]);
  a.toolCall(0, { id: "c", name: "f", arguments: "{}" });
  a.finish("tool_calls", { promptTokens: 1, completionTokens: 6 });
  const message = a.response.output[1];
  assertEquals(message.type === "message" && message.content[0].logprobs.map((l) => l.token), [
    "Yes",
  ]);
});

Deno.test("ResponseAssembler streams text then a call, numbering events in order", () => {
  const a = new ResponseAssembler({ model: "m", input: "hi" }, { model: "m" });
  const events = [
    ...a.start(),
    ...a.text("Hel"),
    ...a.text("lo"),
    ...a.toolCall(0, { id: "call_1", name: "f", arguments: "" }),
    ...a.toolCall(0, { arguments: '{"a":' }),
    ...a.toolCall(0, { arguments: "1}" }),
    ...a.finish("tool_calls", { promptTokens: 3, completionTokens: 4 }),
  ];
  assertEquals(events.map((e) => e.type), [
    "response.created",
    "response.in_progress",
    "response.output_item.added",
    "response.content_part.added",
    "response.output_text.delta",
    "response.output_text.delta",
    "response.output_text.done",
    "response.content_part.done",
    "response.output_item.done",
    "response.output_item.added",
    "response.function_call_arguments.delta",
    "response.function_call_arguments.delta",
    "response.function_call_arguments.done",
    "response.output_item.done",
    "response.completed",
  ]);
  assertEquals(events.map((e) => e.sequence_number), events.map((_, i) => i));
  const [message, call] = a.response.output;
  assertEquals(message.type === "message" && message.content[0].text, "Hello");
  assertEquals(call.type === "function_call" && [call.call_id, call.arguments], [
    "call_1",
    '{"a":1}',
  ]);
  assertEquals(a.response.usage?.total_tokens, 7);
  // Item ids lead back to their response and place, for item_reference.
  assertEquals(parseItemId(call.id), { responseId: a.response.id, index: 1 });
  assertEquals(outputItemAsInput(call), {
    type: "function_call",
    call_id: "call_1",
    name: "f",
    arguments: '{"a":1}',
  });
});

Deno.test("ResponseAssembler: a cut answer is incomplete; an empty one still has its message", () => {
  const cut = new ResponseAssembler({ model: "m", input: "hi" }, { model: "m" });
  cut.text("abc");
  const last = cut.finish("length", { promptTokens: 1, completionTokens: 2 }).at(-1)!;
  assertEquals(last.type, "response.incomplete");
  assertEquals(cut.response.status, "incomplete");
  assertEquals(cut.response.incomplete_details, { reason: "max_output_tokens" });
  const empty = new ResponseAssembler({ model: "m", input: "hi" }, { model: "m" });
  empty.finish("stop", { promptTokens: 1, completionTokens: 0 });
  assertEquals(empty.response.output.length, 1);
  assertEquals(outputItemAsInput(empty.response.output[0]), { role: "assistant", content: "" });
});

Deno.test("ResponseAssembler closes each item before the next; text after a call is a new message", () => {
  const a = new ResponseAssembler({ model: "m", input: "hi" }, { model: "m" });
  const types = [
    ...a.toolCall(0, { id: "c0", name: "f", arguments: "{}" }),
    ...a.toolCall(1, { id: "c1", name: "g", arguments: "{}" }),
    ...a.text("done"),
    ...a.finish("stop", { promptTokens: 1, completionTokens: 1 }),
  ].map((e) => `${e.type}${"output_index" in e ? `@${e.output_index}` : ""}`);
  assertEquals(types, [
    "response.output_item.added@0",
    "response.function_call_arguments.delta@0",
    "response.function_call_arguments.done@0",
    "response.output_item.done@0",
    "response.output_item.added@1",
    "response.function_call_arguments.delta@1",
    "response.function_call_arguments.done@1",
    "response.output_item.done@1",
    "response.output_item.added@2",
    "response.content_part.added@2",
    "response.output_text.delta@2",
    "response.output_text.done@2",
    "response.content_part.done@2",
    "response.output_item.done@2",
    "response.completed",
  ]);
  assertEquals(a.response.output.map((i) => i.status), ["completed", "completed", "completed"]);
});

// vLLM's guided decoding fields (guided_json/regex/choice and structured_outputs) on chat and
// legacy completion requests: what each becomes for the engine, and the 400 that names the field
// for what cannot be honoured or asks for two formats at once.
import { ValidationError } from "../../src/core/errors.ts";
import { parseChatCompletionRequest, toChatJob } from "../../src/protocol/chat_request.ts";
import { parseCompletionRequest, toCompletionJob } from "../../src/protocol/completion_request.ts";
import { assertEquals, assertThrows } from "../_assert.ts";

const CHAT = { model: "m", messages: [{ role: "user", content: "hi" }] };
const COMPLETION = { model: "m", prompt: "hi" };
const SCHEMA = { type: "object", properties: { a: { type: "integer" } }, required: ["a"] };
const TOOLS = [{ type: "function", function: { name: "f", parameters: { type: "object" } } }];

function formatOf(fields: Record<string, unknown>) {
  const chat = toChatJob(parseChatCompletionRequest({ ...CHAT, ...fields })).params.responseFormat;
  const completion = toCompletionJob(parseCompletionRequest({ ...COMPLETION, ...fields })).params
    .responseFormat;
  assertEquals(completion, chat);
  return chat;
}

function refused(
  fields: Record<string, unknown>,
  param: string,
  includes: string,
  code = "invalid_value",
) {
  for (const parse of [parseChatCompletionRequest, parseCompletionRequest]) {
    const base = parse === parseChatCompletionRequest ? CHAT : COMPLETION;
    const err = assertThrows(() => parse({ ...base, ...fields }), ValidationError, includes);
    assertEquals([err.param, err.code, err.status], [param, code, 400]);
  }
}

Deno.test("guided fields and structured_outputs become the engine's response format", () => {
  const json = { type: "json_schema" as const, schema: SCHEMA, param: "guided_json" };
  assertEquals(formatOf({ guided_json: SCHEMA }), json);
  assertEquals(formatOf({ guided_json: JSON.stringify(SCHEMA) }), json);
  assertEquals(formatOf({ guided_regex: "\\d+" }), {
    type: "regex",
    pattern: "\\d+",
    param: "guided_regex",
  });
  assertEquals(formatOf({ guided_choice: ["yes", "no"] }), {
    type: "choice",
    choices: ["yes", "no"],
  });
  assertEquals(formatOf({ structured_outputs: { json: SCHEMA } }), {
    ...json,
    param: "structured_outputs.json",
  });
  assertEquals(formatOf({ structured_outputs: { regex: "a|b", disable_fallback: true } }), {
    type: "regex",
    pattern: "a|b",
    param: "structured_outputs.regex",
  });
  assertEquals(formatOf({ structured_outputs: { choice: ["x"] } }), {
    type: "choice",
    choices: ["x"],
  });
  assertEquals(formatOf({ structured_outputs: { json_object: true } }), { type: "json_object" });
  // One backend: the choice of one is accepted and changes nothing; nulls ask for nothing.
  assertEquals(formatOf({ guided_decoding_backend: "xgrammar", guided_regex: "a" })?.type, "regex");
  assertEquals(formatOf({ guided_json: null, guided_grammar: null }), undefined);
});

Deno.test("grammars, structural tags and whitespace patterns are a 400 unsupported_parameter naming the field", () => {
  const cases: [Record<string, unknown>, string, string][] = [
    [{ guided_grammar: "root ::= 'a'" }, "guided_grammar", "grammars (EBNF, Lark)"],
    [{ guided_whitespace_pattern: "\\s*" }, "guided_whitespace_pattern", "whitespace"],
    [{ structured_outputs: { grammar: "start: 'a'" } }, "structured_outputs.grammar", "Lark"],
    [
      { structured_outputs: { structural_tag: "{}" } },
      "structured_outputs.structural_tag",
      "structural tags",
    ],
    [
      { structured_outputs: { json: SCHEMA, whitespace_pattern: " ?" } },
      "structured_outputs.whitespace_pattern",
      "whitespace",
    ],
  ];
  for (const [fields, param, includes] of cases) {
    refused(fields, param, includes, "unsupported_parameter");
  }
});

Deno.test("disable_any_whitespace and disable_additional_properties shape the JSON a request asks for", () => {
  const json = { type: "json_schema" as const, schema: SCHEMA };
  const both = { disable_any_whitespace: true, disable_additional_properties: true };
  assertEquals(formatOf({ structured_outputs: { json: SCHEMA, ...both } }), {
    ...json,
    param: "structured_outputs.json",
    compact: true,
    closedObjects: true,
  });
  assertEquals(
    formatOf({ structured_outputs: { json: SCHEMA, disable_additional_properties: true } }),
    { ...json, param: "structured_outputs.json", closedObjects: true },
  );
  // json_object lists no properties: only whitespace applies.
  assertEquals(formatOf({ structured_outputs: { json_object: true, ...both } }), {
    type: "json_object",
    compact: true,
  });
  // Options alone shape guided_json or response_format (vLLM merges response_format into them).
  assertEquals(
    formatOf({ guided_json: SCHEMA, structured_outputs: { disable_any_whitespace: true } }),
    { ...json, param: "guided_json", compact: true },
  );
  const responseFormat = { type: "json_schema", json_schema: { name: "s", schema: SCHEMA } };
  assertEquals(formatOf({ response_format: responseFormat, structured_outputs: both }), {
    ...json,
    compact: true,
    closedObjects: true,
  });
  assertEquals(
    formatOf({ response_format: { type: "json_object" }, structured_outputs: both }),
    { type: "json_object", compact: true },
  );
  // vLLM 0.8 read them after the backend's name; other options are ignored, as there.
  assertEquals(
    formatOf({
      guided_json: SCHEMA,
      guided_decoding_backend: "guidance:no-additional-properties, disable-any-whitespace",
    }),
    { ...json, param: "guided_json", compact: true, closedObjects: true },
  );
  assertEquals(
    formatOf({ response_format: { type: "json_object" }, guided_decoding_backend: "xgrammar:x" }),
    { type: "json_object" },
  );
  // Their false values ask for nothing; regex and choice have no JSON to shape.
  const off = { disable_any_whitespace: false, disable_additional_properties: false };
  assertEquals(formatOf({ structured_outputs: { json: SCHEMA, ...off } }), {
    ...json,
    param: "structured_outputs.json",
  });
  assertEquals(formatOf({ structured_outputs: { regex: "a", ...both } }), {
    type: "regex",
    pattern: "a",
    param: "structured_outputs.regex",
  });
  // Options with no JSON to shape, alone or beside another constraint, are still a 400.
  refused({ structured_outputs: both }, "structured_outputs", "its options alone");
  refused(
    { guided_regex: "a", structured_outputs: { disable_any_whitespace: true } },
    "structured_outputs",
    "give one constraint",
  );
});

Deno.test("two constraints at once, or none in structured_outputs, are a 400 naming the field", () => {
  refused({ guided_json: SCHEMA, guided_regex: "a" }, "guided_regex", "guided_json is given too");
  refused(
    { guided_choice: ["a"], structured_outputs: { json_object: true } },
    "structured_outputs.json_object",
    "guided_choice is given too",
  );
  refused(
    { structured_outputs: { regex: "a", choice: ["a"] } },
    "structured_outputs.choice",
    "one structured output constraint",
  );
  refused({ structured_outputs: {} }, "structured_outputs", "json, regex, choice or json_object");
  refused(
    { structured_outputs: { json_object: false } },
    "structured_outputs",
    "give one constraint",
  );
  refused(
    { structured_outputs: { jsn: SCHEMA } },
    "structured_outputs.jsn",
    "did you mean",
    "unknown_parameter",
  );
});

Deno.test("a guided constraint beside response_format or a tool_choice that forces calls is a 400", () => {
  const reject = (fields: Record<string, unknown>, param: string, includes: string) => {
    const err = assertThrows(
      () => parseChatCompletionRequest({ ...CHAT, ...fields }),
      ValidationError,
      includes,
    );
    assertEquals([err.param, err.code], [param, "invalid_value"]);
  };
  reject(
    { guided_json: SCHEMA, response_format: { type: "json_object" } },
    "guided_json",
    "response_format is given too",
  );
  reject(
    { guided_choice: ["a"], tools: TOOLS, tool_choice: "required" },
    "guided_choice",
    "tool_choice 'required'",
  );
  reject(
    {
      structured_outputs: { regex: "a" },
      tools: TOOLS,
      tool_choice: { type: "function", function: { name: "f" } },
    },
    "structured_outputs.regex",
    "named tool_choice",
  );
  // response_format text asks for nothing; under auto the answer is shaped, or calls are made.
  const text = { guided_regex: "a", response_format: { type: "text" }, tools: TOOLS };
  assertEquals(toChatJob(parseChatCompletionRequest({ ...CHAT, ...text })).params.responseFormat, {
    type: "regex",
    pattern: "a",
    param: "guided_regex",
  });
});

Deno.test("guided_json text must be a JSON Schema, and guided_choice a non-empty list", () => {
  refused({ guided_json: "{not json" }, "guided_json", "the text is not JSON");
  refused({ structured_outputs: { json: "[1]" } }, "structured_outputs.json", "expected a JSON");
  refused({ guided_json: 3 }, "guided_json", "expected a JSON Schema");
  refused({ guided_choice: [] }, "guided_choice", "at least one choice");
  refused({ guided_choice: "yes" }, "guided_choice", "expected array", "invalid_type");
});

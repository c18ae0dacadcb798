import { toolCallParser } from "../../src/protocol/tool_call_parser.ts";
import {
  HERMES_TOOL_CALLS,
  LLAMA3_JSON_TOOL_CALLS,
  MISTRAL_TOOL_CALLS,
} from "../../src/engine/chat/output_constraint.ts";
import type { ToolCallFormat } from "../../src/core/inference_types.ts";
import { assertEquals } from "../_assert.ts";

const TEXT =
  'Let me check.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Pa}ris", ' +
  '"n": [1, {"a": "\\"x"}]}}\n</tool_call>\n<tool_call>{"name":"f","arguments":{}}</tool_call>\n';

function parse(pieces: string[], format: ToolCallFormat = HERMES_TOOL_CALLS) {
  let ids = 0;
  const parser = toolCallParser(format, { newId: () => `call_${ids++}` });
  let content = "";
  const deltas = [];
  for (const piece of [...pieces.map((p) => parser.push(p)), parser.flush()]) {
    content += piece.content;
    deltas.push(...piece.calls);
  }
  return { content, calls: parser.calls, deltas };
}

Deno.test("ToolCallParser parses the same calls whatever pieces the text arrives in", () => {
  const whole = parse([TEXT]);
  assertEquals(whole.content, "Let me check.");
  assertEquals(whole.calls, [
    {
      id: "call_0",
      name: "get_weather",
      arguments: '{"city": "Pa}ris", "n": [1, {"a": "\\"x"}]}',
    },
    { id: "call_1", name: "f", arguments: "{}" },
  ]);
  for (const size of [1, 2, 3, 7]) {
    const pieces = Array.from(
      { length: Math.ceil(TEXT.length / size) },
      (_, i) => TEXT.slice(i * size, (i + 1) * size),
    );
    const parsed = parse(pieces);
    assertEquals(parsed.content, whole.content, `pieces of ${size}`);
    assertEquals(parsed.calls, whole.calls, `pieces of ${size}`);
    // Each call starts with its id and name, then only argument fragments follow.
    assertEquals(parsed.deltas.filter((d) => d.id !== undefined).map((d) => d.name), [
      "get_weather",
      "f",
    ]);
    const args = parsed.deltas.filter((d) => d.index === 0).map((d) => d.arguments).join("");
    assertEquals(args, whole.calls[0].arguments);
  }
});

Deno.test("ToolCallParser keeps text without calls as it is, and a block that is not a call", () => {
  assertEquals(parse(["  plain answer \n"]).content, "  plain answer \n");
  assertEquals(
    parse(["a <tool_call>not json</tool_call>"]).content,
    "a<tool_call>not json</tool_call>",
  );
  assertEquals(parse(["<tool_c"]).content, "<tool_c");
});

Deno.test("ToolCallParser gives a call cut short as far as it got", () => {
  const parsed = parse(['<tool_call>{"name": "f", "arguments": {"a": 1']);
  assertEquals(parsed.calls, [{ id: "call_0", name: "f", arguments: '{"a": 1' }]);
});

const BARE = '{"name": "get_weather", "parameters": {"city": "Pa}ris;", "n": [1]}}; ' +
  '{"name":"f","parameters":{}}';

function inPieces(text: string, size: number): string[] {
  return Array.from(
    { length: Math.ceil(text.length / size) },
    (_, i) => text.slice(i * size, (i + 1) * size),
  );
}

Deno.test("toolCallParser reads Llama 3's bare JSON calls, joined by ';', whatever the pieces", () => {
  const expected = [
    { id: "call_0", name: "get_weather", arguments: '{"city": "Pa}ris;", "n": [1]}' },
    { id: "call_1", name: "f", arguments: "{}" },
  ];
  for (const size of [BARE.length, 1, 2, 5]) {
    const parsed = parse(inPieces(" \n" + BARE, size), LLAMA3_JSON_TOOL_CALLS);
    assertEquals(parsed.content, "", `pieces of ${size}`);
    assertEquals(parsed.calls, expected, `pieces of ${size}`);
    const args = parsed.deltas.filter((d) => d.index === 0).map((d) => d.arguments).join("");
    assertEquals(args, expected[0].arguments);
  }
});

Deno.test("toolCallParser keeps an answer that does not open with a bare call as content", () => {
  const llama = LLAMA3_JSON_TOOL_CALLS;
  assertEquals(parse(["It is {sunny}", " today."], llama), {
    content: "It is {sunny} today.",
    calls: [],
    deltas: [],
  });
  assertEquals(parse(["  "], llama).content, "  ");
  // JSON that is not a call, and text after a call, stay content.
  assertEquals(parse(['{"answer": 42}'], llama).content, '{"answer": 42}');
  const after = parse(['{"name": "f", "parameters": {}} and more'], llama);
  assertEquals(after.calls, [{ id: "call_0", name: "f", arguments: "{}" }]);
  assertEquals(after.content, " and more");
  // A call cut short is given as far as it got.
  assertEquals(parse(['{"name": "f", "parameters": {"a": 1'], llama).calls, [
    { id: "call_0", name: "f", arguments: '{"a": 1' },
  ]);
});

Deno.test("ToolCallParser ends a call only after its JSON, whatever its strings hold (issue 22, item 6)", () => {
  const args = '{"note": "a </tool_call> b", "more": "<tool_call>"}';
  const text = `<tool_call>\n{"name": "f", "arguments": ${args}}\n</tool_call>\nDone.`;
  for (const size of [text.length, 1, 3, 7]) {
    const parsed = parse(inPieces(text, size));
    assertEquals(parsed.calls, [{ id: "call_0", name: "f", arguments: args }], `pieces ${size}`);
    assertEquals(parsed.content, "Done.", `pieces of ${size}`);
  }
  // A block that is no JSON object still ends at its marker.
  assertEquals(
    parse(["<tool_call>oops</tool_call> then"]).content,
    "<tool_call>oops</tool_call>then",
  );
});

Deno.test("toolCallParser gives a call cut before its arguments as a call, never as text (item 7)", () => {
  const cut = [
    ['<tool_call>{"name":"get_weather", "arguments', "get_weather"],
    ['<tool_call>\n{"name": "get_wea', "get_wea"],
    ['<tool_call>{"na', ""],
  ];
  for (const [text, name] of cut) {
    const parsed = parse([text]);
    assertEquals([parsed.content, parsed.calls], ["", [{ id: "call_0", name, arguments: "" }]]);
    assertEquals(parsed.deltas, [{ index: 0, id: "call_0", name, arguments: "" }]);
  }
  const llama = parse(['{"name": "get_weather", "param'], LLAMA3_JSON_TOOL_CALLS);
  assertEquals([llama.content, llama.calls.map((c) => c.name)], ["", ["get_weather"]]);
  // Text that cannot start a call stays text.
  assertEquals(
    parse(['<tool_call>{"answer": 4'], HERMES_TOOL_CALLS).content,
    '<tool_call>{"answer": 4',
  );
});

Deno.test("toolCallParser reads Mistral's [TOOL_CALLS] list, whatever the pieces (issue 22, item 5)", () => {
  const text = 'Sure. [TOOL_CALLS] [{"name": "get_weather", "arguments": {"city": "Pa, ]ris"}}, ' +
    '{"name": "f", "arguments": {}}]';
  for (const size of [text.length, 1, 4]) {
    const parsed = parse(inPieces(text, size), MISTRAL_TOOL_CALLS);
    assertEquals(parsed.content, "Sure.", `pieces of ${size}`);
    assertEquals(parsed.calls, [
      { id: "call_0", name: "get_weather", arguments: '{"city": "Pa, ]ris"}' },
      { id: "call_1", name: "f", arguments: "{}" },
    ], `pieces of ${size}`);
  }
  assertEquals(parse(["No calls [here]."], MISTRAL_TOOL_CALLS).content, "No calls [here].");
  const cut = parse(['[TOOL_CALLS] [{"name": "get_wea'], MISTRAL_TOOL_CALLS);
  assertEquals([cut.content, cut.calls.map((c) => c.name)], ["", ["get_wea"]]);
  // Mistral's templates take only ids of 9 letters and digits back in the history.
  const ids = toolCallParser(MISTRAL_TOOL_CALLS);
  ids.push('[TOOL_CALLS] [{"name": "f", "arguments": {}}]');
  assertEquals(/^[A-Za-z0-9]{9}$/.test(ids.flush() && ids.calls[0].id), true, ids.calls[0].id);
});

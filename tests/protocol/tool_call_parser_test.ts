import { ToolCallParser } from "../../src/protocol/tool_call_parser.ts";
import { assertEquals } from "../_assert.ts";

const MARKERS = { start: "<tool_call>", end: "</tool_call>" };
const TEXT =
  'Let me check.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Pa}ris", ' +
  '"n": [1, {"a": "\\"x"}]}}\n</tool_call>\n<tool_call>{"name":"f","arguments":{}}</tool_call>\n';

function parse(pieces: string[]) {
  let ids = 0;
  const parser = new ToolCallParser(MARKERS, { newId: () => `call_${ids++}` });
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

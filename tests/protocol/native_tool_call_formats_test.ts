// Command-R, DeepSeek V3/R1, DeepSeek V3.1 and Mistral v11 tool-call markup: parsed into OpenAI tool calls
// whatever pieces the text streams in, recognized from real templates, and written back.
import { toolCallParser } from "../../src/protocol/tool_call_parser.ts";
import {
  COMMAND_R_TOOL_CALLS,
  DEEPSEEK_V31_TOOL_CALLS,
  DEEPSEEK_V3_TOOL_CALLS,
  MISTRAL_TOOL_CALLS,
  MISTRAL_V11_TOOL_CALLS,
  toolCallFormatFor,
  toolCallMarkup,
  writeToolCalls,
} from "../../src/protocol/tool_call_formats.ts";
import type { ToolCallFormat } from "../../src/core/inference_types.ts";
import { CORPUS } from "../engine/chat/_templates/corpus.ts";
import { DEEPSEEK_V3_1_TEMPLATE } from "../engine/chat/_tool_model.ts";
import { assertEquals } from "../_assert.ts";

function parse(pieces: string[], format: ToolCallFormat) {
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

/** The text split in two at every character, and in pieces of one character. */
function everySplit(text: string): string[][] {
  const splits = Array.from({ length: text.length + 1 }, (_, i) => [
    text.slice(0, i),
    text.slice(i),
  ]);
  return [...splits, [...text]];
}

const CALLS = [
  { id: "call_0", name: "get_weather", arguments: '{"city": "Pa\\"]}``` ris", "n": [1]}' },
  { id: "call_1", name: "f", arguments: "{}" },
];

function checkEverySplit(text: string, format: ToolCallFormat, content: string) {
  for (const pieces of everySplit(text)) {
    const parsed = parse(pieces, format);
    const at = JSON.stringify(pieces.slice(0, 2));
    assertEquals(parsed.content, content, at);
    assertEquals(parsed.calls, CALLS, at);
    // Each call opens with its id and name; then only argument fragments follow.
    assertEquals(parsed.deltas.filter((d) => d.id !== undefined).map((d) => d.name), [
      "get_weather",
      "f",
    ]);
    const args = parsed.deltas.filter((d) => d.index === 0).map((d) => d.arguments).join("");
    assertEquals(args, CALLS[0].arguments, at);
  }
}

Deno.test("toolCallParser reads Command-R's Action list at every split of the text", () => {
  const text = "I will look it up.\nAction: ```json\n[\n    {\n        " +
    `"tool_name": "get_weather",\n        "parameters": ${CALLS[0].arguments}\n    },\n` +
    '    {"tool_name": "f", "parameters": {}}\n]\n```\n';
  checkEverySplit(text, COMMAND_R_TOOL_CALLS, "I will look it up.");
  // As our grammar writes it, and with text after the fence.
  const written = writeToolCalls(COMMAND_R_TOOL_CALLS, CALLS) + "\nDone.";
  assertEquals(
    written.startsWith('Action:\n```json\n[{"tool_name": "get_weather", "parameters": {'),
    true,
  );
  checkEverySplit(written, COMMAND_R_TOOL_CALLS, "Done.");
});

Deno.test("toolCallParser reads DeepSeek V3/R1 calls at every split of the text", () => {
  const text = "Let me check.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>" +
    `get_weather\n\`\`\`json\n${CALLS[0].arguments}\n\`\`\`<｜tool▁call▁end｜>\n` +
    "<｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{}\n```<｜tool▁call▁end｜>" +
    "<｜tool▁calls▁end｜>";
  checkEverySplit(text, DEEPSEEK_V3_TOOL_CALLS, "Let me check.");
  assertEquals(writeToolCalls(DEEPSEEK_V3_TOOL_CALLS, CALLS), text.slice("Let me check.".length));
});

Deno.test("toolCallParser reads DeepSeek V3.1 calls (no type, no fence) at every split", () => {
  const text =
    "Let me check.\n<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>" +
    `${CALLS[0].arguments}<｜tool▁call▁end｜><｜tool▁call▁begin｜>f<｜tool▁sep｜>{}` +
    "<｜tool▁call▁end｜><｜tool▁calls▁end｜>";
  checkEverySplit(text, DEEPSEEK_V31_TOOL_CALLS, "Let me check.");
  assertEquals(
    writeToolCalls(DEEPSEEK_V31_TOOL_CALLS, CALLS),
    text.slice("Let me check.\n".length),
  );
  // Text after the calls is content again.
  checkEverySplit(`${text} Done.`, DEEPSEEK_V31_TOOL_CALLS, "Let me check.Done.");
});

Deno.test("toolCallParser reads Mistral v11's [TOOL_CALLS]name[ARGS] calls at every split", () => {
  const text = `Sure. [TOOL_CALLS]get_weather[ARGS]${CALLS[0].arguments}[TOOL_CALLS]f[ARGS]{}`;
  checkEverySplit(text, MISTRAL_V11_TOOL_CALLS, "Sure.");
  assertEquals(writeToolCalls(MISTRAL_V11_TOOL_CALLS, CALLS), text.slice("Sure. ".length));
});

Deno.test("toolCallParser keeps text without native calls as content, and gives cut calls as calls", () => {
  const formats = [
    COMMAND_R_TOOL_CALLS,
    DEEPSEEK_V3_TOOL_CALLS,
    DEEPSEEK_V31_TOOL_CALLS,
    MISTRAL_V11_TOOL_CALLS,
  ];
  for (const format of formats) {
    assertEquals(parse(["It is [sunny] ```ok``` ", "today."], format), {
      content: "It is [sunny] ```ok``` today.",
      calls: [],
      deltas: [],
    });
  }
  const cut: [string, ToolCallFormat, string, string][] = [
    ['Action:\n```json\n[{"tool_name": "get_wea', COMMAND_R_TOOL_CALLS, "get_wea", ""],
    ["Action:\n```js", COMMAND_R_TOOL_CALLS, "", ""],
    [
      "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_w",
      DEEPSEEK_V3_TOOL_CALLS,
      "get_w",
      "",
    ],
    ["<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>func", DEEPSEEK_V3_TOOL_CALLS, "", ""],
    ["<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_w", DEEPSEEK_V31_TOOL_CALLS, "get_w", ""],
    [
      '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{"city": "Pa',
      DEEPSEEK_V31_TOOL_CALLS,
      "get_weather",
      '{"city": "Pa',
    ],
    ["[TOOL_CALLS]get_weather[AR", MISTRAL_V11_TOOL_CALLS, "get_weather", ""],
    [
      '[TOOL_CALLS]get_weather[ARGS]{"city": "Pa',
      MISTRAL_V11_TOOL_CALLS,
      "get_weather",
      '{"city": "Pa',
    ],
  ];
  for (const [text, format, name, args] of cut) {
    const parsed = parse([text], format);
    assertEquals(
      [parsed.content, parsed.calls],
      ["", [{ id: "call_0", name, arguments: args }]],
      text,
    );
  }
});

Deno.test("toolCallFormatFor picks the native format from the real templates of the corpus", () => {
  const expected: Record<string, ToolCallFormat> = {
    "command_r_v01.ts": COMMAND_R_TOOL_CALLS,
    "deepseek_r1.ts": DEEPSEEK_V3_TOOL_CALLS,
  };
  for (const [file, format] of Object.entries(expected)) {
    assertEquals(toolCallFormatFor(CORPUS[file].template), format, file);
  }
  // Mistral Small 3.2's way of writing a call (its chat_template.jinja).
  const small32 = "{%- for tool in message.tool_calls %}{%- set arguments = " +
    "tool['function']['arguments'] %}{%- if arguments is not string %}{%- set arguments = " +
    "arguments|tojson|safe %}{%- endif %}{{- '[TOOL_CALLS]' + tool['function']['name'] + " +
    "'[ARGS]' + arguments }}{%- endfor %}";
  assertEquals(toolCallFormatFor(small32), MISTRAL_V11_TOOL_CALLS);
  // DeepSeek V3.1 renders calls as name<｜tool▁sep｜>arguments, without R1's type and fence.
  assertEquals(toolCallFormatFor(DEEPSEEK_V3_1_TEMPLATE), DEEPSEEK_V31_TOOL_CALLS);
});

Deno.test("toolCallMarkup lists the markers a tokenizer may hold as special tokens", () => {
  assertEquals(toolCallMarkup(MISTRAL_TOOL_CALLS), ["[TOOL_CALLS]"]);
  assertEquals(toolCallMarkup(MISTRAL_V11_TOOL_CALLS), ["[TOOL_CALLS]", "[ARGS]"]);
  assertEquals(toolCallMarkup(DEEPSEEK_V31_TOOL_CALLS), [
    "<｜tool▁calls▁begin｜>",
    "<｜tool▁calls▁end｜>",
    "<｜tool▁call▁begin｜>",
    "<｜tool▁sep｜>",
    "<｜tool▁call▁end｜>",
  ]);
});

// The grammar of tool calls holds a call's arguments to an object, as clients and chat templates
// read them, even where a function's parameters also allow other values.
import { canFinish, feedBytes, startThreads } from "../../../src/engine/constrained/matcher.ts";
import { outputGrammar } from "../../../src/engine/chat/output_constraint.ts";
import {
  DEEPSEEK_V31_TOOL_CALLS,
  HERMES_TOOL_CALLS,
} from "../../../src/protocol/tool_call_formats.ts";
import { assertEquals } from "../../_assert.ts";

const utf8 = new TextEncoder();

function ends(node: Parameters<typeof startThreads>[0], text: string): boolean {
  return canFinish(feedBytes(startThreads(node), utf8.encode(text)));
}

Deno.test("outputGrammar() writes a call's arguments as an object when the parameters also allow null", () => {
  const properties = { city: { type: "string", maxLength: 4 } };
  for (
    const parameters of [
      { type: ["object", "null"], properties },
      { type: ["null", "object"] },
      { type: "object", nullable: true, properties },
    ]
  ) {
    const tools = [{ name: "f", parameters }];
    const hermes = outputGrammar({ toolChoice: "required" }, tools, HERMES_TOOL_CALLS)!;
    const call = (args: string) => `<tool_call>\n{"name": "f", "arguments": ${args}}\n</tool_call>`;
    assertEquals(ends(hermes, call("{}")), true);
    assertEquals(ends(hermes, call("null")), false, JSON.stringify(parameters));
    const deepseek = outputGrammar({ toolChoice: "required" }, tools, DEEPSEEK_V31_TOOL_CALLS)!;
    const named = (args: string) =>
      `<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>f<｜tool▁sep｜>${args}<｜tool▁call▁end｜>` +
      "<｜tool▁calls▁end｜>";
    assertEquals(ends(deepseek, named("{}")), true);
    assertEquals(ends(deepseek, named("null")), false, JSON.stringify(parameters));
  }
});

Deno.test("outputGrammar() writes json_object and json_schema formats with no whitespace when compact", () => {
  const schema = { type: "object", properties: { a: { type: "array" } }, required: ["a"] };
  const formats = [
    { type: "json_object" as const },
    { type: "json_schema" as const, schema },
  ];
  for (const format of formats) {
    const spaced = outputGrammar({ responseFormat: format }, undefined, HERMES_TOOL_CALLS)!;
    const compact = outputGrammar(
      { responseFormat: { ...format, compact: true } },
      undefined,
      HERMES_TOOL_CALLS,
    )!;
    assertEquals(ends(spaced, '{"a": [1, {"b": " c "}]}'), true);
    assertEquals(ends(compact, '{"a": [1, {"b": " c "}]}'), false);
    assertEquals(ends(compact, '{"a":[1,{"b":" c "}]}'), true, format.type);
  }
});

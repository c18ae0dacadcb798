// Free text in the grammar (what `tool_choice: auto` allows around calls): it ends at its trigger
// or is killed by it, and never contains a forbidden string, however the bytes are split.
import { textNode } from "../../../src/engine/constrained/grammar.ts";
import { canFinish, feedBytes, startThreads } from "../../../src/engine/constrained/matcher.ts";
import { assert, assertEquals } from "../../_assert.ts";
import { outputGrammar } from "../../../src/engine/chat/output_constraint.ts";
import {
  DEEPSEEK_V31_TOOL_CALLS,
  HERMES_TOOL_CALLS,
} from "../../../src/protocol/tool_call_formats.ts";

const utf8 = new TextEncoder();
/** Whether `text` is a whole match (`end`) or a prefix that can go on (`open`), or neither. */
function read(node: Parameters<typeof startThreads>[0], text: string): "end" | "open" | "dead" {
  const threads = feedBytes(startThreads(node), utf8.encode(text));
  return threads.length === 0 ? "dead" : canFinish(threads) ? "end" : "open";
}

Deno.test("a text node takes any text but its trigger and forbidden strings", () => {
  const free = textNode("<go>", { untilTrigger: false, forbidden: ["</go>", "[X]"] });
  assertEquals(read(free, "plain text, <g and </g and [X"), "end");
  assertEquals(read(free, "some <<go> more"), "dead");
  assertEquals(read(free, "a stray </go> here"), "dead");
  assertEquals(read(free, "[[X]"), "dead");
  const untilGo = textNode("<go>", { untilTrigger: true, forbidden: ["[X]"] });
  assertEquals(read(untilGo, "before <"), "open");
  assertEquals(read(untilGo, "before <go>"), "end");
  assertEquals(read(untilGo, "[X] before <go>"), "dead");
  const noTrigger = textNode("", { untilTrigger: false, forbidden: ["[X]"] });
  assertEquals(read(noTrigger, "anything ["), "end");
  assertEquals(read(noTrigger, "anything [X]"), "dead");
});

Deno.test("tool_choice auto: text outside calls never holds one of the family's markers", () => {
  const tools = [{ name: "f", parameters: { type: "object", additionalProperties: false } }];
  const deepseek = outputGrammar({}, tools, DEEPSEEK_V31_TOOL_CALLS)!;
  assertEquals(read(deepseek, "A plain answer with ```code```."), "end");
  assertEquals(read(deepseek, "A stray <｜tool▁sep｜> marker"), "dead");
  assertEquals(read(deepseek, "Text <｜tool▁call▁end｜>"), "dead");
  assertEquals(
    read(deepseek, "Calling. <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>f<｜tool▁sep｜>{}"),
    "open",
  );
  const hermes = outputGrammar({}, tools, HERMES_TOOL_CALLS)!;
  assertEquals(read(hermes, "text </tool_call>"), "dead");
  assert(read(hermes, 'text <tool_call>\n{"name": "f", "arguments": {}}') !== "dead");
});

import { assert, assertEquals, assertMatch } from "../_assert.ts";
import {
  approximateTokenCounter,
  formatDatasetReport,
  type TokenCounter,
  validateChatDataset,
} from "../../src/cli/fine_tune_dataset.ts";

const line = (messages: unknown[], extra: Record<string, unknown> = {}) =>
  JSON.stringify({ messages, ...extra });
const user = (content: string) => ({ role: "user", content });
const assistant = (content: string) => ({ role: "assistant", content });

/** One token per word plus one per message: easy to reason about. */
const wordCounter: TokenCounter = {
  exact: true,
  label: "words",
  count: (messages) =>
    messages.reduce((n, m) => n + 1 + m.content.split(/\s+/).filter(Boolean).length, 0),
};

Deno.test("validateChatDataset() accepts valid examples and computes token statistics", () => {
  const text = [
    line([{ role: "system", content: "Be kind." }, user("Hi"), assistant("Hello there")]),
    line([user("What is two plus two?"), assistant("Four.")]),
    line([
      user("Weather?"),
      { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function" }] },
      { role: "tool", tool_call_id: "c1", content: "sunny" },
      { role: "assistant", content: "Sunny.", weight: 1 },
    ], { tools: [] }),
  ].join("\n") + "\n";
  const report = validateChatDataset(text, { counter: wordCounter, contextLength: 100 });
  assertEquals(report.errors, []);
  assertEquals(report.examples, 3);
  assertEquals(report.lines, 3);
  assertEquals(report.messages, 9);
  assertEquals(report.roles, { system: 1, user: 3, assistant: 4, tool: 1 });
  // 3+2+3 = 8 (incl. one per message) | 6+2 = 8 | 2+1+2+2 = 7
  assertEquals(report.tokens, { min: 7, max: 8, mean: 23 / 3, total: 23 });
  assertEquals(report.overContext, []);
  assertEquals(report.tokenCounting, { exact: true, label: "words" });
  assertEquals(report.warnings.map((w) => w.message), [
    "only 3 valid examples: fine-tuning APIs usually need at least 10",
  ]);
});

Deno.test("validateChatDataset() reports each problem with its line number", () => {
  const text = [
    line([user("ok"), assistant("fine")]),
    "{not json",
    JSON.stringify([1, 2]),
    JSON.stringify({ prompt: "x", completion: "y" }),
    line([]),
    line([{ role: "robot", content: "beep" }, assistant("x")]),
    line([user("only a question")]),
    line([{ role: "tool", content: "result" }, assistant("x")]),
    line([user("x"), { role: "assistant", content: 42 }]),
    line([user("x"), { role: "assistant", content: "y", extra: 1 }]),
    line([user("x"), { role: "user", content: "y", weight: 1 }, assistant("z")]),
    "",
    line([user("ok"), assistant("fine")]),
  ].join("\n");
  const report = validateChatDataset(text, { counter: wordCounter, minExamples: 1 });
  const byLine = new Map(report.errors.map((e) => [e.line, e.message]));
  assertMatch(byLine.get(2)!, /not valid JSON/);
  assertMatch(byLine.get(3)!, /expected an object/);
  assertMatch(byLine.get(4)!, /unrecognized keys prompt, completion/);
  assertMatch(byLine.get(5)!, /"messages" is empty/);
  assertMatch(
    byLine.get(6)!,
    /messages\[0\]\.role is "robot": expected one of system, user, assistant, tool/,
  );
  assertMatch(byLine.get(7)!, /no assistant message/);
  assertMatch(byLine.get(8)!, /tool message without a tool_call_id/);
  assertMatch(byLine.get(9)!, /messages\[1\]\.content is 42: expected text/);
  assertMatch(byLine.get(10)!, /unrecognized key\(s\) extra/);
  assertMatch(byLine.get(11)!, /weight must be 0 or 1, on assistant messages only/);
  assertEquals(report.errors.length, 10);
  assertEquals(report.examples, 2);
  assertEquals(report.lines, 12);
  assertEquals(report.warnings, [{ line: 12, message: "empty line (skipped)" }]);
  assertEquals(report.duplicates, [{ line: 13, firstLine: 1 }]);
});

Deno.test("validateChatDataset() flags examples longer than the context", () => {
  const long = line([user("a b c d e f g h"), assistant("i j")]);
  const short = line([user("a"), assistant("b")]);
  const report = validateChatDataset([short, long, line([user("c"), assistant("b")])].join("\n"), {
    counter: wordCounter,
    contextLength: 10,
    minExamples: 1,
  });
  assertEquals(report.overContext, [2]);
  assertEquals(report.tokens?.max, 12);
  const text = formatDatasetReport(report, { name: "train.jsonl" });
  assertMatch(text, /context:\s+10 tokens; 1 examples longer \(line 2\)/);
  assertMatch(text, /tokens:\s+counted with words/);
  assertMatch(text, /min 4, mean 6\.7, max 12, total 20/);
});

Deno.test("validateChatDataset() with no lines is an error; text content parts are accepted", () => {
  assertEquals(validateChatDataset("").errors, [{
    line: 0,
    message: "the dataset has no examples",
  }]);
  const parts = line([
    { role: "user", content: [{ type: "text", text: "Hi" }, { type: "image_url", image_url: {} }] },
    assistant("Hello"),
  ]);
  const report = validateChatDataset(parts, { minExamples: 1 });
  assertEquals(report.errors, []);
  const bad = line([user("x"), { role: "assistant", content: [{ type: "image_url" }] }]);
  assertMatch(validateChatDataset(bad).errors[0].message, /content\[0\] is not a text part/);
});

Deno.test("approximateTokenCounter() counts ~4 characters per token, 1 per CJK character, is labelled", () => {
  const counter = approximateTokenCounter("no local copy of gpt-x");
  assertEquals(counter.exact, false);
  assertMatch(counter.label, /^APPROXIMATE \(no local copy of gpt-x\)/);
  assertEquals(counter.count([{ role: "user", content: "Hello there" }]), 3 + 4);
  assertEquals(counter.count([{ role: "user", content: "你好世界" }]), 4 + 4);
  assertEquals(
    counter.count([{ role: "user", content: "" }, { role: "assistant", content: "abcd" }]),
    4 + 5,
  );
});

Deno.test("formatDatasetReport() lists errors with line numbers and caps long lists", () => {
  const text = Array.from({ length: 30 }, () => "nope").join("\n");
  const out = formatDatasetReport(validateChatDataset(text), { name: "d.jsonl", maxIssues: 5 });
  assertMatch(out, /^d\.jsonl:/);
  assertMatch(out, /errors:\s+30/);
  assertMatch(out, /line 1: not valid JSON/);
  assertMatch(out, /… and 25 more/);
  assertMatch(out, /context:\s+unknown \(pass --context/);
  assert(!out.includes("line 6:"));
});

import {
  type ReasoningPart,
  ReasoningSplitter,
  type ReasoningSyntax,
  splitReasoning,
} from "../../src/protocol/reasoning.ts";
import { assertEquals } from "../_assert.ts";

const THINK: ReasoningSyntax = { start: "<think>", end: "</think>" };
const INSIDE: ReasoningSyntax = { ...THINK, startsInside: true };

/** Feeds `pieces` one by one and returns the joined parts and every part seen. */
function stream(pieces: string[], syntax: ReasoningSyntax) {
  const splitter = new ReasoningSplitter(syntax);
  const parts: ReasoningPart[] = pieces.map((p) => splitter.push(p));
  parts.push(splitter.flush());
  return {
    reasoning: parts.map((p) => p.reasoning).join(""),
    content: parts.map((p) => p.content).join(""),
    parts,
    saw: splitter.sawReasoning,
  };
}

/** Every way to cut `text` into two or three pieces. */
function* cuts(text: string): Generator<string[]> {
  for (let i = 0; i <= text.length; i++) {
    yield [text.slice(0, i), text.slice(i)];
    for (let j = i; j <= text.length; j += 3) {
      yield [text.slice(0, i), text.slice(i, j), text.slice(j)];
    }
  }
}

Deno.test("splitReasoning() splits a think block at the very start from the answer", () => {
  assertEquals(splitReasoning("<think>\nLet me see.\n</think>\n\nIt is 4.", THINK), {
    reasoning: "Let me see.",
    content: "It is 4.",
  });
  assertEquals(splitReasoning("  <think>a</think>b", THINK), { reasoning: "a", content: "b" });
  assertEquals(splitReasoning("<think></think>answer", THINK), {
    reasoning: "",
    content: "answer",
  });
});

Deno.test("splitReasoning() leaves output without a think block unchanged", () => {
  for (const text of ["", "plain answer", "  \n spaced\n", "<thin", "<b>bold</b>", "x<think>y"]) {
    assertEquals(splitReasoning(text, THINK), { reasoning: undefined, content: text });
  }
  // A closing tag alone, when the prompt did not open a block, is just text.
  assertEquals(splitReasoning("a</think>b", THINK), {
    reasoning: undefined,
    content: "a</think>b",
  });
});

Deno.test("splitReasoning() starts in reasoning when the prompt opened the block", () => {
  assertEquals(splitReasoning("\nhmm, 2+2\n</think>\n\n4", INSIDE), {
    reasoning: "hmm, 2+2",
    content: "4",
  });
  assertEquals(splitReasoning("", INSIDE), { reasoning: "", content: "" });
});

Deno.test("splitReasoning() keeps reasoning that is never closed (cut off by max_tokens)", () => {
  assertEquals(splitReasoning("<think>step one, step tw", THINK), {
    reasoning: "step one, step tw",
    content: "",
  });
  assertEquals(splitReasoning("thinking... </thi", INSIDE), {
    reasoning: "thinking... </thi",
    content: "",
  });
});

Deno.test("ReasoningSplitter joins tags split across deltas, wherever the cut falls", () => {
  const cases: [string, ReasoningSyntax][] = [
    ["<think>\nI think.\n</think>\n\nAnswer here.", THINK],
    ["  <think>a < b </ c</think>x", THINK],
    ["reason </thinker> more</think>\nans", INSIDE],
    ["no tags at all, <think> later", THINK],
    ["<think>open forever", THINK],
    ["<thi", THINK],
  ];
  for (const [text, syntax] of cases) {
    const whole = splitReasoning(text, syntax);
    for (const pieces of cuts(text)) {
      const got = stream(pieces, syntax);
      assertEquals(
        { reasoning: got.saw ? got.reasoning : undefined, content: got.content },
        whole,
        JSON.stringify(pieces),
      );
    }
  }
});

Deno.test("ReasoningSplitter gives no tag text out early and streams text as it comes", () => {
  const got = stream(["<", "think", ">", "abc", " </", "think", ">", "\n", "\n", "def"], THINK);
  assertEquals(got.parts.map((p) => [p.reasoning, p.content]), [
    ["", ""],
    ["", ""],
    ["", ""],
    ["abc", ""],
    ["", ""],
    ["", ""],
    ["", ""],
    ["", ""],
    ["", ""],
    ["", "def"],
    ["", ""],
  ]);
  // Without a block, text is given out at once (after the first non-space character).
  const plain = stream(["Hel", "lo"], THINK);
  assertEquals(plain.parts.map((p) => p.content), ["Hel", "lo", ""]);
});

import { StopMatcher } from "../../../src/engine/decoding/stop_matcher.ts";
import { assert, assertEquals } from "../../_assert.ts";

/** Feeds pieces until a stop; returns the emitted text and the stop (flushing when none). */
function run(stops: string[], pieces: string[]): { text: string; stop?: string } {
  const matcher = new StopMatcher(stops);
  let text = "";
  for (const piece of pieces) {
    const out = matcher.push(piece);
    text += out.text;
    if (out.stopped) return { text, stop: out.stop };
  }
  return { text: text + matcher.flush() };
}

Deno.test("StopMatcher stops on a stop string split across pieces and never emits it", () => {
  const matcher = new StopMatcher(["\nUser:"]);
  assertEquals(matcher.push("Hel"), { text: "Hel", stopped: false });
  assertEquals(matcher.push("lo\nUs"), { text: "lo", stopped: false });
  assertEquals(matcher.heldText, "\nUs");
  assertEquals(matcher.push("er:"), { text: "", stopped: true, stop: "\nUser:" });
  assert(matcher.stopped);
  assertEquals(matcher.push("more"), { text: "", stopped: true, stop: "\nUser:" });
  assertEquals(matcher.flush(), "");
});

Deno.test("StopMatcher emits held-back text when the prefix turns out not to be a stop", () => {
  const matcher = new StopMatcher(["\nUser:"]);
  assertEquals(matcher.push("a\nUs").text, "a");
  assertEquals(matcher.push("ed to").text, "\nUsed to");
});

Deno.test("StopMatcher.flush() returns the held-back text when generation ends otherwise", () => {
  const matcher = new StopMatcher(["###"]);
  assertEquals(matcher.push("done ##").text, "done ");
  assertEquals(matcher.flush(), "##");
  assert(!matcher.stopped);
});

Deno.test("StopMatcher stops at the very start with nothing emitted", () => {
  assertEquals(run(["STOP"], ["ST", "OP and more"]), { text: "", stop: "STOP" });
  assertEquals(run(["STOP"], ["STOP"]), { text: "", stop: "STOP" });
});

Deno.test("StopMatcher keeps text after a stop out of the output", () => {
  assertEquals(run(["\n\n"], ["one\n\ntwo"]), { text: "one", stop: "\n\n" });
});

Deno.test("StopMatcher with overlapping stops picks the one that ends first, any chunking", () => {
  const stops = ["abcd", "bc", "cde"];
  const text = "xxabcde";
  // Every way of cutting the text into pieces gives the same answer.
  for (let mask = 0; mask < 1 << (text.length - 1); mask++) {
    const pieces: string[] = [];
    let start = 0;
    for (let i = 1; i < text.length; i++) {
      if (mask & (1 << (i - 1))) {
        pieces.push(text.slice(start, i));
        start = i;
      }
    }
    pieces.push(text.slice(start));
    assertEquals(run(stops, pieces), { text: "xxa", stop: "bc" }, pieces.join("|"));
  }
});

Deno.test("StopMatcher prefers the longer stop when two end at the same place", () => {
  assertEquals(run(["b", "ab"], ["xa", "b"]), { text: "x", stop: "ab" });
});

Deno.test("StopMatcher holds back the longest partial prefix among several stops", () => {
  const matcher = new StopMatcher(["<|end|>", "<|eot|>", "\n\n"]);
  assertEquals(matcher.push("Hi <|e").text, "Hi ");
  assertEquals(matcher.heldText, "<|e");
  assertEquals(matcher.push("o").text, "");
  assertEquals(matcher.push("x").text, "<|eox");
});

Deno.test("StopMatcher handles a self-overlapping stop (aab in aaab)", () => {
  assertEquals(run(["aab"], ["a", "a", "a", "b"]), { text: "a", stop: "aab" });
  assertEquals(run(["aab"], ["aaa", "ac"]), { text: "aaaac" });
});

Deno.test("StopMatcher without stops passes text straight through", () => {
  const matcher = new StopMatcher(["", ""]);
  assertEquals(matcher.push("any\nUser:"), { text: "any\nUser:", stopped: false });
  assertEquals(matcher.flush(), "");
});

Deno.test("StopMatcher works with non-ASCII stops and text", () => {
  assertEquals(run(["。終"], ["日本語。", "終わり"]), { text: "日本語", stop: "。終" });
  assertEquals(run(["😀!"], ["a😀", "b"]), { text: "a😀b" });
});

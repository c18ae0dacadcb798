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

// The specification, on the whole text at once: the stop that ends first wins, the longest of
// those ending at the same place; everything before it is the answer.
function reference(stops: string[], text: string): { text: string; stop?: string } {
  for (let end = 1; end <= text.length; end++) {
    const ending = stops.filter((s) => s.length > 0 && text.slice(0, end).endsWith(s));
    if (ending.length > 0) {
      const stop = ending.reduce((a, b) => (b.length > a.length ? b : a));
      return { text: text.slice(0, end - stop.length), stop };
    }
  }
  return { text };
}

Deno.test("StopMatcher agrees with the whole-text specification on random stops, texts and cuts", () => {
  let seed = 7;
  const random = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  const word = (max: number) =>
    Array.from({ length: 1 + random(max) }, () => "ab😀"[random(3)]).join("");
  for (let round = 0; round < 2000; round++) {
    const stops = Array.from({ length: 1 + random(4) }, () => word(5));
    const text = word(24);
    const pieces: string[] = [];
    for (let at = 0; at < text.length;) {
      const size = 1 + random(4);
      pieces.push(text.slice(at, at + size));
      at += size;
    }
    assertEquals(run(stops, pieces), reference(stops, text), `${stops} / ${pieces.join("|")}`);
  }
});

Deno.test("StopMatcher holds back a long partial stop and releases it whole", () => {
  const long = "a".repeat(20_000);
  const matcher = new StopMatcher([long + "b", "zz"]);
  let text = "";
  for (let i = 0; i < long.length; i++) text += matcher.push("a").text;
  assertEquals([text, matcher.heldText.length], ["", long.length]);
  assertEquals(matcher.push("c"), { text: long + "c", stopped: false });
  assertEquals(run([long + "b"], [long, "b"]), { text: "", stop: long + "b" });
});

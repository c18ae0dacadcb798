// The pattern automaton against JavaScript's own RegExp (the `u` flag, as Ajv uses) on random
// strings over the pattern's alphabet and beyond.
import { compilePattern } from "../../../src/engine/constrained/regex.ts";
import { Rng } from "../../../src/engine/decoding/rng.ts";
import { assertEquals, assertThrows } from "../../_assert.ts";
import { ValidationError } from "../../../src/core/errors.ts";

const PATTERNS = [
  "^[A-Z]{3}-\\d{2,4}$",
  "ab|cd",
  "^(?:x|yz)*$",
  "^a+b?c{2,}$",
  "^[^a-c\\s]+$",
  "\\w\\W",
  "^\\(\\d{3}\\) \\d{3}-\\d{4}$",
  "^(?<word>[a-z]+)(\\.[a-z]+){0,2}$",
  "^.{2,3}$",
  "^[\\u00e9\\x41-\\x43]+$",
  "é",
  // Anchors on top-level alternatives (zod's base64 pattern is `^$|^(...)*$`).
  "^$|^a+b$",
  "^a$|b|^c",
  "x\\$$",
  "[$^]x",
  // Characters beyond U+FFFF: two code units in the pattern, one character of text.
  "^😀+$",
  "^(\\uD83D\\uDE00|a)+$",
  "^[😀-🙏x]{1,2}$",
];
const ALPHABET = [..."abcdxyzABCXYZ019-(). é\n_\t$^😀🙏🚀"];

Deno.test("compilePattern() matches what RegExp matches, on random strings", () => {
  const rng = new Rng(3);
  for (const source of PATTERNS) {
    const matcher = compilePattern(source);
    const regex = new RegExp(source, "u");
    for (let i = 0; i < 400; i++) {
      const length = Math.floor(rng.nextFloat() * 12);
      const text = Array.from(
        { length },
        () => ALPHABET[Math.floor(rng.nextFloat() * ALPHABET.length)],
      ).join("");
      let state = matcher.start;
      for (const ch of text) state = matcher.step(state, ch.codePointAt(0)!);
      assertEquals(
        matcher.accepting(state),
        regex.test(text),
        `${source} on ${JSON.stringify(text)}`,
      );
    }
  }
});

Deno.test("compilePattern() refuses anchors anywhere but the ends of the pattern or of a top-level alternative", () => {
  for (const source of ["a$b", "(^a)", "a^", "(a$)|b"]) {
    assertThrows(() => compilePattern(source), ValidationError, "an anchor");
  }
});

Deno.test("compilePattern() refuses what RegExp refuses: quantifier numbers or class ranges out of order", () => {
  for (const source of ["a{2,1}", "^[z-a]$"]) {
    assertThrows(() => new RegExp(source, "u"), SyntaxError);
    assertThrows(() => compilePattern(source), ValidationError, "not a valid regular expression");
  }
});

Deno.test("compilePattern() states from which no match can follow are dead", () => {
  // The lone surrogate branch reads nothing text can hold; it must not look like a way on.
  const matcher = compilePattern("^(\\uD83Dx|a)$");
  assertEquals(matcher.step(matcher.start, 0xd83d), -1);
  assertEquals(matcher.allowsRange(matcher.start, 0xd000, 0xdfff), false);
  assertEquals(matcher.live(matcher.start, 0, 1), true);
  // `^(ab|cdefgh)$` with room for 3 more characters: "c" leaves 5 to write.
  const cut = compilePattern("^(ab|cdefgh)$");
  assertEquals(cut.live(cut.step(cut.start, 0x63), 0, 2), false);
  assertEquals(cut.live(cut.step(cut.start, 0x61), 0, 2), true);
  assertEquals(cut.allowsRange(cut.start, 0x61, 0x63, 0, 2), true);
  assertEquals(cut.allowsRange(cut.start, 0x62, 0x63, 0, 2), false);
});

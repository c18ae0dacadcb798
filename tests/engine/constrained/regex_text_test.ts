// A regex node (vLLM's guided_regex) against JavaScript's RegExp (`u` flag, anchored at both ends):
// the whole-text automaton agrees with it on random strings, and random walks through the demo
// vocabulary under the token masks end only in text it matches, never without a way on.
import { compilePattern } from "../../../src/engine/constrained/regex.ts";
import { regexNode } from "../../../src/engine/constrained/grammar.ts";
import { Vocabulary } from "../../../src/engine/constrained/vocabulary.ts";
import {
  ConstrainedGrammar,
  TokenConstraint,
} from "../../../src/engine/constrained/token_constraint.ts";
import { Rng } from "../../../src/engine/decoding/rng.ts";
import { demoFolder } from "../../_helpers/demo_engines.ts";
import { assert, assertEquals } from "../../_assert.ts";

const EOS = 4072;
const PATTERNS = [
  "\\d{3}-[a-z]{2,4}",
  "(yes|no|maybe)",
  "^[A-Z][a-z]+( [A-Z][a-z]+)?$",
  "ab|abc|abcd",
  "[a-c]+",
  // Characters a JSON string would escape are plain here, and multi-byte ones are whole.
  '"[^"\\n]{1,5}"\\\\?\\n?',
  "(é|😀|日本){1,3}",
  "^a$|^b+$",
];
const ALPHABET = [...'abcdeyesnomaybAZ019- "\\\né😀日本'];

/** What the whole output must match: the pattern anchored at both ends. */
function wholeRegExp(source: string): RegExp {
  return new RegExp(`^(?:${source})$`, "u");
}

Deno.test("compilePattern() with whole matches what the anchored RegExp matches", () => {
  const rng = new Rng(5);
  for (const source of PATTERNS) {
    const matcher = compilePattern(source, "guided_regex", { whole: true });
    const regex = wholeRegExp(source);
    for (let i = 0; i < 400; i++) {
      const length = Math.floor(rng.nextFloat() * 10);
      const text = Array.from(
        { length },
        () => ALPHABET[Math.floor(rng.nextFloat() * ALPHABET.length)],
      ).join("");
      let state = matcher.start;
      for (const ch of text) state = matcher.step(state, ch.codePointAt(0)!);
      assertEquals(matcher.accepting(state), regex.test(text), `${source} on ${text}`);
    }
  }
  // Without `whole`, "b" is found in "abc"; with it, "abc" is not all "b".
  const accepts = (options: { whole?: boolean }) => {
    const m = compilePattern("b", "guided_regex", options);
    return m.accepting([..."abc"].reduce((s, ch) => m.step(s, ch.codePointAt(0)!), m.start));
  };
  assertEquals([accepts({}), accepts({ whole: true })], [true, false]);
});

Deno.test("a regex node lets tokens through only toward text the pattern matches whole", async () => {
  const folder = await demoFolder("demo/chat");
  const json = JSON.parse(await Deno.readTextFile(`${folder}/tokenizer.json`));
  const vocab = Vocabulary.fromTokenizerJson(json, 4096);
  const utf8 = new TextDecoder("utf-8", { fatal: true });
  const rng = new Rng(11);
  let finished = 0;
  for (const source of PATTERNS) {
    const grammar = new ConstrainedGrammar(
      regexNode(compilePattern(source, "guided_regex", { whole: true })),
      vocab,
    );
    const regex = wholeRegExp(source);
    for (let walk = 0; walk < 6; walk++) {
      const constraint = new TokenConstraint(grammar, new Set([EOS]));
      const bytes: number[] = [];
      let ended = false;
      for (let step = 0; step < 60 && !ended; step++) {
        const mask = constraint.mask();
        const ids: number[] = [];
        for (let id = 0; id < vocab.size; id++) {
          const ok = (mask[id >>> 5] & (1 << (id & 31))) !== 0;
          if (step < 4 && ok !== constraint.accepts(id)) {
            throw new Error(`${source}: token ${id} mask=${ok} after ${bytes}`);
          }
          if (ok) ids.push(id);
        }
        assert(ids.length > 0, `${source}: no token allowed after ${bytes}`);
        const id = ids[Math.floor(rng.nextFloat() * ids.length)];
        if (id === EOS) ended = true;
        else {
          constraint.advance(id);
          bytes.push(...vocab.tokenBytes[id]!);
          ended = constraint.complete;
        }
      }
      if (ended) {
        const text = utf8.decode(Uint8Array.from(bytes));
        assert(regex.test(text), `${source}: ${JSON.stringify(text)}`);
        finished++;
      }
    }
  }
  // Most walks end (seeded): the check above is not vacuous.
  assert(finished > PATTERNS.length * 4, `only ${finished} walks ended`);
});

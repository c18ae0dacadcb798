// A pattern's DFA is built on demand on the engine's thread, so its work is bounded: a pattern
// whose automaton keeps growing is refused (a 400 naming the field) once past the budget instead
// of taking memory and the thread without end, and moves are computed once per stretch of code
// points, not once per character a vocabulary walk tries (which spent the budget on
// `([^e]?){600}`, one 600-state closure per character).
import { compilePattern } from "../../../src/engine/constrained/regex.ts";
import { regexNode } from "../../../src/engine/constrained/grammar.ts";
import { Vocabulary } from "../../../src/engine/constrained/vocabulary.ts";
import {
  ConstrainedGrammar,
  TokenConstraint,
} from "../../../src/engine/constrained/token_constraint.ts";
import { ValidationError } from "../../../src/core/errors.ts";
import { Rng } from "../../../src/engine/decoding/rng.ts";
import { demoFolder } from "../../_helpers/demo_engines.ts";
import { assert, assertEquals } from "../../_assert.ts";

const EOS = 4072;

Deno.test("a pattern whose automaton grows without end is refused past its budget, naming the param", () => {
  // A state for every mix of a-m and spaces among the last 3000 characters: 2^3000 of them.
  const matcher = compilePattern(".*[a-m][a-m ]{3000}", "guided_regex", { whole: true });
  const rng = new Rng(3);
  const alphabet = [..."abcdefghijklm "].map((c) => c.codePointAt(0)!);
  let state = matcher.start;
  let refused: unknown = null;
  for (let i = 0; i < 5000 && refused === null; i++) {
    try {
      state = matcher.step(state, alphabet[Math.floor(rng.nextFloat() * alphabet.length)]);
    } catch (err) {
      refused = err;
    }
  }
  assert(refused instanceof ValidationError, `not refused: ${refused}`);
  assertEquals(refused.param, "guided_regex");
  // What it built before stays usable: a state it kept still steps.
  assert(matcher.step(matcher.start, "a".codePointAt(0)!) >= 0);
});

Deno.test("masks of a pattern with hundreds of states active at once stay within the budget", async () => {
  const folder = await demoFolder("demo/chat");
  const json = JSON.parse(await Deno.readTextFile(`${folder}/tokenizer.json`));
  const vocab = Vocabulary.fromTokenizerJson(json, 4096);
  // Every state of `([^e]?){600}` holds up to 600 NFA states, and reads ~every code point alike.
  const pattern = compilePattern("([^e]?){600}", "guided_regex", { whole: true });
  const grammar = new ConstrainedGrammar(regexNode(pattern), vocab);
  const constraint = new TokenConstraint(grammar, new Set([EOS]));
  const rng = new Rng(7);
  for (let step = 0; step < 30; step++) {
    const mask = constraint.mask();
    const ids = [];
    for (let id = 0; id < vocab.size; id++) {
      if (id !== EOS && (mask[id >>> 5] & (1 << (id & 31))) !== 0) ids.push(id);
    }
    assert(ids.length > 0, `no token allowed at step ${step}`);
    constraint.advance(ids[Math.floor(rng.nextFloat() * ids.length)]);
  }
});

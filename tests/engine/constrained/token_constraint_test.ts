// The token masks against the automaton itself: at every step of random walks through each schema
// of the corpus, the mask (trie walk, plain-token shortcut, cache) allows exactly the tokens that
// advancing token by token accepts, and never leaves the walk without a way on.
import { Vocabulary } from "../../../src/engine/constrained/vocabulary.ts";
import {
  ConstrainedGrammar,
  TokenConstraint,
} from "../../../src/engine/constrained/token_constraint.ts";
import { compileSchema } from "../../../src/engine/constrained/schema_compiler.ts";
import { Rng } from "../../../src/engine/decoding/rng.ts";
import { demoFolder } from "../../_helpers/demo_engines.ts";
import { assert, assertEquals } from "../../_assert.ts";
import { SCHEMA_CORPUS, UNBOUNDED_SCHEMAS } from "./_schemas.ts";
import { validatorFor } from "./_validator.ts";

const EOS = 4072;

async function demoVocabulary(): Promise<Vocabulary> {
  const folder = await demoFolder("demo/chat");
  const json = JSON.parse(await Deno.readTextFile(`${folder}/tokenizer.json`));
  return Vocabulary.fromTokenizerJson(json, 4096);
}

function allowed(mask: Uint32Array, id: number): boolean {
  return (mask[id >>> 5] & (1 << (id & 31))) !== 0;
}

Deno.test("TokenConstraint.mask() allows exactly the tokens accepts() takes, on random walks", async () => {
  const vocab = await demoVocabulary();
  const utf8 = new TextDecoder();
  const rng = new Rng(7);
  for (const [name, schema] of Object.entries({ ...SCHEMA_CORPUS, ...UNBOUNDED_SCHEMAS })) {
    const root = compileSchema(schema);
    const grammar = new ConstrainedGrammar(root, vocab);
    const validate = validatorFor(schema);
    for (let walk = 0; walk < 4; walk++) {
      const constraint = new TokenConstraint(grammar, new Set([EOS]));
      const bytes: number[] = [];
      for (let step = 0; step < 300; step++) {
        const mask = constraint.mask();
        const ids: number[] = [];
        for (let id = 0; id < vocab.size; id++) {
          const ok = allowed(mask, id);
          // Exhaustive for the first steps; after that a sample of the vocabulary.
          if ((step < 8 || id % 29 === step % 29) && ok !== constraint.accepts(id)) {
            throw new Error(
              `${name}: token ${id} mask=${ok} after ${utf8.decode(Uint8Array.from(bytes))}`,
            );
          }
          if (ok) ids.push(id);
        }
        assert(
          ids.length > 0,
          `${name}: no token allowed after ${utf8.decode(Uint8Array.from(bytes))}`,
        );
        const id = ids[Math.floor(rng.nextFloat() * ids.length)];
        assert(constraint.accepts(id));
        if (id === EOS) break;
        constraint.advance(id);
        bytes.push(...vocab.tokenBytes[id]!);
        if (constraint.complete) break;
      }
      if (constraint.complete || bytes.length > 0 && constraint.accepts(EOS)) {
        const text = utf8.decode(Uint8Array.from(bytes));
        assertEquals(validate(JSON.parse(text)), null, `${name}: ${text}`);
      }
    }
  }
});

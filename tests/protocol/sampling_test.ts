import { deriveChoiceSeed, toSamplingParams } from "../../src/protocol/sampling.ts";
import { assert, assertEquals } from "../_assert.ts";

Deno.test("deriveChoiceSeed() keeps the seed for choice 0 and derives distinct stable seeds", () => {
  assertEquals(deriveChoiceSeed(42, 0), 42);
  assertEquals(deriveChoiceSeed(undefined, 3), undefined);
  const seeds = Array.from({ length: 64 }, (_, i) => deriveChoiceSeed(42, i));
  assertEquals(new Set(seeds).size, 64);
  assertEquals(deriveChoiceSeed(42, 5), seeds[5]);
  assert(seeds.every((s) => Number.isSafeInteger(s) && s! >= 0));
  assert(deriveChoiceSeed(43, 1) !== deriveChoiceSeed(42, 1));
  // Negative and huge seeds work too.
  assert(Number.isInteger(deriveChoiceSeed(-7, 2)));
  assert(Number.isInteger(deriveChoiceSeed(Number.MAX_SAFE_INTEGER, 2)));
});

Deno.test("toSamplingParams() leaves out what the request did not set", () => {
  assertEquals(toSamplingParams({}), {});
  assertEquals(toSamplingParams({}, { defaultMaxTokens: 16 }), { maxTokens: 16 });
  assertEquals(toSamplingParams({ max_tokens: 3 }, { maxTokens: 5, defaultMaxTokens: 16 }), {
    maxTokens: 5,
  });
  assertEquals(toSamplingParams({}, { topLogprobs: 0, logprobs: false }), {});
});

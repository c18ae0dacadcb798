// The long lists of a request (token-id prompts, texts, /detokenize ids) are checked in one loop
// and named as zod would name them: the first bad item by its index.
import { parseDetokenizeRequest, parseTokenizeRequest } from "../../src/protocol/tokenize.ts";
import { parseCompletionRequest } from "../../src/protocol/completion_request.ts";
import { ValidationError } from "../../src/core/errors.ts";
import { assertEquals, assertThrows } from "../_assert.ts";

function param(parse: () => unknown): string | null {
  return (assertThrows(parse, ValidationError) as ValidationError).param;
}

Deno.test("/detokenize ids: whole numbers, the first bad one named by its index", () => {
  assertEquals(parseDetokenizeRequest({ model: "m", tokens: [] }).tokens, []);
  assertEquals(parseDetokenizeRequest({ model: "m", tokens: [3, -1, 0] }).tokens, [3, -1, 0]);
  assertEquals(param(() => parseDetokenizeRequest({ model: "m", tokens: [1, "a"] })), "tokens.1");
  assertEquals(param(() => parseDetokenizeRequest({ model: "m", tokens: [1, 2.5] })), "tokens.1");
  assertEquals(param(() => parseDetokenizeRequest({ model: "m", tokens: "1,2" })), "tokens");
  assertEquals(param(() => parseDetokenizeRequest({ model: "m" })), "tokens");
  assertEquals(parseTokenizeRequest({ model: "m", prompt: "hi" }).prompt, "hi");
});

Deno.test("token-id prompts of millions of ids are checked in one pass, and a bad id deep in is named", () => {
  const ids = Array.from({ length: 2_000_000 }, (_, i) => i % 7);
  assertEquals(parseCompletionRequest({ model: "m", prompt: ids }).prompt.length, 2_000_000);
  ids[1_999_999] = -3;
  assertEquals(param(() => parseCompletionRequest({ model: "m", prompt: ids })), "prompt.1999999");
  assertEquals(
    param(() => parseCompletionRequest({ model: "m", prompt: [[1, 2], [3, "x"]] })),
    "prompt.1.1",
  );
});

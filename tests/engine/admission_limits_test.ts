import { assertEquals, assertMatch, assertRejects } from "../_assert.ts";
import { ValidationError } from "../../src/core/errors.ts";
import {
  checkLimit,
  checkTokenIds,
  DEFAULT_ADMISSION_LIMITS,
} from "../../src/engine/admission_limits.ts";

Deno.test("checkLimit() refuses a value over the limit with a 400 naming the field and the flag", async () => {
  checkLimit(DEFAULT_ADMISSION_LIMITS, "maxN", 128, { what: "n", param: "n" });
  const err = await assertRejects(
    () => checkLimit(DEFAULT_ADMISSION_LIMITS, "maxN", 129, { what: "n", param: "n" }),
    ValidationError,
  );
  assertEquals([err.status, err.param, err.code], [400, "n", "invalid_value"]);
  assertMatch(err.message, /n: 129, more than this server's limit of 128 .*--max-n\b/);
});

Deno.test("checkTokenIds() refuses an id outside the vocabulary, naming field and position", async () => {
  checkTokenIds([0, 4095], 4096, "prompt");
  checkTokenIds([999_999_999], 0, "prompt"); // size unknown: only the shape is checked
  const err = await assertRejects(
    () => checkTokenIds([1, 4096], 4096, "input.3"),
    ValidationError,
  );
  assertEquals([err.status, err.param], [400, "input.3"]);
  assertMatch(err.message, /token id 4096 at position 1.*ids 0 to 4095/);
  await assertRejects(() => checkTokenIds([-1], 0, "prompt"), ValidationError);
});

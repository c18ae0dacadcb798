import { assertEquals, assertThrows } from "../../_assert.ts";
import { ServiceError } from "../../../src/core/errors.ts";
import { checkEncoderInputs, encoderFeeds } from "../../../src/engine/embedding/encoder_feeds.ts";

const ALL_INPUTS = { has: () => true };

Deno.test("encoderFeeds() right-pads rows to the longest and masks the padding", () => {
  const { feeds, batch, seq } = encoderFeeds(ALL_INPUTS, [[5, 6, 7], [8]], { padId: 1 });
  assertEquals([batch, seq], [2, 3]);
  assertEquals(feeds.input_ids.dims, [2, 3]);
  assertEquals([...feeds.input_ids.data as BigInt64Array], [5n, 6n, 7n, 8n, 1n, 1n]);
  assertEquals([...feeds.attention_mask.data as BigInt64Array], [1n, 1n, 1n, 1n, 0n, 0n]);
  // No token types given: one segment.
  assertEquals([...feeds.token_type_ids.data as BigInt64Array], [0n, 0n, 0n, 0n, 0n, 0n]);
});

Deno.test("encoderFeeds() feeds a pair's token types, and only the inputs the session takes", () => {
  const pairs = encoderFeeds(ALL_INPUTS, [[1, 2, 3], [1, 2]], {
    padId: 0,
    typeIds: [[0, 0, 1], [0, 1]],
  });
  assertEquals([...pairs.feeds.token_type_ids.data as BigInt64Array], [0n, 0n, 1n, 0n, 1n, 0n]);
  const idsOnly = encoderFeeds({ has: () => false }, [[1, 2]], { padId: 0 });
  assertEquals(Object.keys(idsOnly.feeds), ["input_ids"]);
});

Deno.test("checkEncoderInputs() refuses an input it cannot feed, or no input_ids, naming both", () => {
  checkEncoderInputs({ inputNames: ["input_ids", "attention_mask", "token_type_ids"] }, "m", "e");
  assertThrows(
    () =>
      checkEncoderInputs({ inputNames: ["input_ids", "task_id"] }, "reranker 'r'", "the engine"),
    ServiceError,
    "reranker 'r' takes the input 'task_id', which the engine cannot feed (it feeds input_ids, " +
      "attention_mask, token_type_ids)",
  );
  assertThrows(
    () => checkEncoderInputs({ inputNames: ["attention_mask"] }, "model 'm'", "the engine"),
    ServiceError,
    "model 'm' takes no 'input_ids'",
  );
});

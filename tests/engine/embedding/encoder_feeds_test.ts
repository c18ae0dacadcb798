import { assertEquals } from "../../_assert.ts";
import { encoderFeeds } from "../../../src/engine/embedding/encoder_feeds.ts";

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

import { assertEquals } from "../_assert.ts";
import { truncateIds } from "../../src/engine/truncate_ids.ts";

Deno.test("truncateIds keeps the special tokens it is told to and cuts the side asked for", () => {
  const ids = [101, 1, 2, 3, 4, 102];
  const both = { keepFirst: true, keepLast: true };
  assertEquals(truncateIds(ids, 4, both), [101, 1, 2, 102]);
  assertEquals(truncateIds(ids, 4, { ...both, side: "left" }), [101, 3, 4, 102]);
  assertEquals(truncateIds(ids, 3, { keepFirst: false, keepLast: false }), [101, 1, 2]);
  assertEquals(truncateIds(ids, 3, { keepFirst: false, keepLast: false, side: "left" }), [
    3,
    4,
    102,
  ]);
  // Within n: unchanged (a copy); n below the kept tokens: only they stay.
  assertEquals(truncateIds(ids, 6, both), ids);
  assertEquals(truncateIds(ids, 2, both), [101, 102]);
});

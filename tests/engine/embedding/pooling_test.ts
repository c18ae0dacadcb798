import { assertAlmostEquals, assertEquals } from "../../_assert.ts";
import {
  normalizeInPlace,
  poolRow,
  truncateDimensions,
} from "../../../src/engine/embedding/pooling.ts";

// Two rows of three tokens of dimension 2; row 1 has one padding token.
const hidden = new Float32Array([1, 2, 3, 4, 5, 6, 10, 20, 30, 40, 99, 99]);
const dims = [2, 3, 2];

Deno.test("poolRow() mean-pools only the real tokens", () => {
  assertEquals([...poolRow(hidden, dims, 0, 3, "mean")], [3, 4]);
  assertEquals([...poolRow(hidden, dims, 1, 2, "mean")], [20, 30]);
});

Deno.test("poolRow() takes the first or last real token for cls and last pooling", () => {
  assertEquals([...poolRow(hidden, dims, 1, 2, "cls")], [10, 20]);
  assertEquals([...poolRow(hidden, dims, 1, 2, "last")], [30, 40]);
});

Deno.test("normalizeInPlace() gives unit length and leaves zero vectors alone", () => {
  const v = normalizeInPlace(new Float32Array([3, 4]));
  assertAlmostEquals(v[0], 0.6, 1e-6);
  assertAlmostEquals(v[1], 0.8, 1e-6);
  assertEquals([...normalizeInPlace(new Float32Array(2))], [0, 0]);
});

Deno.test("truncateDimensions() keeps a prefix and renormalizes", () => {
  const v = truncateDimensions(new Float32Array([3, 4, 12]), 2);
  assertEquals(v.length, 2);
  assertAlmostEquals(Math.hypot(...v), 1, 1e-6);
});

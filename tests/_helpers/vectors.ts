// Vector comparisons shared by the embedding tests.
import { assertEquals } from "../_assert.ts";

/** Cosine similarity of two vectors of equal length. */
export function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  assertEquals(a.length, b.length, "vector lengths");
  let ab = 0, aa = 0, bb = 0;
  for (let i = 0; i < a.length; i++) {
    ab += a[i] * b[i];
    aa += a[i] * a[i];
    bb += b[i] * b[i];
  }
  return ab / Math.sqrt(aa * bb);
}

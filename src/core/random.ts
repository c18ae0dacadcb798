/**
 * A small seeded pseudo-random generator for reproducible data (generated model weights, mock
 * embeddings, benchmark inputs). Not for anything secret.
 *
 * @module
 */

/**
 * mulberry32: a tiny, fast 32-bit PRNG; returns floats in [0, 1). The same seed gives the same
 * sequence in every process.
 *
 * @example
 * ```ts
 * import { mulberry32 } from "./random.ts";
 * const next = mulberry32(42);
 * const x = next(); // same sequence for the same seed
 * ```
 */
export function mulberry32(seed: number): () => number {
  let a = seed | 0;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

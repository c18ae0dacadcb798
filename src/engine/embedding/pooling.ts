/**
 * Pooling of token vectors into one vector per input, and vector post-processing.
 *
 * @module
 */

import { halfBitsToFloat32 } from "../../core/float16.ts";

/** How token vectors become one vector. */
export type PoolingMode = "mean" | "cls" | "last";

/**
 * Pools row `row` of `hidden` (`[batch, seq, dim]`, flattened) using the attention mask
 * (`[batch, seq]`, 1 for real tokens). Padding is on the right.
 */
export function poolRow(
  hidden: Float32Array,
  dims: readonly number[],
  row: number,
  tokens: number,
  mode: PoolingMode,
): Float32Array {
  const [, seq, dim] = dims;
  const base = row * seq * dim;
  if (mode === "cls") return hidden.slice(base, base + dim);
  if (mode === "last") return hidden.slice(base + (tokens - 1) * dim, base + tokens * dim);
  const out = new Float32Array(dim);
  for (let t = 0; t < tokens; t++) {
    const offset = base + t * dim;
    for (let d = 0; d < dim; d++) out[d] += hidden[offset + d];
  }
  for (let d = 0; d < dim; d++) out[d] /= tokens;
  return out;
}

/** Scales `v` to unit length in place (a zero vector stays zero) and returns it. */
export function normalizeInPlace(v: Float32Array): Float32Array {
  let sum = 0;
  for (let i = 0; i < v.length; i++) sum += v[i] * v[i];
  const norm = Math.sqrt(sum);
  if (norm > 0) { for (let i = 0; i < v.length; i++) v[i] /= norm; }
  return v;
}

/** Keeps the first `dimensions` values (Matryoshka-style) and renormalizes. */
export function truncateDimensions(v: Float32Array, dimensions: number): Float32Array {
  return normalizeInPlace(v.slice(0, dimensions));
}

/** LayerNorm without scale or shift over the whole vector (nomic's Matryoshka step), in place. */
export function layerNormInPlace(v: Float32Array, eps = 1e-5): Float32Array {
  let mean = 0;
  for (let i = 0; i < v.length; i++) mean += v[i];
  mean /= v.length;
  let variance = 0;
  for (let i = 0; i < v.length; i++) variance += (v[i] - mean) ** 2;
  variance /= v.length;
  const scale = 1 / Math.sqrt(variance + eps);
  for (let i = 0; i < v.length; i++) v[i] = (v[i] - mean) * scale;
  return v;
}

/**
 * Output data as float32: float16 outputs come back as Float16Array or as Uint16Array raw bits,
 * depending on the runtime.
 */
export function toFloat32(type: string, data: ArrayLike<number>): Float32Array {
  if (data instanceof Float32Array) return data;
  if (type === "float16" && data instanceof Uint16Array) return halfBitsToFloat32(data);
  if (type === "float32" || type === "float16" || type === "float64") {
    return Float32Array.from(data);
  }
  throw new TypeError(`the model's output is ${type}; a float output is needed`);
}

/**
 * Small vector helpers shared by the providers: FNV-1a hashing, L2 normalization and the checks
 * applied to every vector a service sends back.
 *
 * @module
 */

import { ServiceError } from "../core/errors.ts";

const ENCODER = new TextEncoder();

/** 32-bit FNV-1a hash of the UTF-8 bytes of `text`, as an unsigned integer. */
export function fnv1a32(text: string, basis = 0x811c9dc5): number {
  let hash = basis >>> 0;
  for (const byte of ENCODER.encode(text)) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash >>> 0;
}

/** Divides by the Euclidean length in place; a zero vector stays zero. Returns `vector`. */
export function l2NormalizeInPlace(vector: number[]): number[] {
  let sum = 0;
  for (const v of vector) sum += v * v;
  if (sum === 0) return vector;
  const inverse = 1 / Math.sqrt(sum);
  for (let i = 0; i < vector.length; i++) vector[i] *= inverse;
  return vector;
}

/**
 * Checks that `value` is a list of `count` vectors of finite numbers (all the same length) and
 * returns it; otherwise a `ServiceError` saying what the provider sent.
 */
export function checkVectors(value: unknown, count: number, provider: string): number[][] {
  const fail = (what: string): never => {
    throw new ServiceError(`${provider} sent an unexpected answer: ${what}`, {
      code: "upstream_bad_response",
    });
  };
  if (!Array.isArray(value)) return fail("no list of embeddings");
  if (value.length !== count) return fail(`${value.length} embeddings for ${count} inputs`);
  const size = Array.isArray(value[0]) ? value[0].length : -1;
  for (const [i, vector] of value.entries()) {
    if (!Array.isArray(vector) || vector.length === 0) return fail(`embedding ${i} is not a list`);
    if (vector.length !== size) {
      return fail(`embeddings of different sizes (${size}, ${vector.length})`);
    }
    if (!vector.every((x) => typeof x === "number" && Number.isFinite(x))) {
      return fail(`embedding ${i} holds something other than finite numbers`);
    }
  }
  return value as number[][];
}

/** Vectors of an OpenAI-style answer `{data: [{index, embedding}]}`, in input order. */
export function openAiStyleVectors(json: unknown, count: number, provider: string): number[][] {
  const data = (json as { data?: unknown } | null)?.data;
  if (!Array.isArray(data)) return checkVectors(undefined, count, provider);
  const sorted = data.every((d) => typeof d?.index === "number")
    ? [...data].sort((a, b) => a.index - b.index)
    : data;
  return checkVectors(sorted.map((d) => d?.embedding), count, provider);
}

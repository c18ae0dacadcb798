/**
 * `hash`: deterministic, model-free embeddings (feature hashing). Text is NFKC-normalized and
 * lower-cased, split into words (letters, marks, digits); every word and every character n-gram
 * of `<word>` is hashed with FNV-1a into one of `dimensions` buckets with a sign taken from a
 * second hash, and the sum is L2-normalized. Texts sharing words or word pieces get similar
 * vectors; no semantics beyond that. An input without any word gives the zero vector.
 *
 * @module
 */

import { ValidationError } from "../../core/errors.ts";
import { LocalFunctionEmbedder } from "../_base_embedder.ts";
import { fnv1a32, l2NormalizeInPlace } from "../_vector.ts";
import type { BaseEmbedderOptions, Embedder, EmbeddingMethodInfo, LocalOptions } from "../types.ts";
import { checkDimensions } from "./_catalog_util.ts";

/** Default vector size of the hash embedder. */
export const HASH_DEFAULT_DIMENSIONS = 384;

/** Static facts of the `hash` method. */
export const HASH_PROVIDER: EmbeddingMethodInfo = Object.freeze({
  method: "hash",
  description: "Deterministic feature hashing of words and character n-grams (no model)",
  models: [
    { name: "hash-384", dimensions: 384 },
    { name: "hash-768", dimensions: 768 },
    { name: "hash-1024", dimensions: 1024 },
  ],
  defaultModel: "hash-384",
  defaultDimensions: HASH_DEFAULT_DIMENSIONS,
  needsKey: false,
  envVariable: null,
  envVariables: [],
  defaultBaseUrl: null,
  local: true,
});

const WORD = /[\p{L}\p{M}\p{N}]+/gu;
const SIGN_BASIS = 0x9747b28c;

/** Options of {@link createHashEmbedder}. */
export type HashEmbedderOptions =
  & Pick<BaseEmbedderOptions, "model" | "dimensions">
  & Pick<LocalOptions, "ngram">;

function hashVector(text: string, size: number, ngram: number): number[] {
  const vector = new Array<number>(size).fill(0);
  const add = (feature: string, weight: number) => {
    const bucket = fnv1a32(feature) % size;
    vector[bucket] += (fnv1a32(feature, SIGN_BASIS) & 1) === 0 ? weight : -weight;
  };
  for (const word of text.normalize("NFKC").toLowerCase().match(WORD) ?? []) {
    add(`w:${word}`, 1);
    if (ngram <= 0) continue;
    const chars = [...`<${word}>`];
    if (chars.length <= ngram) continue;
    for (let i = 0; i + ngram <= chars.length; i++) {
      add(`g:${chars.slice(i, i + ngram).join("")}`, 0.5);
    }
  }
  return l2NormalizeInPlace(vector);
}

/**
 * Creates a `hash` embedder. The size is `dimensions`, else N of a model named `hash-N`, else 384.
 *
 * @example
 * ```ts
 * import { createHashEmbedder } from "./hash.ts";
 * const embedder = createHashEmbedder({ dimensions: 256 });
 * const [a, b] = await embedder.embedBatch(["red apple", "red apples"]); // close vectors
 * ```
 */
export function createHashEmbedder(options: HashEmbedderOptions = {}): Embedder {
  const fromName = /^hash-(\d+)$/.exec(options.model ?? "")?.[1];
  const size = checkDimensions(options.dimensions ?? (fromName ? Number(fromName) : undefined)) ??
    HASH_DEFAULT_DIMENSIONS;
  const ngram = options.ngram ?? 3;
  if (!Number.isInteger(ngram) || ngram < 0 || ngram > 16) {
    throw new ValidationError(`ngram must be a whole number from 0 to 16 (got ${ngram})`, {
      param: "ngram",
    });
  }
  const model = options.model ?? `hash-${size}`;
  return new LocalFunctionEmbedder("hash", model, size, (text) => hashVector(text, size, ngram));
}

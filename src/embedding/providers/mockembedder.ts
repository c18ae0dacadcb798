/**
 * `mockembedder`: seeded random unit vectors for unit tests. The vector of a text comes from a
 * mulberry32 generator seeded with the FNV-1a hash of `seed + "\0" + text`, drawn uniformly in
 * [-1, 1) and L2-normalized — integer arithmetic and one division, so the same seed and text
 * give the same vector in every process and on every machine.
 *
 * @module
 */

import { LocalFunctionEmbedder } from "../_base_embedder.ts";
import { fnv1a32, l2NormalizeInPlace } from "../_vector.ts";
import type { BaseEmbedderOptions, Embedder, EmbeddingMethodInfo, LocalOptions } from "../types.ts";
import { checkDimensions } from "./_catalog_util.ts";
import { mulberry32 } from "../../core/random.ts";

/** Default seed of the mock embedder. */
export const MOCK_DEFAULT_SEED = "svc";

/** Static facts of the `mockembedder` method. */
export const MOCK_PROVIDER: EmbeddingMethodInfo = Object.freeze({
  method: "mockembedder",
  description: "Seeded deterministic random unit vectors, for unit tests",
  models: [{ name: "mockembedder", dimensions: 384 }],
  defaultModel: "mockembedder",
  defaultDimensions: 384,
  needsKey: false,
  envVariable: null,
  envVariables: [],
  defaultBaseUrl: null,
  local: true,
});

/** Options of {@link createMockEmbedder}. */
export type MockEmbedderOptions =
  & Pick<BaseEmbedderOptions, "model" | "dimensions">
  & Pick<LocalOptions, "seed">;

function mockVector(text: string, size: number, seed: string): number[] {
  const next = mulberry32(fnv1a32(`${seed}\0${text}`));
  return l2NormalizeInPlace(Array.from({ length: size }, () => next() * 2 - 1));
}

/**
 * Creates a `mockembedder` (default 384 dimensions, seed `svc`).
 *
 * @example
 * ```ts
 * import { createMockEmbedder } from "./mockembedder.ts";
 * const embedder = createMockEmbedder({ seed: 7, dimensions: 8 });
 * console.log(await embedder.embed("a")); // the same 8 numbers in every run
 * ```
 */
export function createMockEmbedder(options: MockEmbedderOptions = {}): Embedder {
  const size = checkDimensions(options.dimensions) ?? MOCK_PROVIDER.defaultDimensions!;
  const seed = String(options.seed ?? MOCK_DEFAULT_SEED);
  const model = options.model ?? MOCK_PROVIDER.defaultModel;
  return new LocalFunctionEmbedder(
    "mockembedder",
    model,
    size,
    (text) => mockVector(text, size, seed),
  );
}

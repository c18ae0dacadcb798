/**
 * `listEmbeddingModels()`: the methods, their known models and what each needs (spec
 * `list_embedding_models`).
 *
 * @module
 */

import { EMBEDDING_METHODS, PROVIDERS } from "./_registry.ts";
import type { EmbeddingMethodInfo } from "./types.ts";

/**
 * Lists every embedding method: description, known models with their sizes, default model,
 * whether a key is needed and which environment variable holds it. Returns fresh copies.
 *
 * @example
 * ```ts
 * import { listEmbeddingModels } from "@svc/cli";
 * for (const m of listEmbeddingModels()) {
 *   console.log(m.method, m.defaultModel, m.defaultDimensions, m.needsKey ? m.envVariable : "-");
 * }
 * ```
 */
export function listEmbeddingModels(): EmbeddingMethodInfo[] {
  return EMBEDDING_METHODS.map((method) => structuredClone(PROVIDERS[method].info));
}

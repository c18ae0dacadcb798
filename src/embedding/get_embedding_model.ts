/**
 * `getEmbeddingModel(method, options)`: the entry point of the embedding library (spec
 * `get_embedding_model`).
 *
 * @module
 */

import { PROVIDERS, resolveEmbeddingMethod } from "./_registry.ts";
import type { Embedder, EmbeddingModelOptions } from "./types.ts";

/**
 * Creates the embedder of `method` (see `listEmbeddingModels()`; aliases: huggingface,
 * openai-compatible, compat, siliconflow, mock). `options.model` picks the model, default the
 * method's default. Keys come from `options.apiKey` or the method's environment variable.
 *
 * Errors: `ValidationError` for an unknown method (listing the known ones) or a bad option;
 * `ConfigurationError` for a missing key or region, naming the variable to set. Remote services
 * are not contacted until the first `embed` call; `hf` loads its model then too.
 *
 * @example
 * ```ts
 * import { getEmbeddingModel } from "@svc/cli";
 * const embedder = getEmbeddingModel("hash", { dimensions: 128 });
 * const vector = await embedder.embed("hello"); // number[128], unit length
 * const jina = getEmbeddingModel("jina", { model: "jina-embeddings-v3", apiKey: "jina_..." });
 * ```
 */
export function getEmbeddingModel(
  method: string,
  options: EmbeddingModelOptions = {},
): Embedder {
  return PROVIDERS[resolveEmbeddingMethod(method)].create(options);
}

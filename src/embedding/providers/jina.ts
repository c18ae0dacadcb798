/**
 * `jina`: Jina AI embeddings, multilingual, with late chunking. `POST {baseUrl}/embeddings` with
 * `{model, input: [texts], embedding_type: "float", task?, late_chunking?, dimensions?,
 * normalized?}` and `Authorization: Bearer JINA_API_KEY`; answer `{data: [{index, embedding}]}`.
 *
 * With `lateChunking`, Jina concatenates the inputs of one request and embeds them as one
 * document, so a batch is never split across requests (each vector sees the whole batch).
 *
 * @module
 */

import { BaseEmbedder } from "../_base_embedder.ts";
import { joinUrl } from "../../core/fetch_with_timeout.ts";
import { postJson } from "../_http.ts";
import { requireKey } from "../_settings.ts";
import { openAiStyleVectors } from "../_vector.ts";
import type { BaseEmbedderOptions, Embedder, EmbeddingMethodInfo, JinaOptions } from "../types.ts";
import { checkDimensions, knownDimensions } from "./_catalog_util.ts";

/** Static facts of the `jina` method. */
export const JINA_PROVIDER: EmbeddingMethodInfo = Object.freeze({
  method: "jina",
  description: "Jina AI embeddings (multilingual, late chunking, task adapters)",
  models: [
    {
      name: "jina-embeddings-v3",
      dimensions: 1024,
      supportedDimensions: [32, 64, 128, 256, 512, 768, 1024],
    },
    { name: "jina-embeddings-v2-base-en", dimensions: 768 },
    { name: "jina-embeddings-v2-base-zh", dimensions: 768 },
    { name: "jina-embeddings-v2-base-de", dimensions: 768 },
    { name: "jina-embeddings-v2-base-es", dimensions: 768 },
  ],
  defaultModel: "jina-embeddings-v3",
  defaultDimensions: 1024,
  needsKey: true,
  envVariable: "JINA_API_KEY",
  envVariables: ["JINA_API_KEY"],
  defaultBaseUrl: "https://api.jina.ai/v1",
  local: false,
});

/** Options of {@link createJinaEmbedder}. */
export type JinaEmbedderOptions = BaseEmbedderOptions & JinaOptions;

class JinaEmbedder extends BaseEmbedder {
  readonly #url: string;
  readonly #body: Record<string, unknown>;
  readonly #options: JinaEmbedderOptions;
  readonly #apiKey: string;

  constructor(model: string, apiKey: string, options: JinaEmbedderOptions) {
    const dimensions = checkDimensions(options.dimensions);
    super("jina", model, {
      dimensions: dimensions ?? knownDimensions(JINA_PROVIDER, model),
      maxBatchSize: options.maxBatchSize ?? 128,
    });
    this.#url = joinUrl(options.baseUrl ?? JINA_PROVIDER.defaultBaseUrl!, "embeddings");
    this.#apiKey = apiKey;
    this.#options = options;
    this.#body = { model, embedding_type: "float" };
    if (options.task !== undefined) this.#body.task = options.task;
    if (options.lateChunking !== undefined) this.#body.late_chunking = options.lateChunking;
    if (dimensions !== undefined) this.#body.dimensions = dimensions;
    if (options.normalized !== undefined) this.#body.normalized = options.normalized;
  }

  protected override chunkSize(total: number): number {
    return this.#options.lateChunking ? total : super.chunkSize(total);
  }

  protected async embedChunk(texts: string[]): Promise<number[][]> {
    const json = await postJson(this.#url, { ...this.#body, input: texts }, {
      provider: "Jina AI",
      keyVariable: "JINA_API_KEY",
      headers: { authorization: `Bearer ${this.#apiKey}`, accept: "application/json" },
      timeoutMs: this.#options.timeoutMs,
      fetch: this.#options.fetch,
    });
    return openAiStyleVectors(json, texts.length, "Jina AI");
  }
}

/**
 * Creates a `jina` embedder.
 *
 * @example
 * ```ts
 * import { createJinaEmbedder } from "./jina.ts";
 * const embedder = createJinaEmbedder({ apiKey: "jina_...", task: "retrieval.passage", lateChunking: true });
 * const vectors = await embedder.embedBatch(["Berlin is a city.", "It is the capital."]);
 * ```
 */
export function createJinaEmbedder(options: JinaEmbedderOptions = {}): Embedder {
  const apiKey = requireKey(options.apiKey, "JINA_API_KEY", {
    provider: "Jina AI",
    env: options.env,
  });
  return new JinaEmbedder(options.model ?? JINA_PROVIDER.defaultModel, apiKey, options);
}

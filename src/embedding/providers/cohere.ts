/**
 * `cohere`: Cohere Embed, multilingual. v2 API: `POST {baseUrl}/v2/embed` with `{model, texts,
 * input_type, embedding_types: ["float"], truncate?, output_dimension?}` and `Authorization:
 * Bearer COHERE_API_KEY`; answer `{embeddings: {float: [[...]]}}`. At most 96 texts per request.
 *
 * @module
 */

import { BaseEmbedder } from "../_base_embedder.ts";
import { joinUrl } from "../../core/fetch_with_timeout.ts";
import { postJson } from "../_http.ts";
import { requireKey } from "../_settings.ts";
import { checkVectors } from "../_vector.ts";
import type {
  BaseEmbedderOptions,
  CohereOptions,
  Embedder,
  EmbeddingMethodInfo,
} from "../types.ts";
import { checkDimensions, knownDimensions } from "./_catalog_util.ts";

/** Static facts of the `cohere` method. */
export const COHERE_PROVIDER: EmbeddingMethodInfo = Object.freeze({
  method: "cohere",
  description: "Cohere Embed v2 API (multilingual)",
  models: [
    { name: "embed-multilingual-v3.0", dimensions: 1024 },
    { name: "embed-english-v3.0", dimensions: 1024 },
    { name: "embed-multilingual-light-v3.0", dimensions: 384 },
    { name: "embed-english-light-v3.0", dimensions: 384 },
    { name: "embed-v4.0", dimensions: 1536, supportedDimensions: [256, 512, 1024, 1536] },
  ],
  defaultModel: "embed-multilingual-v3.0",
  defaultDimensions: 1024,
  needsKey: true,
  envVariable: "COHERE_API_KEY",
  envVariables: ["COHERE_API_KEY"],
  defaultBaseUrl: "https://api.cohere.com",
  local: false,
});

/** Options of {@link createCohereEmbedder}. */
export type CohereEmbedderOptions = BaseEmbedderOptions & CohereOptions;

class CohereEmbedder extends BaseEmbedder {
  readonly #url: string;
  readonly #apiKey: string;
  readonly #body: Record<string, unknown>;
  readonly #options: CohereEmbedderOptions;

  constructor(model: string, apiKey: string, options: CohereEmbedderOptions) {
    const dimensions = checkDimensions(options.dimensions);
    super("cohere", model, {
      dimensions: dimensions ?? knownDimensions(COHERE_PROVIDER, model),
      maxBatchSize: Math.min(options.maxBatchSize ?? 96, 96),
    });
    this.#url = joinUrl(options.baseUrl ?? COHERE_PROVIDER.defaultBaseUrl!, "v2/embed");
    this.#apiKey = apiKey;
    this.#options = options;
    this.#body = {
      model,
      input_type: options.inputType ?? "search_document",
      embedding_types: ["float"],
    };
    if (options.truncate !== undefined) this.#body.truncate = options.truncate;
    if (dimensions !== undefined) this.#body.output_dimension = dimensions;
  }

  protected async embedChunk(texts: string[]): Promise<number[][]> {
    const json = await postJson(this.#url, { ...this.#body, texts }, {
      provider: "Cohere",
      keyVariable: "COHERE_API_KEY",
      headers: { authorization: `Bearer ${this.#apiKey}`, accept: "application/json" },
      timeoutMs: this.#options.timeoutMs,
      fetch: this.#options.fetch,
    });
    const embeddings = (json as { embeddings?: { float?: unknown } } | null)?.embeddings;
    return checkVectors(embeddings?.float, texts.length, "Cohere");
  }
}

/**
 * Creates a `cohere` embedder.
 *
 * @example
 * ```ts
 * import { createCohereEmbedder } from "./cohere.ts";
 * const embedder = createCohereEmbedder({ apiKey: "co-...", inputType: "search_query" });
 * const vector = await embedder.embed("Wo ist der Bahnhof?");
 * ```
 */
export function createCohereEmbedder(options: CohereEmbedderOptions = {}): Embedder {
  const apiKey = requireKey(options.apiKey, "COHERE_API_KEY", {
    provider: "Cohere",
    env: options.env,
  });
  return new CohereEmbedder(options.model ?? COHERE_PROVIDER.defaultModel, apiKey, options);
}

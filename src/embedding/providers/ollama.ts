/**
 * `ollama`: a local Ollama server. `POST {baseUrl}/api/embed` with `{model, input: [texts],
 * dimensions?}`; answer `{embeddings: [[...]]}`. Base URL from the option, else
 * OLLAMA_BASE_URL, else http://localhost:11434. No key (an `apiKey` option is sent as a bearer
 * token, for servers behind an authenticating proxy).
 *
 * @module
 */

import { BaseEmbedder } from "../_base_embedder.ts";
import { joinUrl } from "../../core/fetch_with_timeout.ts";
import { postJson } from "../_http.ts";
import { resolveSetting } from "../_settings.ts";
import { checkVectors } from "../_vector.ts";
import type { BaseEmbedderOptions, Embedder, EmbeddingMethodInfo } from "../types.ts";
import { checkDimensions, knownDimensions } from "./_catalog_util.ts";

/** Static facts of the `ollama` method. */
export const OLLAMA_PROVIDER: EmbeddingMethodInfo = Object.freeze({
  method: "ollama",
  description: "Ollama local server (/api/embed)",
  models: [
    { name: "nomic-embed-text", dimensions: 768 },
    { name: "mxbai-embed-large", dimensions: 1024 },
    { name: "all-minilm", dimensions: 384 },
    { name: "bge-m3", dimensions: 1024 },
    { name: "snowflake-arctic-embed", dimensions: 1024 },
  ],
  defaultModel: "nomic-embed-text",
  defaultDimensions: 768,
  needsKey: false,
  envVariable: null,
  envVariables: ["OLLAMA_BASE_URL"],
  defaultBaseUrl: "http://localhost:11434",
  local: true,
});

class OllamaEmbedder extends BaseEmbedder {
  readonly #url: string;
  readonly #options: BaseEmbedderOptions;
  readonly #requested: number | undefined;

  constructor(model: string, baseUrl: string, options: BaseEmbedderOptions) {
    const dimensions = checkDimensions(options.dimensions);
    super("ollama", model, {
      dimensions: dimensions ?? knownDimensions(OLLAMA_PROVIDER, model),
      maxBatchSize: options.maxBatchSize ?? 64,
    });
    this.#url = joinUrl(baseUrl, "api/embed");
    this.#options = options;
    this.#requested = dimensions;
  }

  protected async embedChunk(texts: string[]): Promise<number[][]> {
    const body: Record<string, unknown> = { model: this.model, input: texts };
    if (this.#requested !== undefined) body.dimensions = this.#requested;
    const json = await postJson(this.#url, body, {
      provider: "Ollama",
      keyVariable: "the apiKey option",
      headers: this.#options.apiKey ? { authorization: `Bearer ${this.#options.apiKey}` } : {},
      timeoutMs: this.#options.timeoutMs,
      fetch: this.#options.fetch,
    });
    const embeddings = (json as { embeddings?: unknown } | null)?.embeddings;
    return checkVectors(embeddings, texts.length, "Ollama");
  }
}

/**
 * Creates an `ollama` embedder.
 *
 * @example
 * ```ts
 * import { createOllamaEmbedder } from "./ollama.ts";
 * const embedder = createOllamaEmbedder({ model: "nomic-embed-text" });
 * const vector = await embedder.embed("hello"); // needs `ollama pull nomic-embed-text`
 * ```
 */
export function createOllamaEmbedder(options: BaseEmbedderOptions = {}): Embedder {
  const baseUrl = resolveSetting(options.baseUrl, "OLLAMA_BASE_URL", options.env) ??
    OLLAMA_PROVIDER.defaultBaseUrl!;
  return new OllamaEmbedder(options.model ?? OLLAMA_PROVIDER.defaultModel, baseUrl, options);
}

/**
 * `openai`: any OpenAI-compatible `POST {baseUrl}/embeddings` — OpenAI itself, vLLM, TEI, Ollama's
 * `/v1`, another Svc server. Base URL from the option, else COMPAT_BASE_URL, else OpenAI; key
 * from the option, else COMPAT_API_KEY (not needed when the URL is on this machine).
 *
 * Wire format: body `{model, input: [texts], encoding_format: "float", dimensions?}`, answer
 * `{data: [{index, embedding}]}`, key as `Authorization: Bearer`.
 *
 * @module
 */

import { BaseEmbedder } from "../_base_embedder.ts";
import { joinUrl } from "../../core/fetch_with_timeout.ts";
import { postJson } from "../_http.ts";
import { requireKey, resolveSetting } from "../_settings.ts";
import { isLoopbackUrl } from "../../core/loopback.ts";
import { openAiStyleVectors } from "../_vector.ts";
import { rankedResultsOf } from "../../protocol/rerank_results.ts";
import type {
  BaseEmbedderOptions,
  Embedder,
  EmbeddingMethod,
  EmbeddingMethodInfo,
  RankedText,
} from "../types.ts";
import { ServiceError } from "../../core/errors.ts";
import { checkDimensions, knownDimensions } from "./_catalog_util.ts";

/** Static facts of the `openai` method. */
export const OPENAI_PROVIDER: EmbeddingMethodInfo = Object.freeze({
  method: "openai",
  description: "OpenAI-compatible /v1/embeddings API (OpenAI, vLLM, TEI, a Svc server)",
  models: [
    { name: "text-embedding-3-small", dimensions: 1536, supportedDimensions: [256, 512, 1024] },
    { name: "text-embedding-3-large", dimensions: 3072, supportedDimensions: [256, 1024] },
    { name: "text-embedding-ada-002", dimensions: 1536 },
  ],
  defaultModel: "text-embedding-3-small",
  defaultDimensions: 1536,
  needsKey: true,
  envVariable: "COMPAT_API_KEY",
  envVariables: ["COMPAT_API_KEY", "COMPAT_BASE_URL"],
  defaultBaseUrl: "https://api.openai.com/v1",
  local: false,
});

/** How one OpenAI-style service is called. */
export interface OpenAiStyleSettings {
  method: EmbeddingMethod;
  /** Name in messages. */
  provider: string;
  model: string;
  baseUrl: string;
  /** Path appended to the base URL (default `embeddings`). */
  path?: string;
  apiKey?: string;
  /** Variable named when the key is rejected. */
  keyVariable: string;
  /** Sent as `dimensions` when set. */
  dimensions?: number;
  /** Size expected before the first answer. */
  knownDimensions?: number;
  maxBatchSize: number;
  /** Send `encoding_format: "float"` (default true). */
  encodingFormat?: boolean;
  /** More body fields. */
  extraBody?: Record<string, unknown>;
  /** Reranker at `{baseUrl}/rerank`; without one the embedder has no `rerank`. */
  rerankModel?: string;
  timeoutMs?: number;
  fetch?: typeof fetch;
}

/** An embedder speaking the OpenAI embeddings wire format; shared by openai, zhipu, siliconcloud. */
export class OpenAiStyleEmbedder extends BaseEmbedder {
  readonly #settings: OpenAiStyleSettings;

  /** Ranks documents against a query at `{baseUrl}/rerank`, best first (with a `rerankModel`). */
  readonly rerank?: (
    query: string,
    documents: string[],
    options?: { topN?: number },
  ) => Promise<RankedText[]>;

  constructor(settings: OpenAiStyleSettings) {
    super(settings.method, settings.model, {
      dimensions: settings.dimensions ?? settings.knownDimensions,
      maxBatchSize: settings.maxBatchSize,
    });
    this.#settings = settings;
    const model = settings.rerankModel;
    if (model !== undefined) {
      this.rerank = (q, docs, options) => this.#rerank(model, q, docs, options);
    }
  }

  async #rerank(
    model: string,
    query: string,
    documents: string[],
    options: { topN?: number } = {},
  ): Promise<RankedText[]> {
    const s = this.#settings;
    if (documents.length === 0) return [];
    const body: Record<string, unknown> = { model, query, documents, return_documents: false };
    if (options.topN !== undefined) body.top_n = options.topN;
    const json = await postJson(joinUrl(s.baseUrl, "rerank"), body, {
      provider: s.provider,
      keyVariable: s.keyVariable,
      headers: s.apiKey ? { authorization: `Bearer ${s.apiKey}` } : {},
      timeoutMs: s.timeoutMs,
      fetch: s.fetch,
    });
    const ranked = rankedResultsOf(json, documents);
    if (!ranked) {
      throw new ServiceError(`the ${s.provider} answered /rerank without valid results`, {
        code: "bad_response",
      });
    }
    return ranked;
  }

  protected async embedChunk(texts: string[]): Promise<number[][]> {
    const s = this.#settings;
    const body: Record<string, unknown> = { model: s.model, input: texts };
    if (s.encodingFormat !== false) body.encoding_format = "float";
    if (s.dimensions !== undefined) body.dimensions = s.dimensions;
    Object.assign(body, s.extraBody);
    const json = await postJson(joinUrl(s.baseUrl, s.path ?? "embeddings"), body, {
      provider: s.provider,
      keyVariable: s.keyVariable,
      headers: s.apiKey ? { authorization: `Bearer ${s.apiKey}` } : {},
      timeoutMs: s.timeoutMs,
      fetch: s.fetch,
    });
    return openAiStyleVectors(json, texts.length, s.provider);
  }
}

/**
 * Creates an `openai` embedder.
 *
 * @example
 * ```ts
 * import { createOpenAiEmbedder } from "./openai.ts";
 * // Our own embedding server: no key needed on loopback.
 * const embedder = createOpenAiEmbedder({ baseUrl: "http://127.0.0.1:8090/v1", model: "demo/embed" });
 * console.log((await embedder.embed("hello")).length);
 * ```
 */
export function createOpenAiEmbedder(options: BaseEmbedderOptions = {}): Embedder {
  const baseUrl = resolveSetting(options.baseUrl, "COMPAT_BASE_URL", options.env) ??
    OPENAI_PROVIDER.defaultBaseUrl!;
  const apiKey = isLoopbackUrl(baseUrl)
    ? resolveSetting(options.apiKey, "COMPAT_API_KEY", options.env)
    : requireKey(options.apiKey, "COMPAT_API_KEY", {
      provider: `the OpenAI-compatible API at ${baseUrl}`,
      env: options.env,
    });
  const model = options.model ?? OPENAI_PROVIDER.defaultModel;
  return new OpenAiStyleEmbedder({
    method: "openai",
    provider: "OpenAI-compatible API",
    model,
    baseUrl,
    apiKey,
    keyVariable: "COMPAT_API_KEY",
    dimensions: checkDimensions(options.dimensions),
    knownDimensions: knownDimensions(OPENAI_PROVIDER, model),
    maxBatchSize: options.maxBatchSize ?? 512,
    rerankModel: options.rerankModel,
    timeoutMs: options.timeoutMs,
    fetch: options.fetch,
  });
}

/** What differs between the keyed cloud services that speak the OpenAI format. */
export interface KeyedServiceSettings {
  /** Name in messages, e.g. "Zhipu AI". */
  provider: string;
  /** Most texts per request, unless the options say otherwise. */
  maxBatchSize: number;
  /** Send `encoding_format: "float"` (default true). */
  encodingFormat?: boolean;
}

/**
 * An OpenAI-style embedder for a keyed cloud service described by its catalogue entry `info`
 * (default model and base URL, key variable): zhipu, siliconcloud.
 *
 * @example
 * ```ts
 * import { createKeyedOpenAiStyleEmbedder } from "./openai.ts";
 * import { ZHIPU_PROVIDER } from "./zhipu.ts";
 * const embedder = createKeyedOpenAiStyleEmbedder(ZHIPU_PROVIDER, { apiKey: "key" }, {
 *   provider: "Zhipu AI",
 *   maxBatchSize: 64,
 * });
 * ```
 */
export function createKeyedOpenAiStyleEmbedder(
  info: EmbeddingMethodInfo,
  options: BaseEmbedderOptions,
  service: KeyedServiceSettings,
): Embedder {
  const model = options.model ?? info.defaultModel;
  const keyVariable = info.envVariable!;
  return new OpenAiStyleEmbedder({
    method: info.method,
    provider: service.provider,
    model,
    baseUrl: options.baseUrl ?? info.defaultBaseUrl!,
    apiKey: requireKey(options.apiKey, keyVariable, {
      provider: service.provider,
      env: options.env,
    }),
    keyVariable,
    dimensions: checkDimensions(options.dimensions),
    knownDimensions: knownDimensions(info, model),
    maxBatchSize: options.maxBatchSize ?? service.maxBatchSize,
    encodingFormat: service.encodingFormat,
    timeoutMs: options.timeoutMs,
    fetch: options.fetch,
  });
}

/**
 * Shared types of the embedding library: the {@link Embedder} every provider returns, the method
 * names, and the options `getEmbeddingModel()` accepts.
 *
 * @module
 */

import type { EnvMap } from "../config/env.ts";
import type { Device, EmbedEngine } from "../core/inference_types.ts";
import type { Dtype } from "../engine/dtype.ts";

/** Provider methods, as `getEmbeddingModel(method, …)` takes them. */
export type EmbeddingMethod =
  | "hf"
  | "openai"
  | "jina"
  | "zhipu"
  | "cohere"
  | "bedrock"
  | "ollama"
  | "siliconcloud"
  | "hash"
  | "mockembedder";

/**
 * A text embedder: one provider and model. `embed` takes ONE text and returns one vector (the
 * spec's `embedder.embed(text)`); `embedBatch` takes a list and returns vectors in input order.
 *
 * @example
 * ```ts
 * import { getEmbeddingModel } from "@svc/cli";
 * const embedder = getEmbeddingModel("hash", { dimensions: 64 });
 * const vector = await embedder.embed("hello world"); // 64 numbers, unit length
 * ```
 */
export interface Embedder {
  /** The provider method. */
  readonly method: EmbeddingMethod;
  /** The model name as sent to the provider. */
  readonly model: string;
  /** Vector size: known up front for catalogued models, else learned from the first answer. */
  readonly dimensions: number | undefined;
  /** Embeds one text. */
  embed(text: string): Promise<number[]>;
  /** Embeds many texts (split into provider-sized requests), in input order. */
  embedBatch(texts: string[]): Promise<number[][]>;
  /**
   * Ranks documents by relevance to a query, best first, with the reranker the service serves
   * beside its embedding model (only embedders given a `rerankModel` have it).
   */
  rerank?(query: string, documents: string[], options?: { topN?: number }): Promise<RankedText[]>;
  /** Releases what the embedder holds (a loaded local model); a no-op for remote providers. */
  dispose(): Promise<void>;
}

/** One document of a rerank answer. */
export interface RankedText {
  /** Position of the document in the call. */
  index: number;
  /** Relevance to the query; higher is more relevant. */
  score: number;
  /** The document's text. */
  document: string;
}

/** Options every provider understands. All are optional. */
export interface BaseEmbedderOptions {
  /** Model name; default: the method's default model (see `listEmbeddingModels()`). */
  model?: string;
  /** API key; when absent it is read from the method's environment variable. */
  apiKey?: string;
  /** Base URL of the service (tests point this at a local stand-in). */
  baseUrl?: string;
  /** Requested vector size (providers that support shortening; the size of hash/mock vectors). */
  dimensions?: number;
  /** Stands in for the process environment when reading keys and URLs (tests, apps). */
  env?: EnvMap;
  /** Per-request timeout in ms (default 60000). */
  timeoutMs?: number;
  /** Most texts per request; default the provider's documented limit. */
  maxBatchSize?: number;
  /** `fetch` to use (default the global one). */
  fetch?: typeof fetch;
  /**
   * `openai` method: a reranker served at the same base URL (`POST {baseUrl}/rerank`, as Svc,
   * vLLM and Jina serve it); gives the embedder a `rerank` method.
   */
  rerankModel?: string;
}

/** Jina options. */
export interface JinaOptions {
  /** Jina task adapter, e.g. `retrieval.query`, `retrieval.passage`, `text-matching`. */
  task?: string;
  /** Embed a batch as one concatenated document, each vector aware of the rest (late chunking). */
  lateChunking?: boolean;
  /** Ask the service for L2-normalized vectors. */
  normalized?: boolean;
}

/** Cohere options. */
export interface CohereOptions {
  /** `search_document` (default), `search_query`, `classification` or `clustering`. */
  inputType?: string;
  /** `NONE`, `START` or `END`: what Cohere does with inputs longer than the model accepts. */
  truncate?: string;
}

/** AWS Bedrock options (read from AWS_* variables when absent). */
export interface BedrockOptions {
  /** AWS region (default AWS_REGION, then AWS_DEFAULT_REGION). */
  region?: string;
  /** Default AWS_ACCESS_KEY_ID. */
  accessKeyId?: string;
  /** Default AWS_SECRET_ACCESS_KEY. */
  secretAccessKey?: string;
  /** Default AWS_SESSION_TOKEN (temporary credentials). */
  sessionToken?: string;
  /** Titan v2: return unit-length vectors (default true). */
  normalize?: boolean;
}

/** Hash and mock embedder options. */
export interface LocalOptions {
  /** Seed of the mock embedder (default `svc`); the same seed and text give the same vector. */
  seed?: string | number;
  /** Hash embedder: longest character n-gram hashed per word (default 3; 0 disables n-grams). */
  ngram?: number;
}

/** Options of the `hf` provider (local hub models on our engine). */
export interface HfOptions {
  /** Model cache folder; default the `hub` output folder. */
  cacheDir?: string;
  /** Engine device (default `auto`). */
  device?: Device;
  /** Weights to load (default: the best file the model has for the device, see `dtypePreference`). */
  dtype?: Dtype;
  /** Never download (default SVC_OFFLINE). */
  offline?: boolean;
  /** Hub base URL (default HUB_ENDPOINT). */
  hubEndpoint?: string;
  /** Hub token (default HUB_TOKEN). */
  hubToken?: string;
  /** Hub revision (default `main`). */
  revision?: string;
  /** Builds the engine; default `createEngine` of `@svc/cli/engine` (injectable for tests). */
  engineFactory?: HfEngineFactory;
}

/**
 * What the `hf` provider asks of its engine factory: the fields of the engine's `EngineOptions`
 * that it sets. Named here rather than imported, so the embedding library's module graph holds
 * no ML runtime until a hub model is loaded.
 */
export interface HfEngineOptions {
  /** Always `embedding`. */
  kind: "embedding";
  /** The model id, as clients name it. */
  id: string;
  /** Model cache folder. */
  cacheDir: string;
  /** Never download. */
  offline: boolean;
  /** Hub base URL. */
  hubEndpoint?: string;
  /** Hub token. */
  hubToken?: string;
  /** Hub revision. */
  revision?: string;
  /** Engine device. */
  device?: Device;
  /** Weights to load. */
  dtype?: Dtype;
}

/** Builds the engine of an `hf` embedder: one that embeds. */
export type HfEngineFactory = (model: string, options: HfEngineOptions) => Promise<EmbedEngine>;

/** Everything `getEmbeddingModel()` accepts; each provider reads the fields it knows. */
export interface EmbeddingModelOptions
  extends
    BaseEmbedderOptions,
    JinaOptions,
    CohereOptions,
    BedrockOptions,
    LocalOptions,
    HfOptions {}

/** One catalogued model of a method. */
export interface KnownEmbeddingModel {
  /** Model name as the provider knows it. */
  name: string;
  /** Default vector size. */
  dimensions: number;
  /** Other sizes the model can shorten to, when it supports that. */
  supportedDimensions?: number[];
}

/** What {@link listEmbeddingModels} reports per method (also each provider's static facts). */
export interface EmbeddingMethodInfo {
  /** The method name `getEmbeddingModel()` takes. */
  method: EmbeddingMethod;
  /** One line: what the provider is. */
  description: string;
  /** Known models (others may work too: names are passed to the service as given). */
  models: KnownEmbeddingModel[];
  /** Model used when none is named. */
  defaultModel: string;
  /** Vector size of the default model. */
  defaultDimensions: number | undefined;
  /** Whether an API key is required. */
  needsKey: boolean;
  /** The variable holding the key (the first one when several), null when none is used. */
  envVariable: string | null;
  /** Every variable the provider reads (keys, region, base URL). */
  envVariables: string[];
  /** Default service URL; null for in-process methods. */
  defaultBaseUrl: string | null;
  /** Runs on this machine (no third-party service). */
  local: boolean;
}

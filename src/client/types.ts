/**
 * Public types of the unified client: its modes, its configuration, what `chat`, `chatStream`,
 * `embed` take and return, and what `status()` reports.
 *
 * @module
 */
import type { ChatCompletion, ChatCompletionChunk } from "../protocol/chat_response.ts";
import type { ResponseObject } from "../protocol/responses_object.ts";
import type { SvcException } from "../core/errors.ts";
import type {
  ResponseFormat,
  ToolCall,
  ToolChoice,
  ToolDefinition,
} from "../core/inference_types.ts";

export type { ToolCall, ToolChoice, ToolDefinition };
import type { DetectionOptions } from "./detect_endpoints.ts";
import type { EmbeddedControlPlaneOptions } from "../gateway/embedded_types.ts";
import type { Dtype } from "../engine/dtype.ts";

/**
 * How a client reaches its models:
 * - `simple`: straight to the endpoints found by detection (or given explicitly);
 * - `control_plane`: through a gateway (its routing, scheduling and failover);
 * - `embedded`: through the gateway code running inside this process, no sockets.
 */
export type UnifiedClientMode = "simple" | "control_plane" | "embedded";

export type { FetchLike } from "../core/fetch_with_timeout.ts";

/** A model of a `/v1/models` list, with its kind (our servers say it; for others the name decides). */
export interface ListedModel {
  /** Model id. */
  id: string;
  /** What it does. */
  kind: "chat" | "embedding" | "rerank";
  /** Svc servers say so of demo models (`random_weights`): their output is meaningless. */
  randomWeights?: boolean;
}

/** Sampling settings in camelCase; sent as the OpenAI snake_case fields. */
export interface SamplingOptions {
  /** Sampling temperature (0: greedy). */
  temperature?: number;
  /** Nucleus sampling mass. */
  topP?: number;
  /** Our engines and vLLM read it; OpenAI ignores unknown fields. */
  topK?: number;
  /** Most tokens to generate. */
  maxTokens?: number;
  /** Text that ends the output (not included). */
  stop?: string | string[];
  /** Seed for reproducible sampling. */
  seed?: number;
  /** OpenAI presence penalty. */
  presencePenalty?: number;
  /** OpenAI frequency penalty. */
  frequencyPenalty?: number;
  /** Multiplicative repetition penalty (1: none). */
  repetitionPenalty?: number;
  /** Choices per prompt (default 1). */
  n?: number;
}

/** Settings shared by every way of building a client. All optional. */
export interface UnifiedClientConfig {
  /** Chat endpoint, ending in `/v1` (wins over SVC_CHAT_BASE_URL and detection). */
  llmBaseUrl?: string;
  /** Chat model (wins over SVC_CHAT_MODEL and detection). */
  llmModel?: string;
  /** Embedding endpoint, ending in `/v1` (wins over SVC_EMBEDDING_BASE_URL and detection). */
  embeddingBaseUrl?: string;
  /** Embedding model (wins over SVC_EMBEDDING_MODEL and detection). */
  embeddingModel?: string;
  /** Bearer key for the chat endpoint (default: the key detection picked for it). */
  apiKey?: string;
  /** Bearer key for the embedding endpoint (default: `apiKey`, then detection's). */
  embeddingApiKey?: string;
  /**
   * Time allowed for one attempt, in ms: the whole answer, or a stream's headers (default 120000).
   * Above 0, at most 2147483647; else `create()` throws a ConfigurationError.
   */
  timeoutMs?: number;
  /**
   * Longest silence of a stream (`chatStream`) between two chunks, in ms (default: `timeoutMs`):
   * a server that stops sending mid-stream fails the iteration with a ServiceError (code
   * `timeout`) instead of hanging. Above 0, at most 2147483647.
   */
  streamIdleTimeoutMs?: number;
  /** Retries after the first attempt on connection errors and 429/503 (default 3). */
  maxRetries?: number;
  /** First back-off delay in ms, doubled each retry with jitter (default 250). */
  retryBaseDelayMs?: number;
  /**
   * Longest wait before one retry, in ms (default 10000). A Retry-After longer than this is not
   * waited for: the error is raised at once, carrying `retryAfterSeconds`.
   */
  maxRetryDelayMs?: number;
  /**
   * Called before each retry with the `error` being retried (a ServiceUnavailableError,
   * RateLimitError or connection failure), the retry's number `attempt` (1 for the first), the
   * `delayMs` the client will wait first, and the request's `url`. Return `false` to give up
   * instead: the call then fails with `error`. For a message ("waiting for the model to load…")
   * or a policy of one's own (retry only 503s, or only until a deadline).
   *
   * @example
   * ```ts
   * import { ServiceUnavailableError, UnifiedInferenceClient } from "@svc/cli/client";
   * const client = await UnifiedInferenceClient.createAuto({
   *   maxRetries: 20,
   *   onRetry: ({ error, delayMs }) => {
   *     if (!(error instanceof ServiceUnavailableError)) return false; // fail fast otherwise
   *     console.error(`the model is loading; retrying in ${delayMs} ms`);
   *     return true;
   *   },
   * });
   * ```
   */
  onRetry?: (
    retry: { error: SvcException; attempt: number; delayMs: number; url: string },
  ) => boolean | void;
  /** Sampling applied to every `chat`/`chatStream`/`generate` call unless the call sets it. */
  defaultSampling?: SamplingOptions;
  /** Inputs per embeddings request; longer lists are split (default 256). */
  embedBatchSize?: number;
  /**
   * Reranker model for `rerank` (served beside the embedding model, at the embedding endpoint);
   * default: the first reranker the endpoint's `/models` lists.
   */
  rerankModel?: string;
}

/** A chat message as the client takes it. */
export interface ChatInputMessage {
  /** Who wrote the message. */
  role: "system" | "user" | "assistant" | "tool" | "developer";
  /** Null for an assistant turn that only called tools. */
  content: string | null;
  /** Name of the participant or tool. */
  name?: string;
  /** The tools an assistant turn called (as a previous answer's `toolCalls` gave them). */
  toolCalls?: ToolCall[];
  /** For a `tool` message: the call it answers. */
  toolCallId?: string;
}

/** A response format: any JSON object, or JSON that validates against `schema`. */
export type ChatResponseFormat =
  | { type: "json_object" }
  | {
    type: "json_schema";
    schema: Extract<ResponseFormat, { type: "json_schema" }>["schema"];
    /** The schema's name on the wire (default `response`). */
    name?: string;
  };

/** Options of one chat call. */
export interface ChatOptions extends SamplingOptions {
  /** Model for this call (default: the client's chat model). */
  model?: string;
  /** Cancels the call (a stream stops and the server is told). */
  signal?: AbortSignal;
  /** Overrides the client's `timeoutMs` for this call. */
  timeoutMs?: number;
  /** Extra wire fields merged into the request body as is (e.g. `{ user: "u1" }`). */
  extraBody?: Record<string, unknown>;
  /** Functions the model may call. */
  tools?: ToolDefinition[];
  /** Whether the model may (auto), must (required, or a named function) or must not call tools. */
  toolChoice?: ToolChoice;
  /** May the model call several tools at once? (server default: yes). */
  parallelToolCalls?: boolean;
  /** Hold the answer to JSON, or to a JSON Schema. */
  responseFormat?: ChatResponseFormat;
}

/** Options of `generate`: a chat call with the prompt as the user message. */
export interface GenerateOptions extends ChatOptions {
  /** A system message put before the prompt. */
  system?: string;
}

/** Options of `rerank`. */
export interface RerankOptions {
  /** Reranker for this call (default: the client's `rerankModel`, else the one detected). */
  model?: string;
  /** Answer only the best N documents. */
  topN?: number;
  /** The model's logits instead of scores in [0, 1]. */
  rawScores?: boolean;
  /** Cut pairs longer than the model accepts instead of failing. */
  truncate?: boolean;
  /** Cancels the call. */
  signal?: AbortSignal;
  /** Overrides the client's `timeoutMs` for this call. */
  timeoutMs?: number;
}

/** One document of a `rerank` answer. */
export interface RerankedDocument {
  /** Position of the document in the call. */
  index: number;
  /** Relevance to the query; higher is more relevant. */
  score: number;
  /** The document's text. */
  document: string;
}

/** Options of `tokenize` and `detokenize`. */
export interface TokenizeOptions {
  /** Model whose tokenizer to use (default: the client's model of `kind`). */
  model?: string;
  /** Which of the client's endpoints (and default model) to ask; default chat. */
  kind?: "chat" | "embedding";
  /** With a text: add the tokenizer's special tokens (default true). */
  addSpecialTokens?: boolean;
  /** With messages: end with the assistant turn's opening (default true). */
  addGenerationPrompt?: boolean;
  /** Also return each token's string. */
  returnTokenStrs?: boolean;
  /** Cancels the call. */
  signal?: AbortSignal;
  /** Overrides the client's `timeoutMs` for this call. */
  timeoutMs?: number;
}

/** What `tokenize` answers. */
export interface TokenizeResult {
  /** How many tokens. */
  count: number;
  /** The model's context length in tokens. */
  maxModelLen: number;
  /** The token ids. */
  tokens: number[];
  /** Each token's string, when asked for. */
  tokenStrs?: string[];
}

/** Options of `embed`. */
export interface EmbedOptions {
  /** Embedding model (default: the client's). */
  model?: string;
  /** Cancels the request. */
  signal?: AbortSignal;
  /** Longest wait in ms. */
  timeoutMs?: number;
  /** Vector size, for models that can shorten their vectors. */
  dimensions?: number;
}

/**
 * The OpenAI `chat.completion` object plus `text` (the first choice's content, "" when it only
 * called tools) and `toolCalls` (the first choice's tool calls, typed; empty when none).
 */
export type ChatResponse = ChatCompletion & { text: string; toolCalls: ToolCall[] };

/** Options of `responses` (OpenAI's Responses API). */
export interface ResponsesOptions {
  /** Model for this call (default: the client's chat model). */
  model?: string;
  /** A system message for this turn only (not carried to later turns). */
  instructions?: string;
  /** Continues the conversation of a stored response. */
  previousResponseId?: string;
  /** Keep the response on the server for later turns (server default: yes). */
  store?: boolean;
  /** Most tokens to generate (`max_output_tokens`). */
  maxOutputTokens?: number;
  /** Sampling temperature, 0-2. */
  temperature?: number;
  /** Nucleus sampling mass, 0-1. */
  topP?: number;
  /** Cancels the call. */
  signal?: AbortSignal;
  /** Overrides the client's `timeoutMs` for this call. */
  timeoutMs?: number;
  /** Extra wire fields merged into the request body as is (`tools`, `text`, …). */
  extraBody?: Record<string, unknown>;
}

/** The `response` object of the Responses API plus `outputText` (its output text, joined). */
export type ResponsesResult = ResponseObject & { outputText: string };

/** A piece of a streamed tool call: index, id and name first, then fragments of the arguments. */
export interface ToolCallPiece {
  /** Which tool call of the reply this piece belongs to. */
  index: number;
  /** Call id (first piece only). */
  id?: string;
  /** Function name (first piece only). */
  name?: string;
  /** A fragment of the JSON arguments. */
  arguments: string;
}

/** One piece of a streamed answer. */
export interface ChatStreamDelta {
  /** New text of this choice (may be ""). */
  content: string;
  /** Which choice (0 unless `n` > 1). */
  index: number;
  /** Set on the last delta of a choice. */
  finishReason: string | null;
  /** Pieces of tool calls this delta carries (absent when none). */
  toolCalls?: ToolCallPiece[];
  /** The raw `chat.completion.chunk` event. */
  chunk: ChatCompletionChunk;
}

/** Where an endpoint came from. */
export type EndpointSource =
  | "option"
  | "env"
  | "gateway"
  | "engine"
  | "cloud"
  | "control_plane"
  | "embedded"
  | "none";

/** One endpoint (chat or embedding) of a client. */
export interface EndpointInfo {
  /** Base URL ending in `/v1` (`http://embedded.svc/v1` in embedded mode); null when none. */
  baseUrl: string | null;
  /** The model used when a call names none; null until known. */
  model: string | null;
  /** Where it was found. */
  source: EndpointSource;
  /** True when a bearer key is sent (the key itself is never shown). */
  hasKey: boolean;
}

/** An endpoint as `status()` saw it just now. */
export interface EndpointStatus extends EndpointInfo {
  /** It answered `GET /v1/models` (or `/health`) within the probe timeout. */
  available: boolean;
  /**
   * Models of the endpoint's kind it lists: chat models for chat, embedding models and rerankers
   * for embeddings (empty when it did not answer or lists none). `model` is then the model calls
   * use: the one set, else the first of the kind listed.
   */
  models: string[];
  /** Those of `models` with random weights (Svc's demo models): their output is meaningless. */
  randomWeights: string[];
  /** Why it is not available, when it is not. */
  detail: string | null;
}

/** What `status()` reports. */
export interface ClientStatus {
  /** How the client reaches its models. */
  mode: UnifiedClientMode;
  /** Where chat goes, and whether it answers. */
  chat: EndpointStatus;
  /** Where embeddings go, and whether they answer. */
  embedding: EndpointStatus;
  /** The gateway's base URL in `control_plane` mode, else null. */
  controlPlaneUrl: string | null;
}

/** What `onProgress` is told while an engine starts. */
export interface EngineProgress {
  /** Id of the engine being started. */
  engineId: string;
  /** `starting`, `ready`, `error`, … as the gateway reports it. */
  state: string;
  /** What it is doing, or why it failed. */
  message: string | null;
  /** True when the gateway reused an engine that already served the model. */
  reused: boolean;
  /** Milliseconds since the start was asked. */
  elapsedMs: number;
}

/** How `createForModel` starts an engine and waits for it. */
export interface EngineStartOptions {
  /** Default: guessed by the gateway from the model id. */
  kind?: "chat" | "embedding";
  /** Device of the engine (default: the gateway's). */
  device?: string;
  /**
   * Weights the engine loads: fp32, fp16, q8, int8, uint8, q4, q4f16 or bnb4 (`DTYPES`). Left
   * out, the best the model has for the device.
   */
  dtype?: Dtype;
  /** Longest wait for readiness in ms (default 600000). */
  readyTimeoutMs?: number;
  /** Time between polls in ms (default 250). */
  pollIntervalMs?: number;
  /** Called with each state change while waiting. */
  onProgress?: (progress: EngineProgress) => void;
  /** Cancels the wait. */
  signal?: AbortSignal;
}

/** Options of `create()` / `createAuto()`: the config, detection settings, and the mode. */
export interface UnifiedClientOptions extends UnifiedClientConfig, DetectionOptions {
  /** A gateway's base URL (ending in /v1): control-plane mode, no detection. */
  controlPlaneUrl?: string;
  /** Runs the control plane in this process (`true`, or the models and engines to serve). */
  embedded?: boolean | EmbeddedControlPlaneOptions;
}

/** Options of `createForModel()`. */
export interface CreateForModelOptions
  extends Omit<UnifiedClientOptions, "embedded">, Omit<EngineStartOptions, "signal"> {
  /** Cancels the start-and-wait. */
  signal?: AbortSignal;
  /**
   * Bearer key for the gateway's management API (default SVC_ADMIN_API_KEY, then the chat key:
   * a gateway without an admin key takes that from loopback callers).
   */
  adminApiKey?: string;
}

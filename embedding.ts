/**
 * The embedding library: one `Embedder` interface over local hub models, OpenAI-compatible APIs,
 * cloud providers and test providers (`hash`, `mockembedder`), a factory, and the adapters that
 * give single-text embedders a batch interface.
 *
 * @example
 * ```ts
 * import { EmbeddingClientAdapter, getEmbeddingModel } from "@svc/cli/embedding";
 * const embedder = getEmbeddingModel("hash", { dimensions: 8 });
 * const vector = await embedder.embed("one text");
 * const vectors = await new EmbeddingClientAdapter(embedder).embed(["a", "b"]);
 * console.log(vector.length, vectors.length); // 8 2
 * ```
 *
 * @module
 */

export { getEmbeddingModel } from "./src/embedding/get_embedding_model.ts";
export { EmbeddingClientAdapter } from "./src/embedding/embedding_client_adapter.ts";
export type { SingleTextEmbedder } from "./src/embedding/embedding_client_adapter.ts";
export { EmbeddingFactory } from "./src/embedding/embedding_factory.ts";
export type { EmbeddingModel } from "./src/embedding/embedding_factory.ts";
export { listEmbeddingModels } from "./src/embedding/list_embedding_models.ts";
export { checkModelAvailability } from "./src/embedding/check_model_availability.ts";
export type {
  AvailabilityStatus,
  ModelAvailability,
} from "./src/embedding/check_model_availability.ts";
export { createEmbeddingClientCompat } from "./src/embedding/embedding_client_compat.ts";
export { createLlmClientCompat, LLMClientAdapter } from "./src/embedding/llm_client_adapter.ts";
export type { LlmClientLike } from "./src/embedding/llm_client_adapter.ts";
export type {
  Embedder,
  EmbeddingMethod,
  EmbeddingMethodInfo,
  EmbeddingModelOptions,
  RankedText,
} from "./src/embedding/types.ts";

// Types the API above names (deno doc --lint wants every type it reaches exported)
export type { EnvMap } from "./src/config/env.ts";
export type {
  AdmissionLimits,
  ChatMessage,
  Device,
  EmbedEngine,
  EmbedResult,
  EngineBase,
  EngineEmbedOptions,
  EngineHealth,
  EngineLoadState,
  EngineOfKind,
  EngineRerankOptions,
  EngineTokenizeResult,
  FinishReason,
  GenerationEngine,
  GenerationEvent,
  GenerationJob,
  GenerationStream,
  InferenceEngine,
  ModelInfo,
  ModelKind,
  PromptInput,
  PromptScoringOptions,
  PromptTokenLogprob,
  ReasoningMarkers,
  RerankerEngine,
  RerankResult,
  ResponseFormat,
  SamplingParams,
  TokenizeInput,
  TokenLogprob,
  ToolCall,
  ToolCallFormat,
  ToolChoice,
  ToolDefinition,
  Usage,
} from "./src/core/inference_types.ts";
export type { AvailabilityOptions } from "./src/embedding/check_model_availability.ts";
export type {
  EmbeddingCompatOptions,
  LegacyEmbedding,
} from "./src/embedding/embedding_client_compat.ts";
export type {
  CompatCallOptions,
  CompatChatMessage,
  LegacyLlm,
  LegacyMethod,
} from "./src/embedding/llm_client_adapter.ts";
export type {
  BaseEmbedderOptions,
  BedrockOptions,
  CohereOptions,
  HfEngineFactory,
  HfEngineOptions,
  HfOptions,
  JinaOptions,
  KnownEmbeddingModel,
  LocalOptions,
} from "./src/embedding/types.ts";
// `Dtype` is `typeof DTYPES[number]`.
export { DTYPES } from "./src/engine/dtype.ts";
export type { Dtype } from "./src/engine/dtype.ts";

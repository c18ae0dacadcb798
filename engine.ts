/**
 * The inference engine: loads ONNX models with transformers.js on onnxruntime (native CPU, WASM or
 * WebGPU), batches chat decoding and embeddings, downloads hub models, and generates the demo
 * models. This is the only entry whose module graph holds the ML runtime.
 *
 * @example
 * ```ts
 * import { createEngine } from "@svc/cli/engine";
 * const engine = await createEngine("demo/embed", { kind: "embedding", cacheDir: "/tmp/svc" });
 * const { vectors } = await engine.embed(["one text"]);
 * console.log(vectors[0].length);
 * await engine.dispose();
 * ```
 *
 * @module
 */

export type {
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
  GenerationStream,
  InferenceEngine,
  ModelInfo,
  ModelKind,
  PromptInput,
  PromptScoringOptions,
  PromptTokenLogprob,
  RerankerEngine,
  RerankResult,
  SamplingParams,
  TokenizeInput,
  TokenLogprob,
  Usage,
} from "./src/core/inference_types.ts";
export {
  createEngine,
  createEngineOrDemo,
  DEFAULT_MODELS,
  detectKindOf,
  resolveModelFolder,
} from "./src/engine/create_engine.ts";
export type {
  EngineOptions,
  ModelSourceOptions,
  ResolvedModel,
} from "./src/engine/create_engine.ts";
export { engineOfKind, isEngineOfKind } from "./src/core/model_kind.ts";
export { resolveDevice } from "./src/engine/runtime.ts";
export type { DeviceChoice, ResolvedDevice } from "./src/engine/runtime.ts";
export { dtypePreference, DTYPES } from "./src/engine/dtype.ts";
export type { Dtype, DtypeFacts } from "./src/engine/dtype.ts";
export { ChatEngine, DEFAULT_SCHEDULER } from "./src/engine/chat/chat_engine.ts";
export type { SchedulerOptions } from "./src/engine/chat/decode_scheduler.ts";
export { EmbeddingEngine } from "./src/engine/embedding/embedding_engine.ts";
export { DEFAULT_EMBEDDING_BATCHING } from "./src/engine/embedding/encoder_core.ts";
export type { BatcherOptions } from "./src/engine/embedding/batcher.ts";
export {
  DEMO_MODEL_IDS,
  isDemoModelId,
  materializeDemoModel,
} from "./src/engine/generated_models/demo_models.ts";
export type { DemoModelId } from "./src/engine/generated_models/demo_models.ts";
export { downloadModel } from "./src/engine/hub/download.ts";
export type { DownloadedModel, DownloadModelOptions } from "./src/engine/hub/download.ts";
export type { HubProgressCallback, HubProgressEvent } from "./src/engine/hub/progress.ts";

// Types the API above names (deno doc --lint wants every type it reaches exported)
export type { AdmissionLimits } from "./src/engine/admission_limits.ts";
export type { SchedulerStats } from "./src/engine/chat/decode_scheduler.ts";
export type { PrefixCacheStats } from "./src/engine/chat/prefix_cache.ts";
export type { WeightsOptions } from "./src/engine/create_engine.ts";
export type { DeferredEngine } from "./src/engine/deferred_engine.ts";
export type { DtypeDevice } from "./src/engine/dtype.ts";
export type { BatcherStats } from "./src/engine/embedding/batcher.ts";
export type { SelectModelFilesOptions } from "./src/engine/hub/file_selection.ts";
export type { HubFileProgress, HubProgressTotals } from "./src/engine/hub/progress.ts";
export type { ResolveDeviceOptions } from "./src/engine/runtime.ts";
export type {
  GenerationJob,
  ReasoningMarkers,
  ResponseFormat,
  ToolCall,
  ToolCallFormat,
  ToolChoice,
  ToolDefinition,
} from "./src/core/inference_types.ts";
export type { GpuInfo } from "./src/core/system.ts";

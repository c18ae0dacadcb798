/**
 * Svc: a Deno-native foundation layer for LLM applications — an OpenAI-compatible gateway, an
 * inference engine on transformers.js, an embedding server, a unified client library and a CLI.
 *
 * This entry is the everyday API: the client, the embedding library, the errors, ports and
 * configuration, and the core helpers. The rest has an entry each, one job apiece:
 * `@svc/cli/client` (the client alone, without the ML runtime), `@svc/cli/embedding`,
 * `@svc/cli/gateway`, `@svc/cli/engine`, `@svc/cli/server` (engine servers) and `@svc/cli/cli`.
 *
 * Imported, this module is the library. Run as the main module it is the `svc` CLI, so
 * `deno run -A jsr:@svc/cli llm serve` works.
 *
 * @example
 * ```ts
 * import { SvcPorts, UnifiedInferenceClient } from "@svc/cli";
 * console.log(SvcPorts.GATEWAY_DEFAULT); // 8000
 * // Finds the local gateway/engines (or SVC_* / COMPAT_* endpoints) by itself.
 * const client = await UnifiedInferenceClient.createAuto();
 * console.log(await client.generate("Say hello", { maxTokens: 16 }));
 * console.log((await client.embed(["one text"]))[0].length);
 * await client.close();
 * ```
 *
 * @module
 */

// Errors
import { importLazily } from "./src/core/lazy_module.ts";

export {
  AuthenticationError,
  CancelledError,
  ConfigurationError,
  ConflictError,
  ContextLengthError,
  MethodNotAllowedError,
  NotFoundError,
  PayloadTooLargeError,
  PermissionDeniedError,
  RateLimitError,
  RequestTimeoutError,
  ServiceError,
  ServiceUnavailableError,
  SvcException,
  UnsupportedMediaTypeError,
  ValidationError,
} from "./src/core/errors.ts";
export type { RetryableErrorOptions, SvcErrorOptions } from "./src/core/errors.ts";

// Configuration
export { isWsl, SvcPorts } from "./src/config/ports.ts";
export type { PortCheckOptions, ProcTextReader, WslDetectionOptions } from "./src/config/ports.ts";
export { loadConfig, readEnvVariable, redactConfig, setEnvVariable } from "./src/config/env.ts";
export type {
  ConfigOverrides,
  ConfigSource,
  EnvMap,
  LoadConfigOptions,
  SvcConfig,
} from "./src/config/env.ts";
export { ENV_VARIABLES, parseBooleanWord, parseEnvValue } from "./src/config/env_vars.ts";
export type {
  EnvVariable,
  SvcConfigValues,
  SvcDevice,
  SvcLogLevel,
} from "./src/config/env_vars.ts";
export { parseEnvText, readEnvFile, updateEnvFile } from "./src/config/env_file.ts";
export type { EnvFileValue } from "./src/config/env_file.ts";
export {
  CHINA_HF_MIRROR_ENDPOINT,
  DEFAULT_HF_ENDPOINT,
  detectChinaMainland,
  ensureHfMirrorConfigured,
  getHfEndpoint,
  getNetworkRegion,
  resetNetworkRegionCache,
} from "./src/config/network_region.ts";
export type {
  HfMirrorDecision,
  NetworkRegion,
  NetworkRegionOptions,
  ReachabilityProbe,
} from "./src/config/network_region.ts";
export {
  ensureOutputDir,
  getOutputDir,
  OUTPUT_DIR_NAMES,
  OutputPaths,
} from "./src/config/output_paths.ts";
export type { OutputDirName, OutputPathsOptions } from "./src/config/output_paths.ts";

// Core
export { writeFileAtomic } from "./src/core/atomic_file.ts";
export { fetchWithTimeout, joinUrl } from "./src/core/fetch_with_timeout.ts";
export {
  errorFromResponse,
  errorFromStatus,
  parseErrorBody,
  retryAfterSeconds,
} from "./src/protocol/error_from_response.ts";
export {
  clearSecrets,
  getLogger,
  LogLevel,
  parseLogLevel,
  redactSecrets,
  registerSecret,
  setupLogger,
} from "./src/core/logging.ts";
export type { LogFields, Logger, LoggerOptions } from "./src/core/logging.ts";
export { deserialize, fromJson, serialize, toJson } from "./src/core/serialization.ts";
export type { ToJsonOptions } from "./src/core/serialization.ts";
export { checkGpuAvailable, getCpuCount, getGpuInfo, getMemoryInfo } from "./src/core/system.ts";
export type { GpuInfo, GpuProbeOptions, MemoryInfo } from "./src/core/system.ts";
export { checkPortAvailable, getFreePort, getLocalIp, waitForPort } from "./src/core/network.ts";
export type { LocalIpOptions, WaitForPortOptions } from "./src/core/network.ts";
export {
  createBatch,
  createInferenceResult,
  createMessage,
  createRecord,
  createUsage,
  validateBatch,
  validateInferenceResult,
  validateMessage,
  validateRecord,
} from "./src/core/data_types.ts";
export type {
  Batch,
  BatchOptions,
  DataRecord,
  EmbedInferenceResult,
  InferenceResult,
  InferenceUsage,
  Message,
  TextInferenceResult,
} from "./src/core/data_types.ts";
export {
  getDefaultRegistry,
  getModel,
  listModels,
  MODEL_SOURCES,
  ModelRegistry,
  registerModel,
  removeModel,
  setDefaultRegistryPath,
  touchModel,
} from "./src/core/model_registry.ts";
export type {
  ModelEntry,
  ModelEntryInit,
  ModelRegistryOptions,
  ModelSource,
} from "./src/core/model_registry.ts";

// Client library (also `@svc/cli/client`)
export { UnifiedInferenceClient } from "./client.ts";
export type {
  ChatInputMessage,
  ChatOptions,
  ChatResponse,
  ChatResponseFormat,
  ChatStreamDelta,
  ClientStatus,
  CreateForModelOptions,
  DetectedEndpoint,
  DetectionOptions,
  DetectionResult,
  EmbeddedControlPlaneOptions,
  EmbedOptions,
  EndpointInfo,
  EndpointSource,
  EndpointStatus,
  EngineProgress,
  EngineStartOptions,
  ExplicitEndpoints,
  FetchLike,
  FindServiceOptions,
  FoundService,
  GenerateOptions,
  ListedModel,
  ProbeOutcome,
  ProbeRecord,
  RerankedDocument,
  RerankOptions,
  ResponsesOptions,
  ResponsesResult,
  SamplingOptions,
  TokenizeOptions,
  TokenizeResult,
  ToolCall,
  ToolCallPiece,
  ToolChoice,
  ToolDefinition,
  UnifiedClientConfig,
  UnifiedClientMode,
  UnifiedClientOptions,
} from "./client.ts";
export { detectEndpoints, findService, probeService } from "./client.ts";

// Embedding library (also `@svc/cli/embedding`)
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
export type { EnvVarKind, SvcConfigKey } from "./src/config/env_vars.ts";
export type { WriteFileAtomicOptions } from "./src/core/atomic_file.ts";
export type {
  FetchErrorCodes,
  FetchWithTimeoutOptions,
  TimedResponse,
} from "./src/core/fetch_with_timeout.ts";
export type {
  Coordinator,
  Lease,
  RateDecision,
  RateLimit,
  RateWindow,
} from "./src/coord/coordinator.ts";
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
  ToolCallFormat,
  Usage,
} from "./src/core/inference_types.ts";
export type { RecoveryResult } from "./src/core/model_registry.ts";
export type { InterfaceAddress } from "./src/core/network.ts";
export type { AdapterLike, GpuLike } from "./src/core/system.ts";
export type {
  InferenceFinishReason,
  InferenceResultBase,
  InferenceResultInit,
  JsonObject,
} from "./src/core/data_types.ts";
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
export type { CircuitBreakerOptions, CircuitState } from "./src/gateway/circuit_breaker.ts";
export type { DispatcherOptions } from "./src/gateway/dispatcher.ts";
export type { RoutingStrategyType } from "./src/gateway/routing.ts";
export type { SchedulingOptions, SchedulingPolicyType } from "./src/gateway/scheduling.ts";
export type { HttpLogger } from "./src/http/logger.ts";
export type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatDelta,
  WireChatLogprobs,
  WireTokenLogprob,
  WireToolCallDelta,
} from "./src/protocol/chat_response.ts";
export type { ErrorAnswer, ErrorFromStatusOptions } from "./src/protocol/error_from_response.ts";
export type {
  ResponseFunctionCallItem,
  ResponseMessageItem,
  ResponseObject,
  ResponseOutputItem,
  ResponseOutputText,
  ResponseReasoningItem,
  ResponseUsage,
} from "./src/protocol/responses_object.ts";
export type { WireToolCall } from "./src/protocol/tools.ts";
export type { WireUsage } from "./src/protocol/usage.ts";

if (import.meta.main) {
  // Loaded only when run, lazily (src/core/lazy_module.ts): a literal import would put the CLI,
  // and with it the ML runtime, into the module graph of every program that imports the library.
  // Such an import needs read access to a local cli.ts (none from JSR): say so in one line.
  const { main } = await importLazily<{ main: (args: string[]) => Promise<number> }>(
    new URL("./cli.ts", import.meta.url),
  ).catch((err) => {
    console.error(`svc: cannot load the CLI (${err.message}); run it with -A, or run cli.ts`);
    Deno.exit(77);
  });
  Deno.exit(await main(Deno.args));
}

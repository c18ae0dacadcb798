/**
 * Svc: a Deno-native foundation layer for LLM applications — an OpenAI-compatible gateway, an
 * inference engine on transformers.js, an embedding server, a unified client library and a CLI.
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
 * console.log(await client.generate("Say hello"));
 * console.log((await client.embed(["one text"]))[0].length);
 * await client.close();
 * ```
 *
 * @module
 */

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
} from "./src/core/types.ts";
export type {
  Batch,
  BatchOptions,
  DataRecord,
  EmbedInferenceResult,
  InferenceResult,
  InferenceUsage,
  Message,
  TextInferenceResult,
} from "./src/core/types.ts";
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

// Client library
export { UnifiedInferenceClient } from "./src/client/unified_inference_client.ts";
export type {
  ChatInputMessage,
  ChatOptions,
  ChatResponse,
  ChatResponseFormat,
  ChatStreamDelta,
  ClientStatus,
  CreateForModelOptions,
  EmbedOptions as ClientEmbedOptions,
  EndpointInfo,
  EndpointSource,
  EndpointStatus,
  EngineProgress,
  EngineStartOptions,
  GenerateOptions,
  ResponsesOptions,
  ResponsesResult,
  SamplingOptions,
  ToolCall,
  ToolCallPiece,
  ToolChoice,
  ToolDefinition,
  UnifiedClientConfig,
  UnifiedClientMode,
  UnifiedClientOptions,
} from "./src/client/types.ts";
export { detectEndpoints, probeService } from "./src/client/detect_endpoints.ts";
export type { DetectionOptions, DetectionResult } from "./src/client/detect_endpoints.ts";
export {
  EMBEDDED_BASE_URL,
  startEmbeddedControlPlane,
} from "./src/client/embedded_control_plane.ts";
export type {
  EmbeddedControlPlane,
  EmbeddedControlPlaneOptions,
} from "./src/client/embedded_control_plane.ts";

// Engine
export type {
  ChatMessage,
  Device,
  EmbedOptions,
  EmbedResult,
  EngineHealth,
  EngineState,
  FinishReason,
  GenerationEvent,
  GenerationStream,
  InferenceEngine,
  ModelInfo,
  ModelKind,
  PromptInput,
  SamplingParams,
  TokenLogprob,
  Usage,
} from "./src/engine/types.ts";
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
export { resolveDevice } from "./src/engine/runtime.ts";
export type { DeviceChoice, ResolvedDevice } from "./src/engine/runtime.ts";
export { dtypePreference, DTYPES } from "./src/engine/dtype.ts";
export type { Dtype } from "./src/engine/dtype.ts";
export { ChatEngine, DEFAULT_SCHEDULER } from "./src/engine/chat/chat_engine.ts";
export type { SchedulerOptions } from "./src/engine/chat/decode_scheduler.ts";
export {
  DEFAULT_EMBEDDING_BATCHING,
  EmbeddingEngine,
} from "./src/engine/embedding/embedding_engine.ts";
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

// HTTP servers
export { startEngineServer } from "./src/server/engine_server.ts";
export type { EngineServer, EngineServerOptions } from "./src/server/engine_server.ts";
export { createEngineApp } from "./src/server/engine_app.ts";
export type { EngineAppOptions } from "./src/server/engine_app.ts";
export { serveApp } from "./src/server/serve.ts";
export type { ServeAppOptions, ServedApp } from "./src/server/serve.ts";
export { ERROR_TABLE, errorBody, toWireError } from "./src/protocol/error_body.ts";
export type { OpenAIErrorBody } from "./src/protocol/error_body.ts";

// Gateway (control plane)
export { startGateway } from "./src/gateway/gateway_server.ts";
export type { GatewayServer, GatewayServerOptions } from "./src/gateway/gateway_server.ts";
export { createGateway } from "./src/gateway/gateway.ts";
export type { Gateway, GatewayOptions } from "./src/gateway/gateway.ts";
export { createGatewayApp } from "./src/gateway/gateway_app.ts";
export type { GatewayAppOptions } from "./src/gateway/gateway_app.ts";
export { BACKEND_DEFAULTS, validateBackendConfig } from "./src/gateway/backend_config.ts";
export type { BackendInstanceConfig, BackendKind } from "./src/gateway/backend_config.ts";
export { DEFAULT_SCHEDULING_POLICY, SCHEDULING_POLICIES } from "./src/gateway/scheduling.ts";
export type { SchedulingPolicyType } from "./src/gateway/scheduling.ts";
export { ROUTING_STRATEGIES } from "./src/gateway/routing.ts";
export type { RoutingStrategyType } from "./src/gateway/routing.ts";
export { Dispatcher } from "./src/gateway/dispatcher.ts";
export type { DispatcherOptions, DispatchRequest } from "./src/gateway/dispatcher.ts";

// Embedding library
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
} from "./src/embedding/types.ts";

if (import.meta.main) {
  // Loaded lazily so importing the library never pulls in the CLI and the ML runtime.
  const { main } = await import("./cli.ts");
  Deno.exit(await main(Deno.args));
}

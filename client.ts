/**
 * The client library alone: `UnifiedInferenceClient`, its options and results, endpoint detection,
 * and the errors it throws. It talks HTTP to engines, a gateway or a cloud API, and its module graph
 * holds no ML runtime (transformers.js, onnxruntime): embedded mode loads that only when asked.
 *
 * @example
 * ```ts
 * import { ServiceError, UnifiedInferenceClient } from "@svc/cli/client";
 * const client = await UnifiedInferenceClient.createAuto();
 * try {
 *   console.log(await client.generate("Say hello", { maxTokens: 16 }));
 * } catch (err) {
 *   if (err instanceof ServiceError) console.error(`no model answered: ${err.message}`);
 * }
 * await client.close();
 * ```
 *
 * @module
 */

export { UnifiedInferenceClient } from "./src/client/unified_inference_client.ts";
export type {
  ChatInputMessage,
  ChatOptions,
  ChatResponse,
  ChatResponseFormat,
  ChatStreamDelta,
  ClientStatus,
  CreateForModelOptions,
  EmbedOptions,
  EndpointInfo,
  EndpointSource,
  EndpointStatus,
  EngineProgress,
  EngineStartOptions,
  FetchLike,
  GenerateOptions,
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
} from "./src/client/types.ts";
export type { EmbeddedControlPlaneOptions } from "./src/gateway/embedded_types.ts";
export { detectEndpoints, findService, probeService } from "./src/client/detect_endpoints.ts";
export type {
  DetectionOptions,
  DetectionResult,
  FindServiceOptions,
  FoundService,
} from "./src/client/detect_endpoints.ts";
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

// Types the API above names (deno doc --lint wants every type it reaches exported)
export type {
  ResponseFunctionCallItem,
  ResponseMessageItem,
  ResponseObject,
  ResponseOutputItem,
  ResponseOutputText,
  ResponseReasoningItem,
  ResponseUsage,
} from "./src/protocol/responses_object.ts";
export type {
  DetectedEndpoint,
  ExplicitEndpoints,
  ProbeOutcome,
  ProbeRecord,
} from "./src/client/detect_endpoints.ts";
export type { ListedModel } from "./src/client/types.ts";
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
export type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatDelta,
  WireChatLogprobs,
  WireTokenLogprob,
  WireToolCallDelta,
} from "./src/protocol/chat_response.ts";
export type { WireToolCall } from "./src/protocol/tools.ts";
export type { WireUsage } from "./src/protocol/usage.ts";
export type { EnvMap } from "./src/config/env.ts";
export type {
  Coordinator,
  Lease,
  RateDecision,
  RateLimit,
  RateWindow,
} from "./src/coord/coordinator.ts";
export { LogLevel } from "./src/core/logging.ts";
export type { LogFields, Logger } from "./src/core/logging.ts";
// `Dtype` is `typeof DTYPES[number]`.
export { DTYPES } from "./src/engine/dtype.ts";
export type { Dtype } from "./src/engine/dtype.ts";
export type { CircuitBreakerOptions, CircuitState } from "./src/gateway/circuit_breaker.ts";
export type { DispatcherOptions } from "./src/gateway/dispatcher.ts";
export type { RoutingStrategyType } from "./src/gateway/routing.ts";
export type { SchedulingOptions, SchedulingPolicyType } from "./src/gateway/scheduling.ts";
export type { HttpLogger } from "./src/http/logger.ts";

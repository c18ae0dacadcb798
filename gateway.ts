/**
 * The gateway (control plane): one OpenAI-compatible front for many backends — engines it starts
 * as child processes, remote OpenAI-compatible servers, or engines in this process — with routing,
 * scheduling policies, health checks and a management API.
 *
 * @example
 * ```ts
 * import { startGateway } from "@svc/cli/gateway";
 * const gateway = await startGateway({ hostname: "127.0.0.1", port: 0 });
 * console.log(gateway.baseUrl);
 * await gateway.stop();
 * ```
 *
 * @module
 */

export { startGateway } from "./src/gateway/gateway_server.ts";
export type { GatewayServer, GatewayServerOptions } from "./src/gateway/gateway_server.ts";
export { createGateway } from "./src/gateway/gateway.ts";
export type { Gateway, GatewayOptions } from "./src/gateway/gateway.ts";
export { createGatewayApp } from "./src/gateway/gateway_app.ts";
export type { GatewayAppOptions } from "./src/gateway/gateway_app.ts";
export { StateHealth } from "./src/gateway/state_health.ts";
export { BACKEND_DEFAULTS, validateBackendConfig } from "./src/gateway/backend_config.ts";
export type { BackendInstanceConfig, BackendServer } from "./src/gateway/backend_config.ts";
export type { BackendKind, EngineKind } from "./src/core/model_kind.ts";
export { DEFAULT_SCHEDULING_POLICY, SCHEDULING_POLICIES } from "./src/gateway/scheduling.ts";
export type { SchedulingPolicyType } from "./src/gateway/scheduling.ts";
export { ROUTING_STRATEGIES } from "./src/gateway/routing.ts";
export type { RoutingStrategyType } from "./src/gateway/routing.ts";
export { Dispatcher } from "./src/gateway/dispatcher.ts";
export type { DispatcherOptions, DispatchRequest } from "./src/gateway/dispatcher.ts";
export {
  EMBEDDED_BASE_URL,
  startEmbeddedControlPlane,
} from "./src/gateway/embedded_control_plane.ts";
export type {
  EmbeddedControlPlane,
  EmbeddedControlPlaneOptions,
} from "./src/gateway/embedded_types.ts";

// Types the API above names (deno doc --lint wants every type it reaches exported)
export type {
  Backend,
  BackendChange,
  BackendSnapshot,
  HealthState,
  ModelFacts,
  ProbeFailure,
  ProbeResult,
  RequestOutcome,
} from "./src/gateway/backend.ts";
export type { ResolvedBackendConfig, SecretValue } from "./src/gateway/backend_config.ts";
export type {
  CircuitBreaker,
  CircuitBreakerOptions,
  CircuitState,
} from "./src/gateway/circuit_breaker.ts";
export type {
  DispatchEndpoint,
  DispatcherSnapshot,
  GatewayModel,
} from "./src/gateway/dispatcher.ts";
export type { EngineProcessSpec, ProcessCommand } from "./src/gateway/engines/engine_command.ts";
export type { EngineManager } from "./src/gateway/engines/engine_manager.ts";
// The state file `management.store` of createGateway takes.
export { EngineStore } from "./src/gateway/engines/engine_store.ts";
export type {
  EnginePersistence,
  StoredEngine,
  StoredManagedEngine,
  StoredRemoteEngine,
} from "./src/gateway/engines/engine_store.ts";
// Several replicas: the shared state (GatewayAppOptions.state) and coordination (`coordinator`).
export { openStateStore } from "./src/state/open_state_store.ts";
export type {
  ApiKeyRecord,
  EngineListing,
  EngineRow,
  KeyScope,
  ResponseCaps,
  StateStore,
  UsageFilter,
  UsageRow,
} from "./src/state/state_store.ts";
export { openCoordinator } from "./src/coord/open_coordinator.ts";
export type {
  Coordinator,
  Lease,
  RateDecision,
  RateLimit,
  RateWindow,
} from "./src/coord/coordinator.ts";
export type { ReplicaMembership } from "./src/gateway/replica_membership.ts";
export type {
  EngineSupervisor,
  EngineSupervisorOptions,
  SupervisorState,
} from "./src/gateway/engines/engine_supervisor.ts";
export type {
  ClusterStatus,
  EngineManagerOptions,
  EngineOrigin,
  EnginePlacement,
  EngineState,
  EngineView,
  RegisterEngineRequest,
  StartEngineRequest,
} from "./src/gateway/engines/engine_types.ts";
export type { HealthChecker, HealthCheckerOptions } from "./src/gateway/health_checker.ts";
export type { RoutingContext } from "./src/gateway/routing.ts";
export type {
  SchedulingOptions,
  SchedulingPolicy,
  SelectContext,
  WorkTicket,
} from "./src/gateway/scheduling.ts";
export type { BackendRequestInit, BackendTransport } from "./src/gateway/transport.ts";
export type { FetchLike } from "./src/core/fetch_with_timeout.ts";
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
export { LogLevel } from "./src/core/logging.ts";
export type { LogFields, Logger } from "./src/core/logging.ts";
// `Dtype` is `typeof DTYPES[number]`.
export { DTYPES } from "./src/engine/dtype.ts";
export type { Dtype } from "./src/engine/dtype.ts";
export type { CorsOptions } from "./src/http/cors.ts";
export type { HttpLimits } from "./src/http/http1/limits.ts";
export type { AppHandler, HttpAppOptions, RequestInfo } from "./src/http/http_app.ts";
export type { HttpLogger } from "./src/http/logger.ts";
// The registry `GatewayAppOptions.metrics` takes (to add metrics of your own to GET /metrics).
export { MetricsRegistry } from "./src/http/metrics.ts";
export type {
  Counter,
  Gauge,
  Histogram,
  HistogramState,
  Labels,
  Metric,
  MetricOptions,
} from "./src/http/metrics.ts";
export type { ServedApp } from "./src/http/serve.ts";

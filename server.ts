/**
 * The engine server as a library, and as a program: `deno run … server.ts [svc llm run options]`
 * serves one model like `svc llm run`.
 *
 * @example
 * ```ts
 * import { startEngineServer } from "@svc/cli/server";
 * const server = await startEngineServer({
 *   model: "demo/chat", kind: "chat", hostname: "127.0.0.1", port: 0, cacheDir: "/tmp/svc",
 * });
 * await server.ready;
 * console.log(server.baseUrl);
 * await server.stop();
 * ```
 *
 * @module
 */

export {
  type EngineAppLoadOptions,
  type EngineServer,
  type EngineServerOptions,
  type LoadedEngineApp,
  loadEngineApp,
  startEngineServer,
} from "./src/server/engine_server.ts";
export { createEngineApp, type EngineAppOptions } from "./src/server/engine_app.ts";
export { serveApp, type ServeAppOptions, type ServedApp } from "./src/http/serve.ts";
export { ERROR_TABLE } from "./src/core/errors.ts";
// The registry `createEngineApp` takes as `metrics` (to add metrics of your own to GET /metrics).
export { MetricsRegistry } from "./src/http/metrics.ts";
export { errorBody, type OpenAIErrorBody, toWireError } from "./src/protocol/error_body.ts";

// Types the API above names (deno doc --lint wants every type it reaches exported)
export type {
  ChatDelta,
  WireChatLogprobs,
  WireTokenLogprob,
  WireToolCallDelta,
} from "./src/protocol/chat_response.ts";
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
export type { ErrorMapping } from "./src/core/errors.ts";
export type { LogFields } from "./src/core/logging.ts";
export type { SchedulerOptions } from "./src/engine/chat/decode_scheduler.ts";
export type { EngineOptions, ModelSourceOptions } from "./src/engine/create_engine.ts";
export type { DeferredEngine } from "./src/engine/deferred_engine.ts";
// `Dtype` is `typeof DTYPES[number]`.
export { DTYPES } from "./src/engine/dtype.ts";
export type { Dtype } from "./src/engine/dtype.ts";
export type { BatcherOptions } from "./src/engine/embedding/batcher.ts";
export type {
  HubFileProgress,
  HubProgressCallback,
  HubProgressEvent,
  HubProgressTotals,
} from "./src/engine/hub/progress.ts";
export type { WireError } from "./src/protocol/error_body.ts";
export type { ErrorAnswer, ErrorFromStatusOptions } from "./src/protocol/error_from_response.ts";
export type { WireToolCall } from "./src/protocol/tools.ts";
export type { WireUsage } from "./src/protocol/usage.ts";
export type { CorsOptions } from "./src/http/cors.ts";
export type { HttpLimits } from "./src/http/http1/limits.ts";
export type { AppHandler, HttpAppOptions, RequestInfo } from "./src/http/http_app.ts";
export type { HttpLogger } from "./src/http/logger.ts";
export type {
  Counter,
  Gauge,
  Histogram,
  HistogramState,
  Labels,
  Metric,
  MetricOptions,
} from "./src/http/metrics.ts";

if (import.meta.main) {
  const { main } = await import("./cli.ts");
  Deno.exit(await main(["llm", "run", ...Deno.args]));
}

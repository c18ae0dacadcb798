/**
 * The engine server app: the OpenAI-compatible endpoints over one or more
 * {@link InferenceEngine}s, on the shared HTTP layer.
 *
 * @module
 */
import type { InferenceEngine } from "../engine/types.ts";
import { chatCompletionsRoute } from "./chat_route.ts";
import { completionsRoute } from "./completions_route.ts";
import { embeddingsRoute } from "./embeddings_route.ts";
import { registerEngineMetrics } from "./engine_metrics.ts";
import { EngineRegistry, type EngineSource } from "./engine_registry.ts";
import { type AppHandler, createHttpApp, type HttpAppOptions } from "./http_app.ts";
import { healthRoute, modelRoutes } from "./info_routes.ts";
import { MetricsRegistry } from "./metrics.ts";
import { metricsRoute } from "./metrics_route.ts";
import { rerankRoutes } from "./rerank_route.ts";
import { tokenizeRoutes } from "./tokenize_routes.ts";

/** Options of {@link createEngineApp}. */
export interface EngineAppOptions extends HttpAppOptions {
  /** The engines served: a list (by `info.id`) or a map from model id/alias to engine. */
  engines: readonly InferenceEngine[] | ReadonlyMap<string, InferenceEngine>;
}

/**
 * Builds the engine server: `POST /v1/chat/completions`, `POST /v1/completions`,
 * `POST /v1/embeddings`, `POST /v1/rerank`, `POST /tokenize`, `POST /detokenize`,
 * `GET /v1/models[/{id}]`, `GET /health`, `GET /metrics`.
 *
 * @example
 * ```ts
 * import { createEngineApp } from "./engine_app.ts";
 * const app = createEngineApp({ engines: [], apiKey: "s3cret" });
 * const res = await app(new Request("http://localhost/health")); // 503: no model
 * ```
 */
export function createEngineApp(options: EngineAppOptions): AppHandler {
  const engines = new EngineRegistry(options.engines as EngineSource);
  const metrics = options.metrics ?? new MetricsRegistry();
  const recordUsage = registerEngineMetrics(metrics, engines, { prefix: options.metricsPrefix });
  const deps = { engines, recordUsage };
  return createHttpApp([
    chatCompletionsRoute(deps),
    completionsRoute(deps),
    embeddingsRoute(deps),
    ...rerankRoutes(deps),
    ...tokenizeRoutes(engines),
    ...modelRoutes(engines),
    healthRoute(engines),
    metricsRoute(metrics),
  ], { ...options, metrics });
}

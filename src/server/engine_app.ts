/**
 * The engine server app: the OpenAI-compatible endpoints over one or more
 * {@link InferenceEngine}s, on the shared HTTP layer.
 *
 * @module
 */
import type { InferenceEngine, ModelKind } from "../core/inference_types.ts";
import { chatCompletionsRoute, runChatCompletion } from "./chat_route.ts";
import { completionsRoute } from "./completions_route.ts";
import { embeddingsRoute } from "./embeddings_route.ts";
import { registerEngineMetrics } from "./engine_metrics.ts";
import { EngineRegistry, type EngineSource } from "./engine_registry.ts";
import {
  type AppHandler,
  createHttpApp,
  type HttpAppOptions,
  type RouteDefinition,
} from "../http/http_app.ts";
import { healthRoute, modelRoutes } from "./info_routes.ts";
import { MetricsRegistry } from "../http/metrics.ts";
import { metricsRoute } from "../http/metrics_route.ts";
import { ResponseStore } from "../responses/response_store.ts";
import { responsesRoutes } from "../responses/responses_route.ts";
import { playgroundRoutes } from "../playground/playground_routes.ts";
import { rerankRoutes } from "./rerank_route.ts";
import { tokenizeRoutes } from "./tokenize_routes.ts";

/** Options of {@link createEngineApp}. */
export interface EngineAppOptions extends HttpAppOptions {
  /** The engines served: a list (by `info.id`) or a map from model id/alias to engine. */
  engines: readonly InferenceEngine[] | ReadonlyMap<string, InferenceEngine>;
  /** Folder where `/v1/responses` keeps stored responses (default: in memory). */
  responsesDir?: string;
  /** The token of the supervisor that started this process, echoed by `/health` (engine_instance.ts). */
  instance?: string;
}

/**
 * Builds the engine server: `POST /v1/chat/completions`, `POST /v1/completions`,
 * `POST /v1/embeddings`, `POST /v1/rerank`, `POST /tokenize`, `POST /detokenize`,
 * `POST /v1/responses` (and `GET`/`DELETE /v1/responses/{id}`, `GET .../{id}/input_items`),
 * `GET /v1/models[/{id}]`,
 * `GET /health`, `GET /metrics`, and the playground page at `/`.
 *
 * @example
 * ```ts
 * import { createEngineApp } from "@svc/cli/server";
 * const app = createEngineApp({ engines: [], apiKey: "s3cret" });
 * const res = await app(new Request("http://localhost/health")); // 503: no model
 * ```
 */
export function createEngineApp(options: EngineAppOptions): AppHandler {
  const engines = new EngineRegistry(options.engines as EngineSource);
  const metrics = options.metrics ?? new MetricsRegistry();
  const recordUsage = registerEngineMetrics(metrics, engines, { prefix: options.metricsPrefix });
  const deps = { engines, recordUsage };
  // The routes of a kind no engine has still answer, naming the endpoint the model serves, but an
  // unknown URL's 404 does not offer them.
  const kinds = new Set(engines.engines().map((e) => e.info.kind));
  const ofKind = (kind: ModelKind, routes: RouteDefinition[]) =>
    kinds.has(kind) ? routes : routes.map((r) => ({ ...r, unlisted: true }));
  return createHttpApp([
    ...ofKind("chat", [chatCompletionsRoute(deps), completionsRoute(deps)]),
    ...ofKind("embedding", [embeddingsRoute(deps)]),
    ...ofKind(
      "chat",
      responsesRoutes({
        store: new ResponseStore({ dir: options.responsesDir }),
        runChat: (ctx, body) => runChatCompletion(ctx, deps, body),
        limitsOf: (body) => engines.limitsOf(body, "chat"),
      }),
    ),
    ...ofKind("rerank", rerankRoutes(deps)),
    ...tokenizeRoutes(engines),
    ...modelRoutes(engines),
    healthRoute(engines, options.instance),
    metricsRoute(metrics),
    ...playgroundRoutes({ dashboard: false }),
  ], { ...options, metrics });
}

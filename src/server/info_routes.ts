/**
 * `GET /v1/models`, `GET /v1/models/{id}` and `GET /health` of the engine server.
 *
 * @module
 */
import { NotFoundError } from "../core/errors.ts";
import { errorBody } from "../protocol/error_body.ts";
import { buildModel, buildModelList } from "../protocol/model_response.ts";
import { type EngineRegistry, LOADING_RETRY_AFTER_SECONDS } from "./engine_registry.ts";
import type { RouteDefinition } from "../http/http_app.ts";
import { ENGINE_INSTANCE_HEADER } from "./engine_instance.ts";

/**
 * The model list and model retrieval routes (ids may contain `/`, e.g. `demo/chat`).
 *
 * @example
 * ```ts
 * import { EngineRegistry } from "./engine_registry.ts";
 * import { modelRoutes } from "./info_routes.ts";
 * const routes = modelRoutes(new EngineRegistry([]));
 * ```
 */
export function modelRoutes(engines: EngineRegistry): RouteDefinition[] {
  return [
    {
      method: "GET",
      path: "/v1/models",
      handler: () =>
        Response.json(
          buildModelList(
            engines.entries().map(({ id, engine }) => buildModel(engine.info, { id })),
          ),
        ),
    },
    {
      method: "GET",
      path: "/v1/models/:id*",
      name: "/v1/models/{id}",
      handler: (ctx) => {
        const id = ctx.params.id;
        const engine = engines.find(id);
        if (engine === undefined) {
          throw new NotFoundError(
            `The model '${
              id.slice(0, 200)
            }' does not exist on this server; GET /v1/models lists them.`,
            { code: "model_not_found", param: "model" },
          );
        }
        return Response.json(buildModel(engine.info, { id }));
      },
    },
  ];
}

/**
 * `GET /health`: 200 `{"status":"ok"}` when every engine is ready; 503 while one loads or has
 * failed, with the per-model states and an OpenAI error object. Needs no API key. With `instance`
 * (the token of the supervisor that started this process), every answer carries it back in the
 * `x-svc-engine-instance` header.
 *
 * @example
 * ```ts
 * import { EngineRegistry } from "./engine_registry.ts";
 * import { healthRoute } from "./info_routes.ts";
 * const route = healthRoute(new EngineRegistry([]));
 * ```
 */
export function healthRoute(engines: EngineRegistry, instance?: string): RouteDefinition {
  // The supervisor's token for this process, echoed so it knows it reached us (engine_instance.ts).
  const headers = (): Record<string, string> =>
    instance === undefined ? {} : { [ENGINE_INSTANCE_HEADER]: instance };
  return {
    method: "GET",
    path: "/health",
    public: true,
    handler: () => {
      const health = engines.health();
      if (health.status === "ok") {
        return Response.json({ status: "ok", models: health.models }, { headers: headers() });
      }
      const message = health.models.length === 0
        ? "No model is configured on this server."
        : health.status === "loading"
        ? "A model is still loading."
        : "A model failed or is stopped: " +
          health.models.filter((m) => m.state === "error" || m.state === "stopped")
            .map((m) => `${m.id} (${m.state}${m.message ? `: ${m.message}` : ""})`).join(", ");
      const body = {
        status: health.status,
        models: health.models,
        ...errorBody(message, {
          type: "service_unavailable_error",
          code: `model_${health.status}`,
        }),
      };
      const all = headers();
      if (health.status === "loading") all["retry-after"] = String(LOADING_RETRY_AFTER_SECONDS);
      return Response.json(body, { status: 503, headers: all });
    },
  };
}

/**
 * `GET /metrics`: the Prometheus text exposition of a registry.
 *
 * @module
 */
import type { RouteDefinition } from "./http_app.ts";
import { MetricsRegistry } from "./metrics.ts";

/**
 * The metrics route (protected by the API key like every route but `/health`).
 *
 * @example
 * ```ts
 * import { metricsRoute } from "./metrics_route.ts";
 * import { MetricsRegistry } from "@svc/cli/server";
 * const route = metricsRoute(new MetricsRegistry());
 * ```
 */
export function metricsRoute(registry: MetricsRegistry): RouteDefinition {
  return {
    method: "GET",
    path: "/metrics",
    handler: () =>
      new Response(registry.render(), {
        headers: { "content-type": MetricsRegistry.CONTENT_TYPE },
      }),
  };
}

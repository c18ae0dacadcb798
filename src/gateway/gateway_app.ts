/**
 * The gateway HTTP app: the OpenAI-compatible serving routes, the management API (with the
 * dashboard's `GET /v1/management/dashboard`), `GET /metrics` and the playground page at `/`, on
 * the shared HTTP layer of `src/server` (same auth, body limits, CORS, error bodies and request
 * ids as the engine server).
 *
 * @module
 */
import { errorMessage } from "../core/errors.ts";
import { getLogger } from "../core/logging.ts";
import { isAdminPath } from "../http/admin_guard.ts";
import {
  type AppHandler,
  createHttpApp,
  type HttpAppOptions,
  type RouteDefinition,
} from "../http/http_app.ts";
import { MetricsRegistry } from "../http/metrics.ts";
import { metricsRoute } from "../http/metrics_route.ts";
import { ResponseStore } from "../responses/response_store.ts";
import type { StateStore } from "../state/state_store.ts";
import { ApiKeys } from "./api_keys.ts";
import type { Coordinator } from "../coord/coordinator.ts";
import { LocalCoordinator } from "../coord/local_coordinator.ts";
import { admitKey } from "./key_rate_limits.ts";
import { requireForReadiness } from "./readiness.ts";
import { StateHealth } from "./state_health.ts";
import { type ReplicaMembership, replicasRoute } from "./replica_membership.ts";
import { GatewayAuth } from "./gateway_auth.ts";
import { keyRoutes } from "./key_routes.ts";
import { playgroundRoutes } from "../playground/playground_routes.ts";
import type { Dispatcher } from "./dispatcher.ts";
import type { EngineManager } from "./engines/engine_manager.ts";
import { dashboardRoute } from "./dashboard_route.ts";
import { registerGatewayMetrics } from "./gateway_metrics.ts";
import { gatewayRoutes } from "./gateway_routes.ts";
import { managementRoutes } from "./management_routes.ts";
import { TokenMeter } from "./token_meter.ts";

/** Options of {@link createGatewayApp}. */
export interface GatewayAppOptions extends HttpAppOptions {
  /** Forwards the requests. */
  dispatcher: Dispatcher;
  /** Serves `/v1/management` when given. */
  manager?: EngineManager;
  /** Most proxied requests handled at once; more get 503 with Retry-After (default 1024). */
  maxInFlight?: number;
  /**
   * Most `input` items of a `/v1/responses` request, counted before its body is validated
   * (default 2048, OpenAI's cap; `--max-messages`). The engines count chat messages themselves.
   */
  maxMessages?: number;
  /**
   * How long a request for a model whose engine is still loading waits for it (default 30000
   * ms); then 503 `model_loading` with Retry-After.
   */
  loadWaitMs?: number;
  /** Folder of the responses `/v1/responses` stores (default: kept in memory). */
  responsesDir?: string;
  /**
   * Most stored responses kept per owner (a managed key, or everyone else together), the oldest
   * evicted first (default 1000; `--max-stored-responses`).
   */
  maxStoredResponses?: number;
  /**
   * Key of the management API and the dashboard (SVC_ADMIN_API_KEY); it opens the inference
   * routes too. Without it the management API answers loopback callers only (with `apiKey` when
   * that is set).
   */
  adminApiKey?: string;
  /**
   * Shared state (SQLite or PostgreSQL): the Responses store lives there instead of
   * `responsesDir`, and the key routes (`/v1/management/keys`, `/usage`) are served.
   */
  state?: StateStore;
  /** Inference needs a key once SVC_ADMIN_API_KEY is set (see {@link GatewayAuth}). */
  inferenceNeedsKey?: boolean;
  /**
   * What the replicas share: keys' rate limits (default: this process alone; a Redis
   * coordinator for several replicas, see src/coord/).
   */
  coordinator?: Coordinator;
  /** This replica's heartbeat (a shared coordinator): `GET /v1/management/replicas`. */
  membership?: ReplicaMembership;
  /**
   * Tracks whether `state` can be reached (for the key routes, the stored Responses and
   * readiness); made when absent.
   */
  stateHealth?: StateHealth;
}

/**
 * Builds the gateway app. With `apiKey` (SVC_CHAT_API_KEY) every inference route but `/health`
 * and `/health/ready` needs `Authorization: Bearer <key>` (or the admin key). The admin routes
 * under `/v1/management` need `adminApiKey` when set; without it they answer loopback callers
 * only, with `apiKey` when set (see {@link GatewayKeys}).
 *
 * @example
 * ```ts
 * import { Dispatcher } from "@svc/cli/gateway";
 * import { createGatewayApp } from "@svc/cli/gateway";
 * const app = createGatewayApp({ dispatcher: new Dispatcher() });
 * const res = await app(new Request("http://localhost/health/ready")); // 503: no backend yet
 * ```
 */
export function createGatewayApp(options: GatewayAppOptions): AppHandler {
  const metrics = options.metrics ?? new MetricsRegistry();
  const prefix = options.metricsPrefix ?? "svc_gateway";
  const engines = options.manager ? () => options.manager!.list() : undefined;
  const gatewayMetrics = registerGatewayMetrics(metrics, options.dispatcher, { prefix, engines });
  const tokens = new TokenMeter();
  const stateHealth = options.state ? options.stateHealth ?? new StateHealth() : undefined;
  const apiKeys = options.state ? new ApiKeys(options.state, { health: stateHealth }) : undefined;
  const coordinator = options.coordinator ?? new LocalCoordinator();
  // Not ready while what the replicas share cannot be reached (readiness.ts).
  requireForReadiness(options.dispatcher, () => coordinator.unavailable());
  if (stateHealth) requireForReadiness(options.dispatcher, () => stateHealth.unavailable());
  const auth = new GatewayAuth({ ...options, keys: apiKeys });
  if (options.apiKey && !options.adminApiKey) {
    getLogger("gateway").warn(
      "SVC_CHAT_API_KEY is set but SVC_ADMIN_API_KEY is not: the management API and the " +
        "dashboard answer callers on this machine only; set SVC_ADMIN_API_KEY to manage the " +
        "gateway remotely.",
    );
  }
  const common = { ...options, metrics, metricsPrefix: prefix };
  const inference = createHttpApp(
    withKey([
      ...gatewayRoutes({
        dispatcher: options.dispatcher,
        metrics: gatewayMetrics,
        maxInFlight: options.maxInFlight,
        maxMessages: options.maxMessages,
        engines,
        loadWaitMs: options.loadWaitMs,
        responseStore: new ResponseStore({
          ...(options.state
            ? { state: options.state, stateGuard: stateHealth }
            : { dir: options.responsesDir }),
          maxEntries: options.maxStoredResponses,
        }),
        tokens,
        principalOf: (req) => auth.principalOf(req),
        onUsage: apiKeys && ((key, model, usage) => {
          const tokens = usage.promptTokens + usage.completionTokens;
          Promise.all([
            apiKeys.recordUsage(key.keyId, model, usage),
            key.tpm !== null ? coordinator.charge(key.keyId, tokens) : undefined,
          ]).catch((err) =>
            getLogger("gateway").warn("could not record a key's usage", {
              key: key.keyId,
              error: errorMessage(err),
            })
          );
        }),
        admit: (key) => admitKey(coordinator, key),
      }),
      ...playgroundRoutes({ dashboard: true }),
      metricsRoute(metrics),
    ], (req) => auth.checkInference(req)),
    { ...common, apiKey: options.apiKey },
  );
  // The admin routes are a second app: its `apiKey` (the admin key or none) is what makes
  // checkAdminRequest accept remote callers or loopback ones only.
  const admin = createHttpApp(
    withKey([
      ...(options.manager ? managementRoutes(options.manager) : []),
      ...(apiKeys ? keyRoutes(apiKeys, { principalOf: (req) => auth.principalOf(req) }) : []),
      dashboardRoute({
        dispatcher: options.dispatcher,
        manager: options.manager,
        tokens,
        keys: apiKeys,
      }),
      ...(options.membership ? [replicasRoute(options.membership)] : []),
    ], (req) => auth.checkAdmin(req)),
    { ...common, apiKey: options.adminApiKey },
  );
  return (req, info) =>
    isAdminPath(new URL(req.url).pathname) ? admin(req, info) : inference(req, info);
}

// The key check moves from the app into each non-public route (marked public for the app), as
// the app checks one key only and these routes take the keys GatewayKeys says.
function withKey(
  routes: RouteDefinition[],
  check: (req: Request) => Promise<void>,
): RouteDefinition[] {
  return routes.map((r) =>
    r.public ? r : {
      ...r,
      public: true,
      handler: async (ctx) => {
        await check(ctx.req);
        return await r.handler(ctx);
      },
    }
  );
}

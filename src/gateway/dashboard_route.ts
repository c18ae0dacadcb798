/**
 * `GET /v1/management/dashboard`: the gateway's live state in one JSON answer, for the built-in
 * dashboard page (which polls it) and scripts: engines with health, circuit-breaker state, load
 * and tokens/s; queues; totals. An admin route like the rest of `/v1/management` (see
 * `src/http/admin_guard.ts`): the page of the gateway's own origin may read it, no other.
 *
 * @module
 */
import type { RouteDefinition } from "../http/http_app.ts";
import type { BackendSnapshot } from "./backend.ts";
import type { Dispatcher } from "./dispatcher.ts";
import type { EngineManager } from "./engines/engine_manager.ts";
import type { EngineView } from "./engines/engine_types.ts";
import { RATE_WINDOW_SECONDS, type TokenMeter } from "./token_meter.ts";

/** What the dashboard route reads. */
export interface DashboardDeps {
  dispatcher: Dispatcher;
  manager?: EngineManager;
  tokens: TokenMeter;
}

/**
 * The dashboard route.
 *
 * @example
 * ```ts
 * import { Dispatcher } from "@svc/cli/gateway";
 * import { dashboardRoute } from "./dashboard_route.ts";
 * import { TokenMeter } from "./token_meter.ts";
 * const route = dashboardRoute({ dispatcher: new Dispatcher(), tokens: new TokenMeter() });
 * ```
 */
export function dashboardRoute(deps: DashboardDeps): RouteDefinition {
  const started = Date.now();
  return {
    method: "GET",
    path: "/v1/management/dashboard",
    admin: true,
    handler: () => Response.json(dashboard(deps, started)),
  };
}

function dashboard(deps: DashboardDeps, started: number): Record<string, unknown> {
  const snap = deps.dispatcher.snapshot();
  const backends = new Map(snap.backends.map((b) => [b.id, b]));
  const views = new Map((deps.manager?.list() ?? []).map((v) => [v.id, v]));
  const ids = [...new Set([...views.keys(), ...backends.keys()])];
  const engines = ids.map((id) => wireEngine(id, backends.get(id), views.get(id), deps.tokens));
  return {
    object: "gateway.dashboard",
    ready: deps.dispatcher.isReady(),
    policy: snap.policy,
    uptime_s: Math.round((Date.now() - started) / 1000),
    rate_window_s: RATE_WINDOW_SECONDS,
    tokens_per_s: round1(engines.reduce((sum, e) => sum + e.tokens_per_s, 0)),
    generated_tokens: engines.reduce((sum, e) => sum + e.generated_tokens, 0),
    requests: snap.requests,
    failed: snap.failed,
    cancelled: snap.cancelled,
    retries: snap.retries,
    engines,
    queues: snap.pools.map((q) => ({
      name: q.name,
      length: q.queueLength,
      capacity: q.maxQueue,
      rejected: q.rejected,
    })),
  };
}

// A started engine may have no backend yet (loading, failed); a configured backend has no view.
function wireEngine(
  id: string,
  b: BackendSnapshot | undefined,
  v: EngineView | undefined,
  tokens: TokenMeter,
) {
  const rate = tokens.rate(id);
  const prompts = tokens.prompts(id);
  return {
    id,
    kind: v?.kind ?? (b?.kind === "embedding" ? "embedding" : "chat"),
    models: v?.models ?? b?.models ?? [],
    // The engine manager's state; `registered` for a backend from configuration.
    state: v?.state ?? "registered",
    message: v?.message ?? b?.healthMessage ?? null,
    health: b?.health ?? v?.health ?? null,
    circuit: b?.circuit ?? v?.circuit ?? null,
    circuit_opens: b?.circuitOpens ?? 0,
    draining: b?.draining ?? false,
    in_flight: b?.inFlight ?? 0,
    max_concurrency: b?.maxConcurrency ?? null,
    requests: b?.requests ?? 0,
    errors: b?.errors ?? 0,
    latency_ms: b?.latencyMs === null || b?.latencyMs === undefined ? null : round1(b.latencyMs),
    tokens_per_s: round1(rate.perSecond),
    generated_tokens: rate.total,
    // From the answers' usage: how much of the prompts the engine's prefix cache served.
    prompt_tokens: prompts.prompt,
    cached_prompt_tokens: prompts.cached,
  };
}

function round1(x: number): number {
  return Math.round(x * 10) / 10;
}

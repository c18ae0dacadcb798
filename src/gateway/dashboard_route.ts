/**
 * `GET /v1/management/dashboard`: the gateway's live state in one JSON answer, for the built-in
 * dashboard page (which polls it) and scripts: engines with health, circuit-breaker state, load
 * and tokens/s; queues; totals; with managed keys (a state store), today's usage per key and model.
 * An admin route like the rest of `/v1/management` (see `src/http/admin_guard.ts`): the page of
 * the gateway's own origin may read it, no other.
 *
 * @module
 */
import { errorMessage } from "../core/errors.ts";
import { getLogger } from "../core/logging.ts";
import type { RouteDefinition } from "../http/http_app.ts";
import type { ApiKeyRecord, UsageRow } from "../state/state_store.ts";
import type { ApiKeys } from "./api_keys.ts";
import type { BackendSnapshot } from "./backend.ts";
import type { Dispatcher } from "./dispatcher.ts";
import type { EngineManager } from "./engines/engine_manager.ts";
import type { EngineView } from "./engines/engine_types.ts";
import { RATE_WINDOW_SECONDS, type TokenMeter } from "./token_meter.ts";
import { gatewayReadiness } from "./readiness.ts";

/** What the dashboard route reads. */
export interface DashboardDeps {
  dispatcher: Dispatcher;
  manager?: EngineManager;
  tokens: TokenMeter;
  /** Managed keys (a gateway with a state store): adds `usage` once there is a key. */
  keys?: ApiKeys;
  /**
   * How long one read of the keys and today's usage is reused (default
   * {@link USAGE_REFRESH_MS}): every poll of every open page shares it.
   */
  usageRefreshMs?: number;
}

/** How long the dashboard reuses one read of the keys and their usage. */
export const USAGE_REFRESH_MS = 5000;
/** Most keys listed in `usage.keys` (the busiest today first); the rest are counted. */
export const USAGE_MAX_KEYS = 100;

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
  const usage = deps.keys ? new UsageCache(deps.keys, deps.usageRefreshMs) : undefined;
  return {
    method: "GET",
    path: "/v1/management/dashboard",
    admin: true,
    handler: async () => {
      const body = dashboard(deps, started);
      const keys = await usage?.get();
      return Response.json(keys ? { ...body, usage: keys } : body);
    },
  };
}

/** Today's usage per key on the wire. */
interface WireUsage {
  /** The UTC day counted, `YYYY-MM-DD`. */
  day: string;
  /** When the keys and usage were read (Unix seconds); reused for `usageRefreshMs`. */
  updated: number;
  keys: WireKeyUsage[];
  /** Keys left out of `keys` beyond {@link USAGE_MAX_KEYS}. */
  omitted_keys: number;
  /** Why the last read failed (the previous read is shown, if any). */
  error?: string;
}

interface ModelUsage {
  model: string;
  requests: number;
  prompt_tokens: number;
  completion_tokens: number;
}

interface WireKeyUsage extends Omit<ModelUsage, "model"> {
  id: string;
  name: string;
  /** The secret's first characters, as GET /v1/management/keys lists them. */
  prefix: string;
  scope: string;
  rpm: number | null;
  tpm: number | null;
  revoked: boolean;
  models: ModelUsage[];
}

// One read of the keys and today's rows, shared by every poll until it is `refreshMs` old (or
// the UTC day changes); concurrent polls wait on the same read.
class UsageCache {
  readonly #keys: ApiKeys;
  readonly #refreshMs: number;
  #value: WireUsage | null = null;
  #at = 0;
  #day = "";
  #reading: Promise<WireUsage | null> | null = null;

  constructor(keys: ApiKeys, refreshMs = USAGE_REFRESH_MS) {
    this.#keys = keys;
    this.#refreshMs = refreshMs;
  }

  /** Null when there is no managed key (nothing to show). */
  get(): Promise<WireUsage | null> {
    const now = Date.now();
    if (now - this.#at < this.#refreshMs && this.#day === utcDay(now)) {
      return Promise.resolve(this.#value);
    }
    this.#reading ??= this.#read(now).finally(() => this.#reading = null);
    return this.#reading;
  }

  async #read(now: number): Promise<WireUsage | null> {
    const day = utcDay(now);
    try {
      const [keys, rows] = await Promise.all([
        this.#keys.list(),
        this.#keys.usage({ since: day }),
      ]);
      this.#value = keys.length === 0 ? null : usageOf(day, now, keys, rows);
    } catch (err) {
      const message = errorMessage(err);
      getLogger("gateway").warn("the dashboard could not read the keys' usage", { error: message });
      this.#value = this.#value
        ? { ...this.#value, error: message }
        : { day, updated: Math.floor(now / 1000), keys: [], omitted_keys: 0, error: message };
    }
    this.#at = now;
    this.#day = day;
    return this.#value;
  }
}

function usageOf(day: string, now: number, keys: ApiKeyRecord[], rows: UsageRow[]): WireUsage {
  const byKey = new Map<string, ModelUsage[]>();
  for (const r of rows) {
    if (r.day !== day) continue;
    const list = byKey.get(r.keyId) ?? [];
    list.push({
      model: r.model,
      requests: r.requests,
      prompt_tokens: r.promptTokens,
      completion_tokens: r.completionTokens,
    });
    byKey.set(r.keyId, list);
  }
  const wire = keys
    // A revoked key stays listed on the day it was used.
    .filter((k) => k.revokedAt === null || byKey.has(k.id))
    .map((k): WireKeyUsage => {
      const models = (byKey.get(k.id) ?? []).sort((a, b) =>
        b.requests - a.requests || a.model.localeCompare(b.model)
      );
      const sum = (f: (m: ModelUsage) => number) => models.reduce((s, m) => s + f(m), 0);
      return {
        id: k.id,
        name: k.name,
        prefix: k.prefix,
        scope: k.scope,
        rpm: k.rpm,
        tpm: k.tpm,
        revoked: k.revokedAt !== null,
        requests: sum((m) => m.requests),
        prompt_tokens: sum((m) => m.prompt_tokens),
        completion_tokens: sum((m) => m.completion_tokens),
        models,
      };
    })
    .sort((a, b) => b.requests - a.requests || a.name.localeCompare(b.name));
  return {
    day,
    updated: Math.floor(now / 1000),
    keys: wire.slice(0, USAGE_MAX_KEYS),
    omitted_keys: Math.max(0, wire.length - USAGE_MAX_KEYS),
  };
}

function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

function dashboard(deps: DashboardDeps, started: number): Record<string, unknown> {
  const snap = deps.dispatcher.snapshot();
  const backends = new Map(snap.backends.map((b) => [b.id, b]));
  const list = deps.manager?.list() ?? [];
  const views = new Map(list.map((v) => [v.id, v]));
  const ids = [...new Set([...views.keys(), ...backends.keys()])];
  const engines = ids.map((id) => wireEngine(id, backends.get(id), views.get(id), deps.tokens));
  return {
    object: "gateway.dashboard",
    // As GET /health/ready says: engines the gateway started that are loading count.
    ready: gatewayReadiness(deps.dispatcher, list).ready,
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
    // Health probes failed in a row: a healthy engine with some is answering them late.
    failed_probes: b?.failedProbes ?? 0,
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

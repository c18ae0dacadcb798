/**
 * The management API under `/v1/management` (what `createForModel` uses). Wire fields are
 * snake_case like the rest of the HTTP API:
 *
 * - `GET    /v1/management/engines` — `{object:"list", data:[engine…]}`
 * - `POST   /v1/management/engines` — `{model?, kind?, device?, dtype?, port?, id?, reuse?,
 *   persist?, placement?}`: starts an engine (201, state `starting`) or returns the live one
 *   serving the model (200, `reused: true`). Poll `GET …/engines/{id}` until `state` is `ready`
 *   (or `error`). It starts again when the gateway restarts unless `persist` is false.
 *   `placement: "gateway"` loads an embedding engine in the gateway's own process (no port, no
 *   restarts, not stored).
 * - `POST   /v1/management/engines/register` — `{base_url, kind, api_key?, models?, aliases?,
 *   weight?, max_concurrency?, cost?, timeout_ms?, id?}`: registers a running OpenAI-compatible
 *   server (201); it persists across gateway restarts. `kind` `rerank` registers a reranker (an
 *   embedding backend whose models list as `rerank`); a Svc server's own listing also says which
 *   of its models rerank or have random weights.
 * - `GET    /v1/management/engines/{id}` — one engine (404 when unknown).
 * - `DELETE /v1/management/engines/{id}[?drain_timeout_ms=n]` — stops it with drain (200, final
 *   state `stopped`).
 * - `GET    /v1/management/status` — cluster status.
 *
 * Invalid input is a 400, a conflict (id, port or URL taken) a 409, an unknown engine a 404.
 * Every route is an admin route (see `src/http/admin_guard.ts`): the gateway key when one is
 * set, loopback callers only when none is, no CORS, no pages of other origins, JSON bodies only.
 *
 * @module
 */
import { z } from "zod";
import { ValidationError } from "../core/errors.ts";
import { DTYPES } from "../engine/dtype.ts";
import { parseRequest } from "../protocol/validate.ts";
import type { RouteDefinition } from "../http/http_app.ts";
import type { EngineManager } from "./engines/engine_manager.ts";
import { type ClusterStatus, ENGINE_ID_PATTERN, type EngineView } from "./engines/engine_types.ts";
import { type EngineKind, engineKindOf, parseModelKind } from "../core/model_kind.ts";

const KIND = z.enum(["chat", "embedding", "llm"]).transform((k) => parseModelKind(k) as EngineKind);
const ID = z.string().regex(ENGINE_ID_PATTERN, {
  error: "1-64 characters of letters, digits, '.', '_', ':' or '-'",
});

const START_SCHEMA = z.strictObject({
  model: z.string().min(1).max(512).optional(),
  kind: KIND.optional(),
  device: z.enum(["auto", "webgpu", "cpu", "wasm"]).optional(),
  dtype: z.enum(DTYPES).optional(),
  port: z.int().min(1).max(65535).optional(),
  id: ID.optional(),
  reuse: z.boolean().optional(),
  persist: z.boolean().optional(),
  placement: z.enum(["process", "gateway"]).optional(),
});

const REGISTER_SCHEMA = z.strictObject({
  id: ID.optional(),
  base_url: z.string().min(1).max(2048),
  // `rerank`: a server whose models rerank (it is an embedding backend, listed as rerank).
  kind: z.enum(["chat", "embedding", "llm", "rerank"]),
  api_key: z.string().min(1).max(4096).nullish(),
  models: z.array(z.string().min(1).max(256)).min(1).max(1000).optional(),
  aliases: z.record(z.string().min(1).max(256), z.string().min(1).max(256)).optional(),
  weight: z.number().positive().max(1000).optional(),
  max_concurrency: z.int().min(1).max(100_000).optional(),
  cost: z.number().min(0).max(1e9).optional(),
  timeout_ms: z.int().min(1).max(86_400_000).optional(),
});

/** An engine on the wire. */
export interface WireEngine {
  id: string;
  object: "engine";
  origin: EngineView["origin"];
  kind: EngineView["kind"];
  model: string | null;
  models: string[];
  base_url: string;
  state: EngineView["state"];
  message: string | null;
  /** `process` or `gateway` for a started engine (see `EnginePlacement`), null for a remote one. */
  placement: EngineView["placement"];
  pid: number | null;
  port: number | null;
  device: string | null;
  /** Weight precision: the one loaded once ready, else the one asked for. */
  dtype: string | null;
  restarts: number;
  random_weights: boolean;
  health: EngineView["health"];
  circuit: EngineView["circuit"];
  in_flight: number;
  created: number;
}

/**
 * Converts an engine view to its wire form.
 *
 * @example
 * ```ts
 * import { toWireEngine } from "./management_routes.ts";
 * // toWireEngine(manager.get("chat-8001")).base_url
 * ```
 */
export function toWireEngine(v: EngineView): WireEngine {
  return {
    id: v.id,
    object: "engine",
    origin: v.origin,
    kind: v.kind,
    model: v.model,
    models: v.models,
    base_url: v.baseUrl,
    state: v.state,
    message: v.message,
    placement: v.placement,
    pid: v.pid,
    port: v.port,
    device: v.device,
    dtype: v.dtype,
    restarts: v.restarts,
    random_weights: v.randomWeights,
    health: v.health,
    circuit: v.circuit,
    in_flight: v.inFlight,
    created: v.createdAt,
  };
}

/**
 * The management routes over an {@link EngineManager}, all admin routes.
 *
 * @example
 * ```ts
 * import { createGateway } from "@svc/cli/gateway";
 * import { managementRoutes } from "./management_routes.ts";
 * const gateway = await createGateway({ management: { home: ".svc" } });
 * const routes = managementRoutes(gateway.manager!);
 * ```
 */
export function managementRoutes(manager: EngineManager): RouteDefinition[] {
  const base = "/v1/management";
  const routes: RouteDefinition[] = [
    {
      method: "GET",
      path: `${base}/engines`,
      handler: () => Response.json({ object: "list", data: manager.list().map(toWireEngine) }),
    },
    {
      method: "POST",
      path: `${base}/engines`,
      handler: async (ctx) => {
        const req = parseRequest(START_SCHEMA, await ctx.readJson());
        const { engine, created } = await manager.startEngine(req);
        return Response.json({ ...toWireEngine(engine), reused: !created }, {
          status: created ? 201 : 200,
        });
      },
    },
    {
      method: "POST",
      path: `${base}/engines/register`,
      handler: async (ctx) => {
        const req = parseRequest(REGISTER_SCHEMA, await ctx.readJson());
        const engine = await withWireNames(() =>
          manager.registerRemote({
            id: req.id,
            baseUrl: req.base_url,
            kind: req.kind === "rerank" ? "embedding" : parseModelKind(req.kind) as EngineKind,
            ...(req.kind === "rerank" ? { rerank: true } : {}),
            apiKey: req.api_key,
            models: req.models,
            aliases: req.aliases,
            weight: req.weight,
            maxConcurrency: req.max_concurrency,
            cost: req.cost,
            timeoutMs: req.timeout_ms,
          })
        );
        return Response.json(toWireEngine(engine), { status: 201 });
      },
    },
    {
      method: "GET",
      path: `${base}/engines/:id`,
      name: `${base}/engines/{id}`,
      handler: (ctx) => Response.json(toWireEngine(manager.get(ctx.params.id))),
    },
    {
      method: "DELETE",
      path: `${base}/engines/:id`,
      name: `${base}/engines/{id}`,
      handler: async (ctx) => {
        const raw = ctx.url.searchParams.get("drain_timeout_ms");
        const drainTimeoutMs = raw === null ? undefined : Number(raw);
        if (
          drainTimeoutMs !== undefined &&
          (!Number.isInteger(drainTimeoutMs) || drainTimeoutMs < 0 || drainTimeoutMs > 3_600_000)
        ) {
          throw new ValidationError("'drain_timeout_ms' must be a whole number of ms (0-3600000)", {
            param: "drain_timeout_ms",
          });
        }
        return Response.json(toWireEngine(await manager.stop(ctx.params.id, { drainTimeoutMs })));
      },
    },
    {
      method: "GET",
      path: `${base}/status`,
      handler: () => Response.json(toWireStatus(manager.status())),
    },
  ];
  return routes.map((r) => ({ ...r, admin: true }));
}

// The backend config's camelCase fields as the register request spells them.
const WIRE_FIELDS: Record<string, string> = {
  baseUrl: "base_url",
  apiKey: "api_key",
  maxConcurrency: "max_concurrency",
  timeoutMs: "timeout_ms",
};

/**
 * Runs `register`, turning a ValidationError about a backend config field into one that names the
 * request's wire field (`base_url`, not `baseUrl`), in `param` and in the message.
 */
async function withWireNames<T>(register: () => Promise<T>): Promise<T> {
  try {
    return await register();
  } catch (err) {
    if (!(err instanceof ValidationError) || !(err.param && err.param in WIRE_FIELDS)) throw err;
    const fields = new RegExp(`'(${Object.keys(WIRE_FIELDS).join("|")})'`, "g");
    const message = err.message.replace(fields, (_, field: string) => `'${WIRE_FIELDS[field]}'`);
    throw new ValidationError(message, {
      param: WIRE_FIELDS[err.param],
      code: err.code,
      cause: err,
    });
  }
}

function toWireStatus(s: ClusterStatus): Record<string, unknown> {
  return {
    object: "cluster.status",
    ready: s.ready,
    policy: s.policy,
    uptime_s: s.uptimeSeconds,
    engines: s.engines,
    models: s.models.map((m) => ({
      id: m.id,
      kind: engineKindOf(m.kind),
      backends: m.backends,
    })),
    queues: s.queues.map((q) => ({
      name: q.name,
      length: q.queueLength,
      capacity: q.maxQueue,
      rejected: q.rejected,
    })),
    requests: s.requests,
    failed: s.failed,
    cancelled: s.cancelled,
    retries: s.retries,
  };
}

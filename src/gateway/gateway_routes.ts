/**
 * The gateway's OpenAI-compatible routes: `POST /v1/chat/completions`, `/v1/completions`,
 * `/v1/embeddings`, `/v1/rerank` (and `/rerank`, Cohere's `/v2/rerank`, vLLM's `/score` and
 * `/v1/score`: sent to the same reranker), `/tokenize` and `/detokenize` (also under `/v1`;
 * sent to whichever engine serves the model) — only the envelope checked here (see
 * request_envelope.ts; the backend validates the rest), forwarded by the dispatcher, streams
 * relayed chunk by chunk — `/v1/responses` (run as chat requests: responses_route.ts),
 * `GET /v1/models[/{id}]` (served models, and those of engines still loading or failed, with a
 * `status`), `GET /health` (liveness) and `GET /health/ready` (readiness: 503 until a backend is
 * ready and every engine the gateway started has loaded). A request for a model still loading
 * waits for it.
 *
 * Keys: the client's `Authorization` is never forwarded (the dispatcher sends each backend its own
 * key); answers carry only the headers the dispatcher builds (content type and `x-svc-backend`,
 * the id of the instance that answered), never an upstream header; error texts are passed
 * through `redactSecrets`, so a backend that echoes its key does not leak it.
 *
 * @module
 */
import { NotFoundError, ServiceUnavailableError, SvcException } from "../core/errors.ts";
import { redactSecrets } from "../core/logging.ts";
import { errorBody } from "../protocol/error_body.ts";
import type { RouteContext, RouteDefinition } from "../http/http_app.ts";
import { ResponseStore, SHARED_OWNER } from "../responses/response_store.ts";
import { responsesRoutes } from "../responses/responses_route.ts";
import { DEFAULT_ADMISSION_LIMITS } from "../engine/admission_limits.ts";
import { BACKEND_HEADER } from "./_attempt.ts";
import type { DispatchEndpoint, Dispatcher } from "./dispatcher.ts";
import type { BackendKind } from "./backend_config.ts";
import type { ModelKind } from "../core/inference_types.ts";
import { modelKindError } from "../core/model_kind.ts";
import type { EngineView } from "./engines/engine_types.ts";
import type { GatewayMetrics } from "./gateway_metrics.ts";
import { readEnvelope } from "./request_envelope.ts";
import { type TokenMeter, tokenObserver } from "./token_meter.ts";
import { type AnswerObserver, tapAnswer } from "./answer_tap.ts";
import type { AnswerUsage, KeyPrincipal } from "./api_keys.ts";
import { usageObserver } from "./usage_tap.ts";
import { gatewayReadiness } from "./readiness.ts";
import {
  type ModelState,
  modelStates,
  type ModelStatus,
  waitWhileLoading,
} from "./engines/model_states.ts";

/** What the routes need. */
export interface GatewayRouteDeps {
  dispatcher: Dispatcher;
  metrics?: GatewayMetrics;
  /** Most proxied requests handled at once; more get 503 with Retry-After (default 1024). */
  maxInFlight?: number;
  /**
   * Most `input` items of a `/v1/responses` request, counted before its body is validated
   * (default 2048, OpenAI's cap; `--max-messages`).
   */
  maxMessages?: number;
  /** The started engines (the engine manager's list), for the models still loading or failed. */
  engines?: () => EngineView[];
  /** How long a request for a model still loading waits for it (default 30000 ms). */
  loadWaitMs?: number;
  /** Where `/v1/responses` keeps stored responses (default: in memory). */
  responseStore?: ResponseStore;
  /** Counts generated tokens per backend (the dashboard's tokens/s). */
  tokens?: TokenMeter;
  /** The managed key a request came with (its model list applies). */
  principalOf?: (req: Request) => KeyPrincipal | undefined;
  /** Called once per answer to a managed key, with the answer's usage. */
  onUsage?: (key: KeyPrincipal, model: string, usage: AnswerUsage) => void;
  /**
   * Counts a managed key's request against its rate limits: the `x-ratelimit-*` headers for the
   * answer, or a 429 (key_rate_limits.ts).
   */
  admit?: (key: KeyPrincipal) => Promise<Record<string, string>>;
}

/** A model as `GET /v1/models` lists it at the gateway. */
export interface GatewayWireModel {
  id: string;
  object: "model";
  created: number;
  owned_by: string;
  /** What it does: `chat`, `embedding` or `rerank` (`/v1/rerank`). */
  kind: ModelKind;
  /** Ids of the backends that serve it. */
  backends: string[];
  /** Svc extension, as engines list it: true for a model with random weights (a demo model). */
  random_weights?: true;
  /** `ready`, `loading` (its engine is starting) or `failed` (its engine could not start). */
  status: ModelStatus;
  /** Why it is not ready; left out when ready. */
  message?: string;
}

const MAX_ERROR_BYTES = 1024 * 1024;

/**
 * Every route of the serving API.
 *
 * @example
 * ```ts
 * import { Dispatcher } from "@svc/cli/gateway";
 * import { gatewayRoutes } from "./gateway_routes.ts";
 * const routes = gatewayRoutes({ dispatcher: new Dispatcher() });
 * ```
 */
export function gatewayRoutes(deps: GatewayRouteDeps): RouteDefinition[] {
  const limit = { active: 0, max: deps.maxInFlight ?? 1024 };
  const responsesLimits = {
    ...DEFAULT_ADMISSION_LIMITS,
    maxMessages: deps.maxMessages ?? DEFAULT_ADMISSION_LIMITS.maxMessages,
  };
  const proxy = (path: string, kind: DispatchEndpoint, upstream?: string): RouteDefinition => ({
    method: "POST",
    path,
    handler: (ctx) => forward(ctx, kind, deps, limit, upstream),
  });
  return [
    proxy("/v1/chat/completions", "chat"),
    proxy("/v1/completions", "completion"),
    proxy("/v1/embeddings", "embedding"),
    // The gateway owns the Responses store and sends backends plain chat requests with the
    // history expanded: a chain works whichever engine the balancer picks for each turn, and with
    // backends that have no /v1/responses of their own (llama.cpp's server, older vLLM).
    ...responsesRoutes({
      store: deps.responseStore ?? new ResponseStore(),
      runChat: (ctx, body) => forwardBody(ctx, "chat", body, deps, limit),
      // A managed key's responses are its own; everyone else shares one owner.
      ownerOf: (req) => deps.principalOf?.(req)?.keyId ?? SHARED_OWNER,
      limitsOf: () => responsesLimits,
    }),
    proxy("/v1/rerank", "rerank"),
    proxy("/rerank", "rerank"),
    proxy("/v2/rerank", "rerank", "/v2/rerank"),
    proxy("/score", "rerank", "/score"),
    proxy("/v1/score", "rerank", "/score"),
    ...["", "/v1"].flatMap((prefix) => [
      proxy(`${prefix}/tokenize`, "tokenize"),
      proxy(`${prefix}/detokenize`, "detokenize"),
    ]),
    {
      method: "GET",
      path: "/v1/models",
      handler: (ctx) =>
        Response.json({
          object: "list",
          data: modelStates(deps).filter((m) => mayUse(deps, ctx.req, m.id)).map(toWireModel),
        }),
    },
    {
      method: "GET",
      path: "/v1/models/:id*",
      name: "/v1/models/{id}",
      handler: (ctx) => {
        const id = ctx.params.id;
        const found = modelStates(deps).find((m) => m.id === id && mayUse(deps, ctx.req, id));
        if (found === undefined) {
          throw new NotFoundError(
            `The model '${id.slice(0, 200)}' is not served by any healthy backend; ` +
              "GET /v1/models lists them.",
            { code: "model_not_found", param: "model" },
          );
        }
        return Response.json(toWireModel(found));
      },
    },
    {
      method: "GET",
      path: "/health",
      public: true,
      handler: () => Response.json({ status: "ok" }),
    },
    {
      method: "GET",
      path: "/health/ready",
      public: true,
      handler: () => readiness(deps),
    },
  ];
}

// Whether the request's managed key (if any) may use `model`.
function mayUse(deps: GatewayRouteDeps, req: Request, model: string): boolean {
  const models = deps.principalOf?.(req)?.models;
  return models === undefined || models === null || models.includes(model);
}

function toWireModel(m: ModelState): GatewayWireModel {
  return {
    id: m.id,
    object: "model",
    created: m.created,
    owned_by: "svc",
    kind: m.modelKind,
    backends: m.backends,
    ...(m.randomWeights ? { random_weights: true as const } : {}),
    status: m.status,
    ...(m.message !== null ? { message: m.message } : {}),
  };
}

// Ready as gatewayReadiness decides (the dashboard and /metrics say the same).
function readiness(deps: GatewayRouteDeps): Response {
  const dispatcher = deps.dispatcher;
  const backends = dispatcher.backends().map((b) => ({
    id: b.id,
    health: b.health,
    draining: b.draining,
    circuit: b.circuit.state,
  }));
  const { ready, loading, message } = gatewayReadiness(dispatcher, deps.engines?.());
  if (ready) return Response.json({ status: "ready", backends });
  return Response.json(
    {
      status: "not_ready",
      backends,
      ...(loading.length > 0 ? { loading } : {}),
      ...errorBody(message ?? "Not ready.", {
        type: "service_unavailable_error",
        code: "not_ready",
      }),
    },
    { status: 503, headers: { "retry-after": "1" } },
  );
}

async function forward(
  ctx: RouteContext,
  kind: DispatchEndpoint,
  deps: GatewayRouteDeps,
  limit: { active: number; max: number },
  upstream?: string,
): Promise<Response> {
  // The whole body first: a slow upload holds no slot (the server's body timeout bounds it).
  return await forwardBody(ctx, kind, await ctx.readJson(), deps, limit, upstream);
}

async function forwardBody(
  ctx: RouteContext,
  kind: DispatchEndpoint,
  body: unknown,
  deps: GatewayRouteDeps,
  limit: { active: number; max: number },
  upstream?: string,
): Promise<Response> {
  // A body without a model to route on is a 400 here; the backend judges the rest.
  const { model } = readEnvelope(body);
  const principal = deps.principalOf?.(ctx.req);
  if (principal && !mayUse(deps, ctx.req, model)) {
    // OpenAI's answer for a model the key may not use: the same 404 as for one that does not
    // exist, so a key does not learn which models others may use.
    throw new NotFoundError(
      `The model '${model.slice(0, 200)}' does not exist or you do not have access to it.`,
      { code: "model_not_found", param: "model" },
    );
  }
  const rateHeaders = principal && deps.admit ? await deps.admit(principal) : {};
  // A key's usage needs a stream's usage chunk: asked for here when the client did not ask,
  // and taken out of its answer again.
  const hideUsage = principal !== undefined && deps.onUsage !== undefined &&
    (kind === "chat" || kind === "completion") && withoutUsageChunk(body);
  if (hideUsage) body = withUsageChunk(body as Record<string, unknown>);
  const backendKind = backendKindServing(kind, model, deps);
  // Waiting for a model to load holds no slot either: nothing runs yet.
  await waitWhileLoading(deps, {
    model,
    kind: backendKind === "embedding" ? "embedding" : "chat",
    ...(kind === "rerank" ? { reranker: true } : {}),
    timeoutMs: deps.loadWaitMs,
    signal: ctx.signal,
  });
  if (limit.active >= limit.max) {
    throw new ServiceUnavailableError(
      `The gateway is at its limit of ${limit.max} requests in progress; retry shortly.`,
      { code: "gateway_overloaded", retryAfterSeconds: 1 },
    );
  }
  limit.active++;
  try {
    const started = performance.now();
    const res = await deps.dispatcher.dispatch({
      kind,
      backendKind,
      model,
      ...(upstream === undefined ? {} : { path: upstream }),
      body: body as Record<string, unknown>,
      headers: ctx.req.headers,
      signal: ctx.signal,
      requestId: ctx.requestId,
    });
    const backend = res.headers.get(BACKEND_HEADER);
    if (backend !== null) {
      deps.metrics?.observeLatency(backend, (performance.now() - started) / 1000);
    }
    if (!res.ok) return withHeaders(await redactedCopy(res, ctx), rateHeaders);
    // One tap, so each event is parsed once for the token meter and the key's usage.
    const observers: AnswerObserver[] = [];
    if (deps.tokens && backend !== null && kind !== "embedding") {
      observers.push(tokenObserver(backend, deps.tokens));
    }
    const onUsage = deps.onUsage;
    if (principal && onUsage) {
      observers.push(usageObserver((usage) => onUsage(principal, model, usage)));
    }
    return withHeaders(await tapAnswer(res, observers, { hideUsage }), rateHeaders);
  } catch (err) {
    // No instance of the wanted kind serves the model: perhaps one of the other kind does.
    if (err instanceof NotFoundError) refuseOtherKind(kind, backendKind, model, deps);
    throw redactError(err);
  } finally {
    limit.active--;
  }
}

// A streamed request whose answer would carry no usage chunk.
function withoutUsageChunk(body: unknown): boolean {
  const { stream, stream_options } = body as { stream?: unknown; stream_options?: unknown };
  return stream === true &&
    (stream_options as { include_usage?: unknown } | null | undefined)?.include_usage !== true;
}

function withUsageChunk(body: Record<string, unknown>): Record<string, unknown> {
  const options = typeof body.stream_options === "object" && body.stream_options !== null
    ? body.stream_options
    : {};
  // continuous_usage_stats applies only with include_usage, which the client did not ask for:
  // dropped, so chunks carry no usage the client would not have had.
  const { continuous_usage_stats: _, ...rest } = options as Record<string, unknown>;
  return { ...body, stream_options: { ...rest, include_usage: true } };
}

/**
 * A 400 `invalid_model_kind` (as an engine answers it) for a model that only instances of the other
 * kind serve: a chat model asked for embeddings, an embedding model or reranker for chat.
 */
function refuseOtherKind(
  kind: DispatchEndpoint,
  backendKind: BackendKind,
  model: string,
  deps: GatewayRouteDeps,
): void {
  if (kind === "tokenize" || kind === "detokenize") {
    // Any model tokenizes: the 404 lists them all, not those of one kind.
    const models = [...new Set(deps.dispatcher.models().map((m) => m.id))];
    throw new NotFoundError(
      `No backend serves the model '${model.slice(0, 200)}'.` +
        (models.length > 0 ? ` Models available: ${models.slice(0, 20).join(", ")}.` : "") +
        " GET /v1/models lists them.",
      { code: "model_not_found", param: "model" },
    );
  }
  const served = deps.dispatcher.models().filter((m) => m.id === model);
  if (served.length === 0 || served.some((m) => m.kind === backendKind)) return;
  const reranks = served[0].backends.some((id) =>
    deps.dispatcher.backend(id)?.modelFacts.rerankers.includes(model)
  );
  const has: ModelKind = backendKind === "embedding" ? "chat" : reranks ? "rerank" : "embedding";
  const wanted: ModelKind = kind === "embedding" || kind === "rerank" ? kind : "chat";
  throw modelKindError({ id: model, kind: has }, wanted);
}

/**
 * Which instances serve a request: embedding ones for embeddings and rerank (rerankers run in
 * embedding engines), LLM ones for generation; the tokenizer endpoints go to whichever kind
 * serves (or is loading) the model, LLM when none does (the dispatcher then answers 404).
 */
function backendKindServing(
  kind: DispatchEndpoint,
  model: string,
  deps: GatewayRouteDeps,
): BackendKind {
  if (kind === "embedding" || kind === "rerank") return "embedding";
  if (kind !== "tokenize" && kind !== "detokenize") return "llm";
  const served = deps.dispatcher.models().find((m) => m.id === model);
  if (served) return served.kind;
  const expected = modelStates(deps).find((m) => m.id === model);
  return expected?.kind === "embedding" ? "embedding" : "llm";
}

// A backend's error answer, passed through with any key it echoed removed. Its code is the one
// metrics count, as they would the backend's own (not a bare http_4xx).
async function redactedCopy(res: Response, ctx: RouteContext): Promise<Response> {
  const bytes = new Uint8Array(await res.arrayBuffer()).subarray(0, MAX_ERROR_BYTES);
  const text = redactSecrets(new TextDecoder().decode(bytes));
  try {
    const code = JSON.parse(text)?.error?.code;
    if (typeof code === "string") ctx.setErrorCode(code);
  } catch { /* not JSON: counted by its status */ }
  return new Response(text, { status: res.status, headers: res.headers });
}

function redactError(err: unknown): unknown {
  if (err instanceof SvcException) {
    const clean = redactSecrets(err.message);
    if (clean !== err.message) err.message = clean;
  }
  return err;
}

/** `res` with `headers` added (the same response when there are none). */
function withHeaders(res: Response, headers: Record<string, string>): Response {
  if (Object.keys(headers).length === 0) return res;
  const merged = new Headers(res.headers);
  for (const [name, value] of Object.entries(headers)) merged.set(name, value);
  return new Response(res.body, {
    status: res.status,
    statusText: res.statusText,
    headers: merged,
  });
}

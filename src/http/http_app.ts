/**
 * The HTTP layer shared by the engine server and the gateway: routing (404/405), CORS and
 * preflight, bearer auth, body limits, OpenAI error bodies for everything, request ids, and the
 * standard HTTP metrics. An app is a plain `(req, info?) => Promise<Response>` handler.
 *
 * @module
 */
import {
  CancelledError,
  MethodNotAllowedError,
  NotFoundError,
  PermissionDeniedError,
} from "../core/errors.ts";
import { registerSecret } from "../core/logging.ts";
import { checkAdminRequest } from "./admin_guard.ts";
import { BearerAuth } from "./auth.ts";
import { DEFAULT_MAX_BODY_BYTES, readJsonBody } from "./body.ts";
import { corsHeaders, type CorsOptions, preflightResponse } from "./cors.ts";
import { describeErrorResponse } from "./error_response.ts";
import { defaultHttpLogger, type HttpLogger } from "./logger.ts";
import { LATENCY_BUCKETS, methodLabel, MetricsRegistry, statusLabel } from "./metrics.ts";
import { Router } from "./router.ts";

/** Per-request facts from the server (a subset of `Deno.ServeHandlerInfo`, plus shutdown). */
export interface RequestInfo {
  /** The client's address. */
  remoteAddr?: Deno.Addr;
  /** Settles when the response has been written. */
  completed?: Promise<void>;
  /**
   * Aborted when the client goes away or the server stops waiting for this request (forced
   * shutdown); it replaces `req.signal` in the app, so it must cover the client too. Give each
   * request its own signal.
   */
  signal?: AbortSignal;
}

/** An app: what `Deno.serve` runs and what tests call directly. */
export type AppHandler = (req: Request, info?: RequestInfo) => Promise<Response>;

/** What a route handler gets. */
export interface RouteContext {
  readonly req: Request;
  readonly url: URL;
  /** Decoded path parameters (`:id`, `:id*`). */
  readonly params: Readonly<Record<string, string>>;
  /** Aborted when the client goes away or the server shuts down: pass it to the work. */
  readonly signal: AbortSignal;
  readonly requestId: string;
  readonly logger: HttpLogger;
  /** Reads the JSON body under the app's size limit (413 / 400 on failure). */
  readJson(): Promise<unknown>;
  /** Counts an error that could not change the status (an SSE error event). */
  countError(code: string): void;
  /**
   * Names the code of an error answer the route returns rather than throws (one it passes on or
   * rewrites), so metrics count that code instead of `http_<status>` (a code that is not a
   * short snake_case word is ignored).
   */
  setErrorCode(code: string): void;
}

/** One route. */
export interface RouteDefinition {
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  /** Path template: `/v1/models/:id*`. */
  path: string;
  handler: (ctx: RouteContext) => Promise<Response> | Response;
  /** Reachable without the API key (`/health`). */
  public?: boolean;
  /**
   * An admin route (the management API): no CORS, no preflight, no page of another origin,
   * JSON bodies only, and loopback callers only when there is no API key (see admin_guard.ts).
   */
  admin?: boolean;
  /** Label in metrics (default: the path template). */
  name?: string;
  /**
   * Left out of the endpoints an unknown URL's 404 lists: the route answers only to say what to
   * call instead (an engine server's chat route when it serves no chat model).
   */
  unlisted?: boolean;
}

/** Options of {@link createHttpApp}. */
export interface HttpAppOptions {
  /** When set, every non-public route needs `Authorization: Bearer <apiKey>`. */
  apiKey?: string;
  /** Body size limit in bytes (default {@link DEFAULT_MAX_BODY_BYTES}). */
  maxBodyBytes?: number;
  /** CORS settings of the non-admin routes; `false` sends no CORS headers. Default: any origin. */
  cors?: CorsOptions | false;
  /** Access and error log. */
  logger?: HttpLogger;
  /** Where the HTTP metrics go (default: a private registry). */
  metrics?: MetricsRegistry;
  /** Prefix of metric names (default `svc`). */
  metricsPrefix?: string;
}

/**
 * Builds an app from routes, with the shared HTTP behaviour around them. No request can make it
 * throw: every failure becomes an OpenAI error body.
 *
 * @example
 * ```ts
 * import { createHttpApp } from "./http_app.ts";
 * const app = createHttpApp([
 *   { method: "GET", path: "/ping", handler: () => Response.json({ ok: true }), public: true },
 * ], { apiKey: "k" });
 * const res = await app(new Request("http://localhost/ping"));
 * ```
 */
export function createHttpApp(
  routes: readonly RouteDefinition[],
  options: HttpAppOptions = {},
): AppHandler {
  const router = new Router<RouteDefinition>();
  for (const r of routes) router.add(r.method, r.path, r);
  const auth = options.apiKey ? new BearerAuth(options.apiKey) : undefined;
  registerSecret(options.apiKey); // never written to a log line
  const maxBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const logger = options.logger ?? defaultHttpLogger();
  const cors = options.cors === false ? undefined : options.cors ?? {};
  const m = httpMetrics(options.metrics ?? new MetricsRegistry(), options.metricsPrefix ?? "svc");

  return async (req: Request, info?: RequestInfo): Promise<Response> => {
    const started = performance.now();
    const requestId = crypto.randomUUID();
    let routeName = "unmatched";
    let res: Response;
    let errorCode: string | undefined;
    // The code a route gave the error answer it returned (a thrown error's code wins).
    let answeredCode: string | undefined;
    let admin = false;
    m.inFlight.inc();
    try {
      const url = new URL(req.url);
      const found = router.match(req.method, url.pathname);
      admin = found.kind === "found"
        ? found.match.route.admin === true
        : found.kind === "method_not_allowed" && found.routes.some((r) => r.admin);
      if (req.method === "OPTIONS") {
        routeName = "preflight";
        if (admin) {
          throw new PermissionDeniedError(
            "The management API does not answer CORS preflights: web pages may not call it.",
            { code: "origin_not_allowed" },
          );
        }
        res = preflightResponse(req, cors ?? {}, router.methodsFor(url.pathname));
      } else {
        const isPublic = found.kind === "found"
          ? found.match.route.public === true
          : found.kind === "method_not_allowed" && found.routes.some((r) => r.public);
        if (auth !== undefined && !isPublic) auth.verify(req.headers.get("authorization"));
        if (found.kind === "not_found") {
          throw new NotFoundError(
            `Invalid URL (${req.method} ${url.pathname.slice(0, 200)}): this server has no such ` +
              `endpoint. It serves: ${router.endpoints((r) => !r.unlisted).join(", ")}.`,
            { code: "unknown_url" },
          );
        }
        if (found.kind === "method_not_allowed") {
          const allow = found.allowed.join(", ");
          const described = describeErrorResponse(
            new MethodNotAllowedError(
              `Method ${req.method} is not allowed on ${url.pathname}; use ${allow}.`,
            ),
            { headers: { allow } },
          );
          res = described.response;
          errorCode = described.wire.body.error.code ?? undefined;
        } else {
          const { route, params } = found.match;
          routeName = route.name ?? route.path;
          if (admin) checkAdminRequest(req, info?.remoteAddr, { keyed: auth !== undefined });
          const ctx: RouteContext = {
            req,
            url,
            params,
            signal: info?.signal ?? req.signal,
            requestId,
            logger,
            readJson: () => readJsonBody(req, { maxBytes }),
            countError: (code) => m.errors.inc(1, { route: routeName, code }),
            // A code passed on from elsewhere (a backend) becomes a label only if it looks like
            // one: a short snake_case word.
            setErrorCode: (code) => void (answeredCode = ERROR_CODE.test(code) ? code : undefined),
          };
          res = await route.handler(ctx);
          if (req.method === "HEAD" && res.body !== null) {
            await res.body.cancel().catch(() => {});
            res = new Response(null, res);
          }
        }
      }
    } catch (err) {
      const described = describeErrorResponse(err, { logger, requestId });
      res = described.response;
      errorCode = described.wire.body.error.code ?? undefined;
    }
    res = withHeaders(res, {
      "x-request-id": requestId,
      ...(cors && !admin ? corsHeaders(req.headers.get("origin"), cors) : {}),
    });
    if (res.status >= 400) {
      const code = errorCode ?? answeredCode ?? `http_${statusLabel(res.status)}`;
      m.errors.inc(1, { route: routeName, code });
    }
    const record = (cancelled = false) => {
      m.inFlight.dec();
      // A stream the client left is counted as cancelled (nginx's 499), whatever its head said.
      if (cancelled) m.errors.inc(1, { route: routeName, code: "cancelled" });
      const status = statusLabel(cancelled ? 499 : res.status);
      // Labels are bounded: routeName is a route template, "unmatched" or "preflight".
      m.requests.inc(1, { route: routeName, method: methodLabel(req.method), status });
      m.latency.observe((performance.now() - started) / 1000, { route: routeName });
    };
    const type = res.headers.get("content-type") ?? "";
    // The type first: asking for `res.body` makes a body stream (costly) that may go unused.
    if (type.startsWith("text/event-stream") && res.body !== null) return onBodyEnd(res, record);
    record();
    return res;
  };
}

// What an error code given by a route must look like to become a metrics label.
const ERROR_CODE = /^[a-z][a-z0-9_]{0,63}$/;

/** The standard HTTP metrics of an app. */
function httpMetrics(registry: MetricsRegistry, prefix: string) {
  return {
    requests: registry.counter(`${prefix}_http_requests_total`, "HTTP requests answered.", {
      labelNames: ["route", "method", "status"],
    }),
    errors: registry.counter(
      `${prefix}_http_errors_total`,
      "Error answers and in-stream error events, by error code.",
      { labelNames: ["route", "code"] },
    ),
    latency: registry.histogram(
      `${prefix}_http_request_duration_seconds`,
      "Time from request to the end of the response (streams: to the last event).",
      { labelNames: ["route"], buckets: LATENCY_BUCKETS },
    ),
    inFlight: registry.gauge(
      `${prefix}_http_requests_in_flight`,
      "Requests being handled (streams count until they end).",
    ),
  };
}

/** Sets headers, copying the response first when its headers are immutable (a fetch result). */
function withHeaders(res: Response, headers: Record<string, string>): Response {
  try {
    for (const [k, v] of Object.entries(headers)) res.headers.set(k, v);
    return res;
  } catch {
    const copy = new Response(res.body, res);
    for (const [k, v] of Object.entries(headers)) copy.headers.set(k, v);
    return copy;
  }
}

/**
 * Calls `done` once when the streamed body ends, fails or is cancelled (then with `true`, as when
 * it fails with a `CancelledError`).
 */
function onBodyEnd(res: Response, done: (cancelled?: boolean) => void): Response {
  const reader = res.body!.getReader();
  let called = false;
  const once = (cancelled?: boolean) => {
    if (!called) {
      called = true;
      done(cancelled);
    }
  };
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { value, done: end } = await reader.read();
        if (end) {
          controller.close();
          once();
        } else {
          controller.enqueue(value);
        }
      } catch (err) {
        controller.error(err);
        // A body that failed because its request was cancelled (the client left) is cancelled.
        once(err instanceof CancelledError);
      }
    },
    async cancel(reason) {
      once(true);
      await reader.cancel(reason).catch(() => {});
    },
  }, { highWaterMark: 0 });
  return new Response(body, {
    status: res.status,
    statusText: res.statusText,
    headers: res.headers,
  });
}

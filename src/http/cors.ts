/**
 * CORS: response headers and preflight answers, with configurable allowed origins.
 *
 * @module
 */

/** CORS settings. */
export interface CorsOptions {
  /** `"*"` (any origin, the default for local use) or the exact origins allowed. */
  origins?: "*" | readonly string[];
  /** Request headers a browser may send; default: whatever the preflight asks for. */
  allowHeaders?: readonly string[];
  /** How long a browser may cache a preflight, in seconds (default 600). */
  maxAgeSeconds?: number;
}

/**
 * Headers browsers may read from our responses: a key's rate limits (`x-ratelimit-*`, as OpenAI
 * names them) too, so a web client can slow down before a 429.
 */
const EXPOSE_HEADERS = [
  "x-request-id",
  "retry-after",
  "x-svc-store-warning",
  ...["requests", "tokens"].flatMap((kind) =>
    ["limit", "remaining", "reset"].map((what) => `x-ratelimit-${what}-${kind}`)
  ),
].join(", ");

/**
 * CORS headers for a response to a request from `origin` (none when the origin is not allowed).
 *
 * @example
 * ```ts
 * import { corsHeaders } from "./cors.ts";
 * corsHeaders("https://app.example", {}); // { "access-control-allow-origin": "*", ... }
 * ```
 */
export function corsHeaders(origin: string | null, options: CorsOptions): Record<string, string> {
  const origins = options.origins ?? "*";
  if (origins === "*") {
    return {
      "access-control-allow-origin": "*",
      "access-control-expose-headers": EXPOSE_HEADERS,
    };
  }
  if (origin === null || !origins.includes(origin)) return { vary: "Origin" };
  return {
    "access-control-allow-origin": origin,
    "access-control-expose-headers": EXPOSE_HEADERS,
    vary: "Origin",
  };
}

/**
 * Answers an `OPTIONS` request: a CORS preflight (204 with the allow-* headers) or a plain
 * `OPTIONS` (204 with `Allow`).
 *
 * @example
 * ```ts
 * import { preflightResponse } from "./cors.ts";
 * const res = preflightResponse(new Request("http://x/v1/models", { method: "OPTIONS" }), {}, [
 *   "GET",
 * ]);
 * ```
 */
export function preflightResponse(
  req: Request,
  options: CorsOptions,
  methods: readonly string[],
): Response {
  const allow = [...new Set([...methods, "OPTIONS"])].join(", ");
  const headers = new Headers({ allow });
  const cors = corsHeaders(req.headers.get("origin"), options);
  for (const [k, v] of Object.entries(cors)) headers.set(k, v);
  if (cors["access-control-allow-origin"] !== undefined) {
    headers.set("access-control-allow-methods", allow);
    const asked = req.headers.get("access-control-request-headers");
    const allowHeaders = options.allowHeaders?.join(", ") ??
      asked ?? "authorization, content-type";
    headers.set("access-control-allow-headers", allowHeaders);
    headers.set("access-control-max-age", String(options.maxAgeSeconds ?? 600));
  }
  return new Response(null, { status: 204, headers });
}

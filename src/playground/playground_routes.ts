/**
 * The built-in playground at `/`: a browser (one that accepts `text/html`) gets the page — chat,
 * embeddings similarity and, on the gateway, the live dashboard; any other client gets a short
 * JSON description of the server. The page, its script and its style are embedded in modules
 * (no files read at run time, so the package works from an http(s) URL) and served with a strict
 * Content-Security-Policy: no inline code, nothing from another origin.
 *
 * @module
 */
import type { RouteDefinition } from "../http/http_app.ts";
import { PLAYGROUND_CSS } from "./_page_css.ts";
import { playgroundHtml } from "./_page_html.ts";
import { PLAYGROUND_JS } from "./_page_js.ts";

/** Options of {@link playgroundRoutes}. */
export interface PlaygroundOptions {
  /** Show the dashboard (the gateway, which serves `/v1/management/dashboard`). */
  dashboard: boolean;
}

/** The policy sent with the page: its own script, style and API calls, nothing else. */
export const PLAYGROUND_CSP: string = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

const SECURITY_HEADERS = {
  "content-security-policy": PLAYGROUND_CSP,
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
  "cache-control": "no-cache",
};

/**
 * `GET /` (page or JSON), `GET /playground/app.js` and `GET /playground/app.css`, all public:
 * the page holds no data, and asks for the API key when a call answers 401.
 *
 * @example
 * ```ts
 * import { playgroundRoutes } from "./playground_routes.ts";
 * const routes = playgroundRoutes({ dashboard: false });
 * ```
 */
export function playgroundRoutes(options: PlaygroundOptions): RouteDefinition[] {
  const html = playgroundHtml(options);
  const asset = (path: string, type: string, body: string): RouteDefinition => ({
    method: "GET",
    path,
    public: true,
    handler: () => new Response(body, { headers: { ...SECURITY_HEADERS, "content-type": type } }),
  });
  return [
    {
      method: "GET",
      path: "/",
      public: true,
      handler: (ctx) => {
        if (!(ctx.req.headers.get("accept") ?? "").includes("text/html")) {
          return Response.json(describeServer(options), { headers: { vary: "Accept" } });
        }
        return new Response(html, {
          headers: {
            ...SECURITY_HEADERS,
            "content-type": "text/html; charset=utf-8",
            vary: "Accept",
          },
        });
      },
    },
    asset("/playground/app.js", "text/javascript; charset=utf-8", PLAYGROUND_JS),
    asset("/playground/app.css", "text/css; charset=utf-8", PLAYGROUND_CSS),
  ];
}

function describeServer(options: PlaygroundOptions): Record<string, unknown> {
  return {
    object: "server",
    name: "svc",
    message: "Svc is running. Open this address in a browser for the playground.",
    api_base: "/v1",
    health: "/health",
    ...(options.dashboard ? { dashboard: "/v1/management/dashboard" } : {}),
  };
}

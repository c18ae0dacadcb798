/**
 * The checks in front of admin routes (the gateway's management API), which no web page may
 * drive: a page the user visits can send requests to a loopback server, so its browser is the
 * attacker's client. Admin routes get no CORS headers; on top of that a request is refused
 * (403) when it comes from a browser page of another origin, and (415) when its body is not
 * declared `application/json` (a `text/plain` body is the one a page can send without asking).
 * With no API key, only callers on this machine (a loopback TCP peer, addressing a loopback host
 * name, so DNS rebinding does not count as loopback) are accepted.
 *
 * @module
 */
import { PermissionDeniedError, UnsupportedMediaTypeError } from "../core/errors.ts";
import { isLoopbackHost } from "../core/loopback.ts";

/**
 * Throws PermissionDeniedError or UnsupportedMediaTypeError unless the request may use an admin
 * route. `remoteAddr` is the TCP peer from the server; none means an in-process call (no
 * socket), which is trusted like the process itself.
 *
 * @example
 * ```ts
 * import { checkAdminRequest } from "./admin_guard.ts";
 * const req = new Request("http://127.0.0.1:8000/v1/management/engines");
 * checkAdminRequest(req, { transport: "tcp", hostname: "127.0.0.1", port: 5000 }, {
 *   keyed: false,
 * }); // passes
 * ```
 */
export function checkAdminRequest(
  req: Request,
  remoteAddr: Deno.Addr | undefined,
  options: { keyed: boolean },
): void {
  const url = new URL(req.url);
  const origin = req.headers.get("origin");
  const site = req.headers.get("sec-fetch-site");
  if ((origin !== null && origin !== url.origin) || (site !== null && !SAME_SITE.has(site))) {
    throw new PermissionDeniedError(
      `The management API does not answer web pages of other origins (Origin ${
        (origin ?? site ?? "").slice(0, 200)
      }); call it from the CLI, the client library or a same-origin tool.`,
      { code: "origin_not_allowed" },
    );
  }
  if (!options.keyed) {
    const peer = remoteAddr?.transport === "tcp" ? remoteAddr.hostname : undefined;
    if ((peer !== undefined && !isLoopbackHost(peer)) || !isLoopbackHost(url.hostname)) {
      throw new PermissionDeniedError(
        "Without an API key the management API only answers callers on this machine " +
          "(loopback address and host name); set SVC_CHAT_API_KEY to manage the gateway remotely.",
        { code: "not_loopback" },
      );
    }
  }
  const hasBody = req.method === "POST" || req.method === "PUT" || req.method === "PATCH";
  const type = req.headers.get("content-type")?.split(";")[0].trim().toLowerCase();
  if (hasBody && type !== "application/json") {
    throw new UnsupportedMediaTypeError(
      `The management API takes JSON bodies only: send 'Content-Type: application/json' (got ${
        type === undefined || type === "" ? "none" : `'${type.slice(0, 100)}'`
      }).`,
      { code: "unsupported_media_type" },
    );
  }
}

// `none`: typed in the address bar or sent by a non-page context (extensions, bookmarks).
const SAME_SITE = new Set(["same-origin", "none"]);

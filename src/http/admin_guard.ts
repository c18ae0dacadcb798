/**
 * The checks in front of admin routes (the gateway's management API), which no web page may
 * drive: a page the user visits can send requests to a loopback server, so its browser is the
 * attacker's client. Admin routes get no CORS headers; on top of that a request is refused
 * (403) when it comes from a browser page of another origin, and (415) when its body is not
 * declared `application/json` (a `text/plain` body is the one a page can send without asking).
 * Without an admin key (SVC_ADMIN_API_KEY), only callers on this machine (a loopback TCP peer,
 * addressing a loopback host name, so DNS rebinding does not count as loopback) are accepted.
 *
 * {@link GatewayKeys} decides which bearer key opens which routes: the inference key
 * (SVC_CHAT_API_KEY) never opens admin routes while an admin key is set.
 *
 * @module
 */
import { PermissionDeniedError, UnsupportedMediaTypeError } from "../core/errors.ts";
import { isLoopbackHost } from "../core/loopback.ts";
import { BearerAuth } from "./auth.ts";

/**
 * Throws PermissionDeniedError or UnsupportedMediaTypeError unless the request may use an admin
 * route. `remoteAddr` is the TCP peer from the server; none means an in-process call (no
 * socket), which is trusted like the process itself. `keyed`: an admin key guards the route, so
 * callers may be remote; without one only loopback callers pass.
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
        "Without an admin key the management API only answers callers on this machine " +
          "(loopback address and host name); set SVC_ADMIN_API_KEY on the gateway to manage " +
          "it remotely.",
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

/** Where the admin routes live: the management API, the dashboard's data among them. */
export const ADMIN_PATH_PREFIX = "/v1/management";

/**
 * Whether `pathname` is under {@link ADMIN_PATH_PREFIX}.
 *
 * @example
 * ```ts
 * import { isAdminPath } from "./admin_guard.ts";
 * isAdminPath("/v1/management/status"); // true
 * ```
 */
export function isAdminPath(pathname: string): boolean {
  return pathname === ADMIN_PATH_PREFIX || pathname.startsWith(`${ADMIN_PATH_PREFIX}/`);
}

/**
 * The gateway's bearer keys: `apiKey` (SVC_CHAT_API_KEY) for inference, `adminApiKey`
 * (SVC_ADMIN_API_KEY) for admin routes. The admin key opens inference too (the operator's master
 * key, as LiteLLM's), so one key in the browser page runs chat and dashboard. The inference key
 * opens admin routes only while no admin key is set, and then only for loopback callers
 * ({@link checkAdminRequest} with `keyed: false`).
 *
 * @example
 * ```ts
 * import { GatewayKeys } from "./admin_guard.ts";
 * const keys = new GatewayKeys({ apiKey: "chat", adminApiKey: "admin" });
 * keys.checkInference("Bearer admin"); // passes: the admin key opens inference too
 * keys.checkAdmin("Bearer admin"); // passes; "Bearer chat" throws 403 admin_key_required
 * ```
 */
export class GatewayKeys {
  readonly #chat?: BearerAuth;
  readonly #admin?: BearerAuth;

  constructor(keys: { apiKey?: string; adminApiKey?: string }) {
    if (keys.apiKey) this.#chat = new BearerAuth(keys.apiKey);
    if (keys.adminApiKey) this.#admin = new BearerAuth(keys.adminApiKey);
  }

  /** Passes with the inference key or the admin key, or any request when no inference key is set. */
  checkInference(authorization: string | null): void {
    if (this.#chat === undefined || (this.#admin && matches(this.#admin, authorization))) return;
    this.#chat.verify(authorization);
  }

  /**
   * Passes with the admin key when one is set (the inference key alone: 403
   * `admin_key_required`), else with the inference key when that is set, else always.
   */
  checkAdmin(authorization: string | null): void {
    if (this.#admin === undefined) {
      this.#chat?.verify(authorization);
      return;
    }
    if (!matches(this.#admin, authorization) && this.#chat && matches(this.#chat, authorization)) {
      throw new PermissionDeniedError(
        "This key opens the inference API only: the management API and the dashboard need the " +
          "gateway's admin key (SVC_ADMIN_API_KEY) in 'Authorization: Bearer <key>'.",
        { code: "admin_key_required" },
      );
    }
    this.#admin.verify(authorization);
  }
}

function matches(auth: BearerAuth, authorization: string | null): boolean {
  try {
    auth.verify(authorization);
    return true;
  } catch {
    return false;
  }
}

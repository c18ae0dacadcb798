/**
 * Who may call the gateway: the static keys of {@link GatewayKeys} (SVC_CHAT_API_KEY,
 * SVC_ADMIN_API_KEY) and, with a state store, the managed keys of {@link ApiKeys}. The static keys
 * are compared first (in constant time), so an operator's key may start with `sk-svc-` too; any
 * other bearer token that starts with `sk-svc-` is always looked up (an unknown or revoked one is
 * a 401 even on a gateway that needs no key; a store that cannot be reached, a 503); an
 * `inference` key on an admin route is a 403.
 *
 * The caller found for a request is remembered for that request, so the serving routes can apply
 * the key's model list and record its usage.
 *
 * @module
 */
import { AuthenticationError, PermissionDeniedError } from "../core/errors.ts";
import { GatewayKeys } from "../http/admin_guard.ts";
import { BearerAuth } from "../http/auth.ts";
import { type ApiKeys, KEY_PREFIX, type KeyPrincipal } from "./api_keys.ts";

/** Options of {@link GatewayAuth}. */
export interface GatewayAuthOptions {
  apiKey?: string;
  adminApiKey?: string;
  /** Managed keys (a gateway with a state store). */
  keys?: ApiKeys;
  /**
   * Inference needs a key even without SVC_CHAT_API_KEY (a managed key or the admin key) once
   * SVC_ADMIN_API_KEY is set: what `svc llm gateway` does, so keys with a model list cannot be
   * bypassed by sending none.
   */
  inferenceNeedsKey?: boolean;
}

/**
 * Checks requests' keys and remembers their callers.
 *
 * @example
 * ```ts
 * import { GatewayAuth } from "./gateway_auth.ts";
 * const auth = new GatewayAuth({ apiKey: "chat" });
 * const req = new Request("http://gw/v1/models", { headers: { authorization: "Bearer chat" } });
 * await auth.checkInference(req); // passes; no managed key, so no principal
 * ```
 */
export class GatewayAuth {
  readonly #static: GatewayKeys;
  readonly #keys?: ApiKeys;
  readonly #admin?: BearerAuth;
  readonly #chat?: BearerAuth;
  readonly #needsKey: boolean;
  readonly #principals = new WeakMap<Request, KeyPrincipal>();

  constructor(options: GatewayAuthOptions) {
    this.#static = new GatewayKeys(options);
    this.#keys = options.keys;
    if (options.adminApiKey) this.#admin = new BearerAuth(options.adminApiKey);
    if (options.apiKey) this.#chat = new BearerAuth(options.apiKey);
    this.#needsKey = Boolean(options.inferenceNeedsKey && options.adminApiKey && !options.apiKey);
  }

  /** Passes the request to an inference route or throws 401. */
  async checkInference(req: Request): Promise<void> {
    const authorization = req.headers.get("authorization");
    const managed = await this.#managed(authorization);
    if (managed !== undefined) {
      this.#principals.set(req, managed);
      return;
    }
    if (this.#needsKey) this.#admin!.verify(authorization);
    else this.#static.checkInference(authorization);
  }

  /** Passes the request to an admin route or throws 401/403. */
  async checkAdmin(req: Request): Promise<void> {
    const authorization = req.headers.get("authorization");
    const managed = await this.#managed(authorization);
    if (managed === undefined) return this.#static.checkAdmin(authorization);
    if (managed.scope !== "admin") {
      throw new PermissionDeniedError(
        "This key opens the inference API only: the management API needs a key with scope " +
          "'admin' (or the gateway's SVC_ADMIN_API_KEY) in 'Authorization: Bearer <key>'.",
        { code: "admin_key_required" },
      );
    }
    this.#principals.set(req, managed);
  }

  /** The managed key a request was let in with, if any. */
  principalOf(req: Request): KeyPrincipal | undefined {
    return this.#principals.get(req);
  }

  async #managed(authorization: string | null): Promise<KeyPrincipal | undefined> {
    const token = authorization?.match(/^\s*bearer\s+(\S+)\s*$/i)?.[1];
    if (this.#keys === undefined || !token?.startsWith(KEY_PREFIX)) return undefined;
    // The operator's own keys are never looked up in the store (nor refused for not being there).
    if (carries(this.#admin, authorization) || carries(this.#chat, authorization)) {
      return undefined;
    }
    const key = await this.#keys.lookup(token);
    if (key === undefined) {
      throw new AuthenticationError(
        "Incorrect API key provided: it is unknown or was revoked. Ask the gateway's admin for " +
          "a key ('svc llm keys create').",
        { code: "invalid_api_key" },
      );
    }
    return { keyId: key.id, scope: key.scope, models: key.models, rpm: key.rpm, tpm: key.tpm };
  }
}

/** Whether `authorization` carries the key of `auth` (compared in constant time). */
function carries(auth: BearerAuth | undefined, authorization: string | null): boolean {
  if (auth === undefined) return false;
  try {
    auth.verify(authorization);
    return true;
  } catch {
    return false;
  }
}

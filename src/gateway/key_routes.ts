/**
 * The key and usage routes of the management API (admin routes):
 *
 * - `POST   /v1/management/keys` — `{name, scope: "inference"|"admin", rpm?, tpm?, models?}`:
 *   creates a key (201) and returns it once in `key`; only its hash is kept. `rpm`, `tpm` and
 *   `models` restrict inference keys only: an admin key can manage keys, so a restricted one could
 *   mint itself an unrestricted key; they are a 400 with `scope: "admin"` (and a restricted admin
 *   key stored by an older version may not create keys: 403).
 * - `GET    /v1/management/keys` — `{object:"list", data:[key…]}` without secrets.
 * - `DELETE /v1/management/keys/{id}` — revokes it (200; 404 when unknown or already revoked).
 * - `GET    /v1/management/usage[?key_id=…&since=YYYY-MM-DD]` — requests and tokens per key,
 *   model and UTC day.
 *
 * @module
 */
import { z } from "zod";
import { PermissionDeniedError, ValidationError } from "../core/errors.ts";
import type { RouteDefinition } from "../http/http_app.ts";
import { parseRequest } from "../protocol/validate.ts";
import type { ApiKeyRecord } from "../state/state_store.ts";
import type { ApiKeys, KeyPrincipal } from "./api_keys.ts";

const CREATE_SCHEMA = z.strictObject({
  name: z.string().min(1).max(200),
  scope: z.enum(["inference", "admin"]),
  rpm: z.int().min(1).max(1_000_000_000).nullish(),
  tpm: z.int().min(1).max(1_000_000_000_000).nullish(),
  models: z.array(z.string().min(1).max(256)).min(1).max(1000).nullish(),
});

/** A key on the wire (never its secret). */
export interface WireKey {
  id: string;
  object: "api_key";
  name: string;
  scope: string;
  prefix: string;
  rpm: number | null;
  tpm: number | null;
  models: string[] | null;
  created: number;
  revoked_at: number | null;
}

function toWireKey(k: ApiKeyRecord): WireKey {
  return {
    id: k.id,
    object: "api_key",
    name: k.name,
    scope: k.scope,
    prefix: k.prefix,
    rpm: k.rpm,
    tpm: k.tpm,
    models: k.models,
    created: k.createdAt,
    revoked_at: k.revokedAt,
  };
}

/**
 * The key routes over `keys`.
 *
 * @example
 * ```ts
 * import { openStateStore } from "@svc/cli/gateway";
 * import { ApiKeys } from "./api_keys.ts";
 * import { keyRoutes } from "./key_routes.ts";
 * const state = await openStateStore("sqlite::memory:");
 * const routes = keyRoutes(new ApiKeys(state));
 * await state.close();
 * ```
 */
export function keyRoutes(
  keys: ApiKeys,
  options: { principalOf?: (req: Request) => KeyPrincipal | undefined } = {},
): RouteDefinition[] {
  const base = "/v1/management";
  const routes: RouteDefinition[] = [
    {
      method: "POST",
      path: `${base}/keys`,
      handler: async (ctx) => {
        const req = parseRequest(CREATE_SCHEMA, await ctx.readJson());
        const caller = options.principalOf?.(ctx.req);
        if (caller && restricted(caller)) {
          throw new PermissionDeniedError(
            "This admin key has model or rate restrictions, so it may not create keys (it could " +
              "create one without them). Use SVC_ADMIN_API_KEY or an unrestricted admin key.",
            { code: "restricted_key" },
          );
        }
        if (req.scope === "admin") {
          const field = (["models", "rpm", "tpm"] as const).find((f) => req[f] != null);
          if (field !== undefined) {
            throw new ValidationError(
              `'${field}' restricts inference keys only: an admin key manages keys, so it can ` +
                "create itself one without restrictions. Leave it out, or use scope 'inference'.",
              { param: field },
            );
          }
        }
        const { key, secret } = await keys.create(req);
        return Response.json({ ...toWireKey(key), key: secret }, { status: 201 });
      },
    },
    {
      method: "GET",
      path: `${base}/keys`,
      handler: async () =>
        Response.json({ object: "list", data: (await keys.list()).map(toWireKey) }),
    },
    {
      method: "DELETE",
      path: `${base}/keys/:id`,
      name: `${base}/keys/{id}`,
      handler: async (ctx) => Response.json(toWireKey(await keys.revoke(ctx.params.id))),
    },
    {
      method: "GET",
      path: `${base}/usage`,
      handler: async (ctx) => {
        const keyId = ctx.url.searchParams.get("key_id") ?? undefined;
        const since = ctx.url.searchParams.get("since") ?? undefined;
        if (since !== undefined && !isDay(since)) {
          throw new ValidationError(
            `'since' must be a day written YYYY-MM-DD, got '${since.slice(0, 40)}'`,
            {
              param: "since",
            },
          );
        }
        const rows = await keys.usage({ keyId, since });
        return Response.json({
          object: "list",
          data: rows.map((r) => ({
            key_id: r.keyId,
            model: r.model,
            day: r.day,
            requests: r.requests,
            prompt_tokens: r.promptTokens,
            completion_tokens: r.completionTokens,
          })),
        });
      },
    },
  ];
  return routes.map((r) => ({ ...r, admin: true }));
}

/** Whether `text` is a real calendar day written YYYY-MM-DD. */
function isDay(text: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(text)) return false;
  const day = new Date(`${text}T00:00:00Z`);
  return !Number.isNaN(day.getTime()) && day.toISOString().slice(0, 10) === text;
}

/** Whether a key carries any restriction. */
function restricted(key: KeyPrincipal): boolean {
  return key.models !== null || key.rpm !== null || key.tpm !== null;
}

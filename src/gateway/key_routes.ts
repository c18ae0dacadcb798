/**
 * The key and usage routes of the management API (admin routes):
 *
 * - `POST   /v1/management/keys` — `{name, scope: "inference"|"admin", rpm?, tpm?, models?}`:
 *   creates a key (201) and returns it once in `key`; only its hash is kept.
 * - `GET    /v1/management/keys` — `{object:"list", data:[key…]}` without secrets.
 * - `DELETE /v1/management/keys/{id}` — revokes it (200; 404 when unknown or already revoked).
 * - `GET    /v1/management/usage[?key_id=…&since=YYYY-MM-DD]` — requests and tokens per key,
 *   model and UTC day.
 *
 * @module
 */
import { z } from "zod";
import { ValidationError } from "../core/errors.ts";
import type { RouteDefinition } from "../http/http_app.ts";
import { parseRequest } from "../protocol/validate.ts";
import type { ApiKeyRecord } from "../state/state_store.ts";
import type { ApiKeys } from "./api_keys.ts";

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
export function keyRoutes(keys: ApiKeys): RouteDefinition[] {
  const base = "/v1/management";
  const routes: RouteDefinition[] = [
    {
      method: "POST",
      path: `${base}/keys`,
      handler: async (ctx) => {
        const req = parseRequest(CREATE_SCHEMA, await ctx.readJson());
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
        if (since !== undefined && !/^\d{4}-\d{2}-\d{2}$/.test(since)) {
          throw new ValidationError("'since' must be a day written YYYY-MM-DD", {
            param: "since",
          });
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

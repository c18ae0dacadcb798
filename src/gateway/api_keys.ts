/**
 * Per-user API keys of the gateway, kept in the state store: created with a name, a scope
 * (`inference` or `admin`), optional model list and rate fields; shown once (`sk-svc-…`), stored
 * as a SHA-256 only; revoked by id. Lookups are cached for {@link KEY_CACHE_MS} at most, so a key
 * revoked on one replica is refused by every replica within about a second without a database
 * read per request beyond that. While the store cannot be reached, every operation fails with a
 * 503 `state_unavailable` and Retry-After (state_health.ts), never a 500.
 *
 * @module
 */
import { createHash, randomBytes } from "node:crypto";
import { NotFoundError } from "../core/errors.ts";
import type { ApiKeyRecord, KeyScope, StateStore, UsageRow } from "../state/state_store.ts";
import { StateHealth } from "./state_health.ts";

/** How long a key lookup (found or not) is reused. */
export const KEY_CACHE_MS = 1000;
/** What every key issued here starts with: tokens without it are not looked up. */
export const KEY_PREFIX = "sk-svc-";

/** What a new key may do. */
export interface NewKey {
  name: string;
  scope: KeyScope;
  rpm?: number | null;
  tpm?: number | null;
  models?: string[] | null;
}

/** A request's caller, when it used a managed key. */
export interface KeyPrincipal {
  keyId: string;
  scope: KeyScope;
  /** Models it may use; null: all. */
  models: readonly string[] | null;
  /** Requests and tokens per minute it may use; null: no limit. */
  rpm: number | null;
  tpm: number | null;
}

/** Token counts of one answer. */
export interface AnswerUsage {
  promptTokens: number;
  completionTokens: number;
}

/** Hex SHA-256 of a key. */
export function hashKey(secret: string): string {
  return createHash("sha256").update(secret, "utf8").digest("hex");
}

/**
 * Creates, finds, lists and revokes keys, and records their usage.
 *
 * @example
 * ```ts
 * import { openStateStore } from "@svc/cli/gateway";
 * import { ApiKeys } from "./api_keys.ts";
 * const state = await openStateStore("sqlite::memory:");
 * const keys = new ApiKeys(state);
 * const { secret } = await keys.create({ name: "ci", scope: "inference" });
 * console.log((await keys.lookup(secret))?.name); // "ci"
 * await state.close();
 * ```
 */
export class ApiKeys {
  readonly #state: StateStore;
  readonly #cacheMs: number;
  readonly #cache = new Map<string, { at: number; key: ApiKeyRecord | undefined }>();
  readonly #health: StateHealth;

  /** `health`: where the store's reachability is tracked (readiness reads it). */
  constructor(state: StateStore, options: { cacheMs?: number; health?: StateHealth } = {}) {
    this.#state = state;
    this.#cacheMs = options.cacheMs ?? KEY_CACHE_MS;
    this.#health = options.health ?? new StateHealth();
  }

  /** Creates a key; the secret is in the result and nowhere else. */
  async create(request: NewKey): Promise<{ key: ApiKeyRecord; secret: string }> {
    const secret = KEY_PREFIX + randomBytes(24).toString("base64url");
    const key: ApiKeyRecord = {
      id: `key_${randomBytes(8).toString("hex")}`,
      name: request.name,
      scope: request.scope,
      hash: hashKey(secret),
      prefix: secret.slice(0, KEY_PREFIX.length + 4),
      rpm: request.rpm ?? null,
      tpm: request.tpm ?? null,
      models: request.models ?? null,
      createdAt: Math.floor(Date.now() / 1000),
      revokedAt: null,
    };
    await this.#health.run(() => this.#state.createKey(key));
    return { key, secret };
  }

  /** Every key (revoked ones too), without secrets. */
  list(): Promise<ApiKeyRecord[]> {
    return this.#health.run(() => this.#state.listKeys());
  }

  /** Revokes a key; NotFoundError when no valid key has this id. */
  async revoke(id: string): Promise<ApiKeyRecord> {
    const at = Math.floor(Date.now() / 1000);
    const revoked = await this.#health.run(() => this.#state.revokeKey(id, at));
    const key = (await this.list()).find((k) => k.id === id);
    if (!revoked || key === undefined) {
      throw new NotFoundError(
        key === undefined
          ? `no key has the id '${id.slice(0, 100)}'; GET /v1/management/keys lists them`
          : `the key '${id.slice(0, 100)}' was already revoked`,
        { code: "key_not_found", param: "id" },
      );
    }
    this.#cache.delete(key.hash);
    return key;
  }

  /** The valid (not revoked) key with this secret, or undefined. */
  async lookup(secret: string): Promise<ApiKeyRecord | undefined> {
    const hash = hashKey(secret);
    const now = Date.now();
    const cached = this.#cache.get(hash);
    if (cached && now - cached.at < this.#cacheMs) return cached.key;
    const found = await this.#health.run(() => this.#state.findKeyByHash(hash));
    const key = found && found.revokedAt === null ? found : undefined;
    if (this.#cache.size > 10_000) this.#cache.clear(); // bound memory against random tokens
    this.#cache.set(hash, { at: now, key });
    return key;
  }

  /** Adds one answer to the key's usage for `model` today (UTC). */
  recordUsage(keyId: string, model: string, usage: AnswerUsage): Promise<void> {
    const row: UsageRow = {
      keyId,
      model,
      day: new Date().toISOString().slice(0, 10),
      requests: 1,
      promptTokens: usage.promptTokens,
      completionTokens: usage.completionTokens,
    };
    return this.#health.run(() => this.#state.addUsage(row));
  }

  /** Usage rows, filtered by key and first day. */
  usage(filter: { keyId?: string; since?: string } = {}): Promise<UsageRow[]> {
    return this.#health.run(() => this.#state.listUsage(filter));
  }
}

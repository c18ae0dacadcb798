/**
 * The state a gateway shares with its replicas, behind one small interface: registered engines
 * (versioned rows plus a change counter replicas poll), stored Responses-API responses (bounded),
 * API keys (hashes only) and usage rollups per key, model and day. Two implementations:
 * SQLite (`sqlite:<path>`, the embedded default) and PostgreSQL (`postgres://…`), opened by
 * `openStateStore` (open_state_store.ts).
 *
 * The store knows nothing of what an engine entry means: the gateway keeps its own shape in
 * `data`, so this layer sits below `src/gateway/`.
 *
 * @module
 */

/** One registered engine as stored: its id, its row version and the gateway's own record. */
export interface EngineRow {
  /** Engine id (unique). */
  id: string;
  /** Bumped by every write of this row: the optimistic-concurrency token. */
  version: number;
  /** The gateway's record of the engine (JSON-serializable). */
  data: Record<string, unknown>;
}

/** Every engine with the change counter read in the same transaction. */
export interface EngineListing {
  /** Bumped by every engine write; equal counters mean equal listings. */
  version: number;
  /** The engines, in the order they were last written. */
  engines: EngineRow[];
}

/** Who a key belongs to and what it may do. */
export type KeyScope = "inference" | "admin";

/** An API key as stored: never the key itself, only its SHA-256. */
export interface ApiKeyRecord {
  /** Public id (`key_…`), used to revoke it. */
  id: string;
  /** The owner's label. */
  name: string;
  /** What it opens: the inference API, or the management API too. */
  scope: KeyScope;
  /** Hex SHA-256 of the secret. */
  hash: string;
  /** The secret's first characters, to recognise it in a list. */
  prefix: string;
  /** Requests per minute allowed (enforced by the gateway on its coordinator). */
  rpm: number | null;
  /** Tokens per minute allowed (charged from answers' usage). */
  tpm: number | null;
  /** Models the key may use; null: all. */
  models: string[] | null;
  /** Seconds since the epoch. */
  createdAt: number;
  /** Seconds since the epoch; null while valid. */
  revokedAt: number | null;
}

/** Usage of one key for one model on one UTC day. */
export interface UsageRow {
  /** The key's id. */
  keyId: string;
  /** The model as the client named it. */
  model: string;
  /** `YYYY-MM-DD`, UTC. */
  day: string;
  /** Answered requests. */
  requests: number;
  /** Prompt tokens of their answers' usage. */
  promptTokens: number;
  /** Completion tokens of their answers' usage. */
  completionTokens: number;
}

/** Which usage rows to list. */
export interface UsageFilter {
  /** One key's rows only. */
  keyId?: string;
  /** First day included (`YYYY-MM-DD`). */
  since?: string;
}

/**
 * Bounds of the response table, enforced after each write by evicting the oldest rows. The count
 * and byte caps hold per owner (one key cannot evict another's responses); the age limit for all.
 */
export interface ResponseCaps {
  /** Most responses kept per owner. */
  maxEntries: number;
  /** Most bytes of one owner's responses together. */
  maxTotalBytes: number;
  /** Rows written longer ago than this (milliseconds) are evicted too; no age limit when absent. */
  maxAgeMs?: number;
}

/**
 * The shared state. Every method may be called by several processes on one database at once.
 *
 * @example
 * ```ts
 * import { openStateStore } from "@svc/cli/gateway";
 * const store = await openStateStore("sqlite::memory:");
 * console.log((await store.listEngines()).engines); // []
 * await store.close();
 * ```
 */
export interface StateStore {
  /** Where the state lives, without any password (for logs). */
  readonly description: string;

  /** The engines' change counter (cheap: what replicas poll). */
  enginesVersion(): Promise<number>;
  /** Every registered engine, with the counter. */
  listEngines(): Promise<EngineListing>;
  /**
   * Writes an engine when its row is still at `expectedVersion` (null: it must not exist yet);
   * returns the new row version. ConflictError (`engine_version_conflict`) when another writer
   * got there first, so no registration silently overwrites another.
   */
  putEngine(id: string, data: Record<string, unknown>, expectedVersion: number | null): Promise<
    number
  >;
  /** Removes an engine; false when there was none. */
  deleteEngine(id: string): Promise<boolean>;

  /**
   * The stored JSON of a response stored by `owner`, or undefined (none, or another owner's).
   * Owners are opaque strings: the gateway uses a managed key's id, '' for everyone else.
   */
  getResponse(id: string, owner: string): Promise<string | undefined>;
  /**
   * Stores (or replaces) a response of `owner`, then evicts that owner's oldest beyond `caps`
   * (never this one), and every owner's rows older than `caps.maxAgeMs`.
   */
  putResponse(id: string, owner: string, json: string, caps: ResponseCaps): Promise<void>;
  /** Removes a response of `owner`; false when there was none (or it is another owner's). */
  deleteResponse(id: string, owner: string): Promise<boolean>;

  /** Adds a key (its id and hash must be new). */
  createKey(key: ApiKeyRecord): Promise<void>;
  /** The key with this hash, revoked ones included (the caller decides). */
  findKeyByHash(hash: string): Promise<ApiKeyRecord | undefined>;
  /** Every key, oldest first. */
  listKeys(): Promise<ApiKeyRecord[]>;
  /** Marks a key revoked; false when no such key exists (or it was revoked already). */
  revokeKey(id: string, at: number): Promise<boolean>;

  /** Adds one answer's counts to its key/model/day row. */
  addUsage(row: UsageRow): Promise<void>;
  /** Usage rows, by day then key then model. */
  listUsage(filter?: UsageFilter): Promise<UsageRow[]>;

  /** Releases the connection(s). */
  close(): Promise<void>;
}

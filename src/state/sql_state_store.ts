/**
 * The {@link StateStore} over a {@link SqlDriver}: the same statements for SQLite and PostgreSQL
 * (both take `ON CONFLICT … DO UPDATE` and window functions), the schema kept current by
 * `migrate` when opened.
 *
 * @module
 */
import { ConflictError } from "../core/errors.ts";
import { migrate } from "./_migrations.ts";
import { num, type SqlDriver, type SqlExecutor, type SqlRow } from "./_sql.ts";
import type {
  ApiKeyRecord,
  EngineListing,
  EngineRow,
  KeyScope,
  ResponseCaps,
  StateStore,
  UsageFilter,
  UsageRow,
} from "./state_store.ts";

const encoder = new TextEncoder();

/**
 * A state store on an open database.
 *
 * @example
 * ```ts
 * import { openSqlite } from "./sqlite_driver.ts";
 * import { SqlStateStore } from "./sql_state_store.ts";
 * const store = await SqlStateStore.open(await openSqlite(":memory:"), "memory");
 * await store.close();
 * ```
 */
export class SqlStateStore implements StateStore {
  readonly description: string;
  readonly #db: SqlDriver;

  private constructor(db: SqlDriver, description: string) {
    this.#db = db;
    this.description = description;
  }

  /** Migrates the schema, then wraps `db` (closed again when migrating fails). */
  static async open(db: SqlDriver, description: string): Promise<SqlStateStore> {
    try {
      await migrate(db);
    } catch (err) {
      await db.close().catch(() => {});
      throw err;
    }
    return new SqlStateStore(db, description);
  }

  async enginesVersion(): Promise<number> {
    const rows = await this.#db.all("SELECT value FROM svc_meta WHERE name = 'engines_version'");
    return num(rows[0]?.value);
  }

  listEngines(): Promise<EngineListing> {
    return this.#db.transaction(async (tx) => {
      const version = num(
        (await tx.all("SELECT value FROM svc_meta WHERE name = 'engines_version'"))[0]?.value,
      );
      const rows = await tx.all(
        "SELECT id, version, data FROM svc_engines ORDER BY updated_at, id",
      );
      const engines: EngineRow[] = rows.map((r) => ({
        id: String(r.id),
        version: num(r.version),
        data: JSON.parse(String(r.data)),
      }));
      return { version, engines };
    });
  }

  putEngine(
    id: string,
    data: Record<string, unknown>,
    expectedVersion: number | null,
  ): Promise<number> {
    return this.#db.transaction(async (tx) => {
      const json = JSON.stringify(data);
      // One conditional statement decides: under PostgreSQL's read committed, a version read
      // first and written after lets two replicas both pass the check (a lost update, or a
      // duplicate-key error for two first registrations).
      const written = expectedVersion === null
        ? await tx.run(
          `INSERT INTO svc_engines (id, version, data, updated_at) VALUES (?, 1, ?, ?)
           ON CONFLICT (id) DO NOTHING`,
          [id, json, Date.now()],
        )
        : await tx.run(
          `UPDATE svc_engines SET version = version + 1, data = ?, updated_at = ?
           WHERE id = ? AND version = ?`,
          [json, Date.now(), id, expectedVersion],
        );
      if (written === 0) {
        const found = await tx.all("SELECT version FROM svc_engines WHERE id = ?", [id]);
        throw new ConflictError(
          found.length === 0
            ? `the engine '${id}' was removed by another gateway replica meanwhile; register it again`
            : `the engine '${id}' was ${
              expectedVersion === null ? "registered" : "changed"
            } by another gateway replica meanwhile; pick another id or retry`,
          { code: "engine_version_conflict", param: "id" },
        );
      }
      await bumpEngines(tx);
      return (expectedVersion ?? 0) + 1;
    });
  }

  deleteEngine(id: string): Promise<boolean> {
    return this.#db.transaction(async (tx) => {
      const removed = await tx.run("DELETE FROM svc_engines WHERE id = ?", [id]);
      if (removed > 0) await bumpEngines(tx);
      return removed > 0;
    });
  }

  async getResponse(id: string, owner: string): Promise<string | undefined> {
    const rows = await this.#db.all("SELECT data FROM svc_responses WHERE id = ? AND owner = ?", [
      id,
      owner,
    ]);
    return rows.length > 0 ? String(rows[0].data) : undefined;
  }

  putResponse(id: string, owner: string, json: string, caps: ResponseCaps): Promise<void> {
    const bytes = encoder.encode(json).byteLength;
    return this.#db.transaction(async (tx) => {
      // Replaced, not updated: a new seq makes it the newest. Never another owner's row (ids are
      // random: the insert would fail on the unique id rather than take it over).
      await tx.run("DELETE FROM svc_responses WHERE id = ? AND owner = ?", [id, owner]);
      await tx.run(
        "INSERT INTO svc_responses (id, owner, bytes, data, created_at) VALUES (?, ?, ?, ?, ?)",
        [id, owner, bytes, json, Date.now()],
      );
      // This owner's rows, newest first: keep them while both the count and the running byte
      // total fit the caps (another owner's rows are never counted nor evicted here).
      await tx.run(
        `DELETE FROM svc_responses WHERE id <> ? AND owner = ? AND id IN (
          SELECT id FROM (
            SELECT id, ROW_NUMBER() OVER (ORDER BY seq DESC) AS position,
                   SUM(bytes) OVER (ORDER BY seq DESC) AS running
            FROM svc_responses WHERE owner = ?) AS ranked
          WHERE position > ? OR running > ?)`,
        [id, owner, owner, caps.maxEntries, caps.maxTotalBytes],
      );
      if (caps.maxAgeMs !== undefined) {
        await tx.run("DELETE FROM svc_responses WHERE id <> ? AND created_at < ?", [
          id,
          Date.now() - caps.maxAgeMs,
        ]);
      }
    });
  }

  async deleteResponse(id: string, owner: string): Promise<boolean> {
    const removed = await this.#db.run("DELETE FROM svc_responses WHERE id = ? AND owner = ?", [
      id,
      owner,
    ]);
    return removed > 0;
  }

  async createKey(key: ApiKeyRecord): Promise<void> {
    await this.#db.run(
      `INSERT INTO svc_api_keys (id, name, scope, hash, prefix, rpm, tpm, models, created_at,
        revoked_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        key.id,
        key.name,
        key.scope,
        key.hash,
        key.prefix,
        key.rpm,
        key.tpm,
        key.models === null ? null : JSON.stringify(key.models),
        key.createdAt,
        key.revokedAt,
      ],
    );
  }

  async findKeyByHash(hash: string): Promise<ApiKeyRecord | undefined> {
    const rows = await this.#db.all("SELECT * FROM svc_api_keys WHERE hash = ?", [hash]);
    return rows.length > 0 ? keyOf(rows[0]) : undefined;
  }

  async listKeys(): Promise<ApiKeyRecord[]> {
    return (await this.#db.all("SELECT * FROM svc_api_keys ORDER BY created_at, id")).map(keyOf);
  }

  async revokeKey(id: string, at: number): Promise<boolean> {
    const changed = await this.#db.run(
      "UPDATE svc_api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL",
      [at, id],
    );
    return changed > 0;
  }

  async addUsage(row: UsageRow): Promise<void> {
    await this.#db.run(
      `INSERT INTO svc_usage_daily (key_id, model, day, requests, prompt_tokens, completion_tokens)
       VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (key_id, model, day) DO UPDATE SET
         requests = svc_usage_daily.requests + excluded.requests,
         prompt_tokens = svc_usage_daily.prompt_tokens + excluded.prompt_tokens,
         completion_tokens = svc_usage_daily.completion_tokens + excluded.completion_tokens`,
      [row.keyId, row.model, row.day, row.requests, row.promptTokens, row.completionTokens],
    );
  }

  async listUsage(filter: UsageFilter = {}): Promise<UsageRow[]> {
    const where: string[] = [];
    const params: unknown[] = [];
    if (filter.keyId !== undefined) {
      where.push("key_id = ?");
      params.push(filter.keyId);
    }
    if (filter.since !== undefined) {
      where.push("day >= ?");
      params.push(filter.since);
    }
    const rows = await this.#db.all(
      `SELECT * FROM svc_usage_daily ${
        where.length ? `WHERE ${where.join(" AND ")}` : ""
      } ORDER BY day, key_id, model`,
      params,
    );
    return rows.map((r) => ({
      keyId: String(r.key_id),
      model: String(r.model),
      day: String(r.day),
      requests: num(r.requests),
      promptTokens: num(r.prompt_tokens),
      completionTokens: num(r.completion_tokens),
    }));
  }

  close(): Promise<void> {
    return this.#db.close();
  }
}

async function bumpEngines(tx: SqlExecutor): Promise<void> {
  await tx.run("UPDATE svc_meta SET value = value + 1 WHERE name = 'engines_version'");
}

function keyOf(r: SqlRow): ApiKeyRecord {
  return {
    id: String(r.id),
    name: String(r.name),
    scope: String(r.scope) as KeyScope,
    hash: String(r.hash),
    prefix: String(r.prefix),
    rpm: r.rpm === null ? null : num(r.rpm),
    tpm: r.tpm === null ? null : num(r.tpm),
    models: r.models === null ? null : JSON.parse(String(r.models)),
    createdAt: num(r.created_at),
    revokedAt: r.revoked_at === null ? null : num(r.revoked_at),
  };
}

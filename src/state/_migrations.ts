/**
 * Versioned schema migrations of the state store: a `svc_migrations` table records each one
 * applied; each runs once, in order, in its own transaction that first takes the database's
 * write lock (SQLite `BEGIN IMMEDIATE`, PostgreSQL an advisory lock) and checks again, so two
 * replicas starting at once apply it once between them.
 *
 * Add a migration by appending to {@link MIGRATIONS}; never edit one that shipped.
 *
 * @module
 */
import { ConfigurationError } from "../core/errors.ts";
import type { SqlDriver } from "./_sql.ts";

/** One schema change, in both dialects. */
interface Migration {
  version: number;
  name: string;
  sqlite: string[];
  postgres: string[];
}

// Any constant: only our migrations take this advisory lock.
const POSTGRES_LOCK_KEY = 7_240_024;

const COMMON_V1 = [
  `CREATE TABLE svc_meta (name TEXT PRIMARY KEY, value BIGINT NOT NULL)`,
  `INSERT INTO svc_meta (name, value) VALUES ('engines_version', 0)`,
  `CREATE TABLE svc_engines (
    id TEXT PRIMARY KEY, version BIGINT NOT NULL, data TEXT NOT NULL, updated_at BIGINT NOT NULL)`,
  `CREATE TABLE svc_api_keys (
    id TEXT PRIMARY KEY, name TEXT NOT NULL, scope TEXT NOT NULL, hash TEXT NOT NULL UNIQUE,
    prefix TEXT NOT NULL, rpm BIGINT, tpm BIGINT, models TEXT, created_at BIGINT NOT NULL,
    revoked_at BIGINT)`,
  `CREATE TABLE svc_usage_daily (
    key_id TEXT NOT NULL, model TEXT NOT NULL, day TEXT NOT NULL, requests BIGINT NOT NULL,
    prompt_tokens BIGINT NOT NULL, completion_tokens BIGINT NOT NULL,
    PRIMARY KEY (key_id, model, day))`,
];

const RESPONSE_OWNERS = [
  `ALTER TABLE svc_responses ADD COLUMN owner TEXT NOT NULL DEFAULT ''`,
  `CREATE INDEX svc_responses_owner_seq ON svc_responses (owner, seq)`,
];

/** Every migration, oldest first. */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "engines, responses, api keys, usage",
    sqlite: [
      ...COMMON_V1,
      `CREATE TABLE svc_responses (
        seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, bytes BIGINT NOT NULL,
        data TEXT NOT NULL, created_at BIGINT NOT NULL)`,
    ],
    postgres: [
      ...COMMON_V1,
      `CREATE TABLE svc_responses (
        seq BIGSERIAL PRIMARY KEY, id TEXT NOT NULL UNIQUE, bytes BIGINT NOT NULL,
        data TEXT NOT NULL, created_at BIGINT NOT NULL)`,
    ],
  },
  {
    // Who stored each response (a managed key's id; '' for the static keys and callers without a
    // key): only its owner reads, continues or deletes it, and the caps hold per owner. Rows
    // stored before have no owner recorded: they become the static keys' ('').
    version: 2,
    name: "response owners",
    sqlite: RESPONSE_OWNERS,
    postgres: RESPONSE_OWNERS,
  },
];

const CREATE_TABLE = `CREATE TABLE IF NOT EXISTS svc_migrations (
  version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)`;

/**
 * Brings the schema up to date; resolves with the versions this call applied (others may have
 * been applied by another process meanwhile). A database newer than this program is refused.
 */
export async function migrate(db: SqlDriver): Promise<number[]> {
  const applied: number[] = [];
  const known = MIGRATIONS.at(-1)?.version ?? 0;
  for (const m of MIGRATIONS) {
    await db.transaction(async (tx) => {
      if (db.dialect === "postgres") {
        await tx.all(`SELECT pg_advisory_xact_lock(${POSTGRES_LOCK_KEY})`);
      }
      await tx.run(CREATE_TABLE);
      const rows = await tx.all("SELECT MAX(version) AS v FROM svc_migrations");
      const newest = Number(rows[0]?.v ?? 0);
      if (newest > known) {
        throw new ConfigurationError(
          `the state database has schema version ${newest}, newer than this svc knows (${known}); ` +
            "upgrade svc on this replica, or point --state at another database",
          { code: "state_schema_too_new" },
        );
      }
      if (newest >= m.version) return;
      for (const statement of m[db.dialect]) await tx.run(statement);
      await tx.run("INSERT INTO svc_migrations (version, name, applied_at) VALUES (?, ?, ?)", [
        m.version,
        m.name,
        Date.now(),
      ]);
      applied.push(m.version);
    });
  }
  return applied;
}

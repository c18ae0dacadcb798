/**
 * {@link SqlDriver} over Deno's built-in `node:sqlite`: one connection per process, the busy
 * timeout set before WAL (so a second process waits for the lock instead of failing with
 * "database is locked"), transactions as `BEGIN IMMEDIATE` (the write lock from the start).
 * The connection is synchronous and a transaction's work is async, so every connection of this
 * process to one file shares a queue: a second connection's `BEGIN IMMEDIATE` waiting on the
 * busy timeout would block the event loop that the first needs to commit (a deadlock).
 *
 * @module
 */
import { DatabaseSync, type SQLInputValue } from "node:sqlite";
import { dirname } from "node:path";
import { ConfigurationError } from "../core/errors.ts";
import type { SqlDriver, SqlExecutor, SqlRow } from "./_sql.ts";

/** How long a statement waits for another process's write lock before failing. */
const BUSY_TIMEOUT_MS = 10_000;

/**
 * Opens (creating) the SQLite file at `path` (`:memory:` for a private in-memory database).
 *
 * @example
 * ```ts
 * import { openSqlite } from "./sqlite_driver.ts";
 * const db = await openSqlite(":memory:");
 * await db.close();
 * ```
 */
export async function openSqlite(path: string): Promise<SqlDriver> {
  if (path !== ":memory:") {
    try {
      await Deno.mkdir(dirname(path), { recursive: true, mode: 0o700 });
    } catch (err) {
      throw openError(path, err);
    }
  }
  let db: DatabaseSync;
  try {
    db = new DatabaseSync(path);
    db.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
    db.exec("PRAGMA journal_mode = WAL");
    db.exec("PRAGMA synchronous = NORMAL");
    db.exec("PRAGMA foreign_keys = ON");
  } catch (err) {
    throw openError(path, err);
  }
  if (path !== ":memory:" && Deno.build.os !== "windows") {
    // It holds conversations and key hashes: owner only.
    await Deno.chmod(path, 0o600).catch(() => {});
  }
  return new SqliteDriver(db, path === ":memory:" ? { tail: Promise.resolve() } : queueOf(path));
}

/** The order of this process's statements on one file. */
interface Queue {
  tail: Promise<unknown>;
}

const QUEUES = new Map<string, Queue>();

function queueOf(path: string): Queue {
  let queue = QUEUES.get(path);
  if (queue === undefined) QUEUES.set(path, queue = { tail: Promise.resolve() });
  return queue;
}

function openError(path: string, err: unknown): ConfigurationError {
  const hint = err instanceof Deno.errors.NotCapable
    ? `run with --allow-read and --allow-write=${dirname(path)}`
    : "check the folder's permissions, or pass --state with another sqlite:<path>";
  return new ConfigurationError(
    `cannot open the state database ${path}: ${(err as Error).message}; ${hint}`,
    { code: "state_store_unavailable", cause: err },
  );
}

class SqliteDriver implements SqlDriver {
  readonly dialect = "sqlite" as const;
  readonly #db: DatabaseSync;
  readonly #queue: Queue;
  readonly #direct: SqlExecutor;

  constructor(db: DatabaseSync, queue: Queue) {
    this.#db = db;
    this.#queue = queue;
    this.#direct = {
      all: (sql, params = []) => Promise.resolve(this.#all(sql, params)),
      run: (sql, params = []) => Promise.resolve(this.#run(sql, params)),
    };
  }

  all(sql: string, params: readonly unknown[] = []): Promise<SqlRow[]> {
    return this.#serial(() => this.#direct.all(sql, params));
  }

  run(sql: string, params: readonly unknown[] = []): Promise<number> {
    return this.#serial(() => this.#direct.run(sql, params));
  }

  transaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    return this.#serial(async () => {
      this.#db.exec("BEGIN IMMEDIATE");
      try {
        const out = await work(this.#direct);
        this.#db.exec("COMMIT");
        return out;
      } catch (err) {
        try {
          this.#db.exec("ROLLBACK");
        } catch { /* already rolled back by SQLite */ }
        throw err;
      }
    });
  }

  close(): Promise<void> {
    return this.#serial(() => {
      if (this.#db.isOpen) this.#db.close();
      return Promise.resolve();
    });
  }

  // One statement or transaction of this process at a time: the connection is shared.
  #serial<T>(work: () => Promise<T>): Promise<T> {
    const next = this.#queue.tail.then(work, work);
    this.#queue.tail = next.catch(() => {});
    return next;
  }

  #all(sql: string, params: readonly unknown[]): SqlRow[] {
    return this.#db.prepare(sql).all(...(params as SQLInputValue[])) as SqlRow[];
  }

  #run(sql: string, params: readonly unknown[]): number {
    return Number(this.#db.prepare(sql).run(...(params as SQLInputValue[])).changes);
  }
}

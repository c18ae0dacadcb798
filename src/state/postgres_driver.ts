/**
 * {@link SqlDriver} over PostgreSQL with the npm `postgres` driver: a small pool, `?`
 * placeholders rewritten to `$n`, transactions through `sql.begin` (whose statements run on one
 * connection).
 *
 * @module
 */
import postgres from "postgres";
import { ConfigurationError } from "../core/errors.ts";
import type { SqlDriver, SqlExecutor, SqlRow } from "./_sql.ts";

type Sql = ReturnType<typeof postgres>;
type Params = Parameters<Sql["unsafe"]>[1];

/**
 * Connects to the database at `url` (`postgres://user:pass@host:port/db`) and checks it answers.
 *
 * @example
 * ```ts
 * import { openPostgres } from "./postgres_driver.ts";
 * // const db = await openPostgres("postgres://svc@127.0.0.1:5432/svc");
 * ```
 */
export async function openPostgres(url: string): Promise<SqlDriver> {
  const sql = postgres(url, { max: 4, onnotice: () => {}, connect_timeout: 10 });
  try {
    await sql.unsafe("SELECT 1");
  } catch (err) {
    await sql.end({ timeout: 1 }).catch(() => {});
    throw new ConfigurationError(
      `cannot connect to the state database ${redactUrl(url)}: ${(err as Error).message}; ` +
        "check that PostgreSQL runs there and the user, password and database exist",
      { code: "state_store_unavailable", cause: err },
    );
  }
  return new PostgresDriver(sql);
}

/** `url` with its password replaced by `***`. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    return "postgres://(unparsable URL)";
  }
}

// `?` → `$1, $2, …` (our statements have no `?` inside string literals).
function numbered(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}

function executor(sql: Sql | postgres.TransactionSql): SqlExecutor {
  return {
    all: async (text, params = []) =>
      [...await sql.unsafe(numbered(text), params as Params)] as SqlRow[],
    run: async (text, params = []) => (await sql.unsafe(numbered(text), params as Params)).count,
  };
}

class PostgresDriver implements SqlDriver {
  readonly dialect = "postgres" as const;
  readonly #sql: Sql;
  readonly #direct: SqlExecutor;

  constructor(sql: Sql) {
    this.#sql = sql;
    this.#direct = executor(sql);
  }

  all(sql: string, params?: readonly unknown[]): Promise<SqlRow[]> {
    return this.#direct.all(sql, params);
  }

  run(sql: string, params?: readonly unknown[]): Promise<number> {
    return this.#direct.run(sql, params);
  }

  async transaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    return await this.#sql.begin((tx) => work(executor(tx))) as T;
  }

  async close(): Promise<void> {
    await this.#sql.end({ timeout: 5 });
  }
}

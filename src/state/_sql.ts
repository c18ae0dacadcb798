/**
 * The little the state store needs of a SQL database: statements with `?` placeholders, rows as
 * plain objects, and transactions that hold the database's write lock from their first statement
 * (SQLite `BEGIN IMMEDIATE`, PostgreSQL an advisory lock where asked), so check-then-write code
 * inside one is safe against other processes.
 *
 * @module
 */

/** A row as the driver returns it (numbers may come back as strings or bigints: convert). */
export type SqlRow = Record<string, unknown>;

/** Runs statements; inside a transaction, on its connection. */
export interface SqlExecutor {
  /** Rows of a query. */
  all(sql: string, params?: readonly unknown[]): Promise<SqlRow[]>;
  /** Runs a statement; resolves with the number of rows it changed. */
  run(sql: string, params?: readonly unknown[]): Promise<number>;
}

/** A database connection (or pool). */
export interface SqlDriver extends SqlExecutor {
  /** `sqlite` or `postgres`: the few statements that differ pick by it. */
  readonly dialect: "sqlite" | "postgres";
  /** Runs `work` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T>;
  /** Closes the connection(s). */
  close(): Promise<void>;
}

/** A number from a column that may be a bigint or a numeric string (PostgreSQL BIGINT, SUM). */
export function num(value: unknown): number {
  return value === null || value === undefined ? 0 : Number(value);
}

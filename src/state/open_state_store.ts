/**
 * Opens the state store a URL names: `sqlite:<path>` (or a bare path; `sqlite::memory:` for a
 * private one) or `postgres://…` / `postgresql://…`.
 *
 * @module
 */
import { isAbsolute, join, resolve } from "node:path";
import { ConfigurationError } from "../core/errors.ts";
import { openPostgres, redactUrl } from "./postgres_driver.ts";
import { SqlStateStore } from "./sql_state_store.ts";
import { openSqlite } from "./sqlite_driver.ts";
import type { StateStore } from "./state_store.ts";

/** The file of the embedded store under SVC_HOME. */
export const DEFAULT_STATE_FILE = "state.db";

/** The URL of the default store of an SVC_HOME: `sqlite:<home>/state.db`. */
export function defaultStateUrl(home: string): string {
  return `sqlite:${join(home, DEFAULT_STATE_FILE)}`;
}

/**
 * Opens (and migrates) the store at `url`. A URL of another kind is a ConfigurationError naming
 * the accepted forms.
 *
 * @example
 * ```ts
 * import { openStateStore } from "@svc/cli/gateway";
 * const store = await openStateStore("sqlite::memory:");
 * await store.close();
 * ```
 */
export async function openStateStore(url: string): Promise<StateStore> {
  if (/^postgres(ql)?:\/\//i.test(url)) {
    return await SqlStateStore.open(await openPostgres(url), redactUrl(url));
  }
  const path = url.startsWith("sqlite:") ? url.slice("sqlite:".length) : url;
  if (path === "" || /^[a-z][a-z0-9+.-]*:\/\//i.test(path)) {
    throw new ConfigurationError(
      `the state store URL '${redactUrl(url)}' is not one svc knows: use sqlite:<path> ` +
        "or postgres://user:password@host:port/database",
      { code: "invalid_state_url", param: "state" },
    );
  }
  const file = path === ":memory:" ? path : isAbsolute(path) ? path : resolve(path);
  return await SqlStateStore.open(await openSqlite(file), `sqlite:${file}`);
}

/**
 * Where a module of this package lives, asked when a child process is started and never at
 * import: loaded from JSR or over HTTP, a module has a URL and no file path.
 *
 * @module
 */
import { fileURLToPath } from "node:url";

/** The file a module URL names, or undefined when it is not a `file:` URL (JSR, HTTP). */
export function localPath(url: URL | string): string | undefined {
  const u = new URL(url);
  return u.protocol === "file:" ? fileURLToPath(u) : undefined;
}

/** How `deno run` is told to run a module: its file path when local, else its URL. */
export function runnableModule(url: URL | string): string {
  return localPath(url) ?? new URL(url).href;
}

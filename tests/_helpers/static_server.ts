/**
 * Serves a folder over HTTP on a loopback port, the way a static host (or JSR's file server)
 * would: TypeScript as `application/typescript`, JSON as `application/json`, 404 otherwise.
 *
 * Under a path of its own (`/<random>/`): Deno caches remote modules by URL, and a port an earlier
 * run used is often used again, so a plain `http://127.0.0.1:<port>/` could load that run's files
 * from the cache (`--reload` did not cover modules imported dynamically: seen as old code loaded,
 * and as files never requested).
 */
import { extname, join, normalize } from "node:path";

const TYPES: Record<string, string> = {
  ".ts": "application/typescript; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".json": "application/json; charset=utf-8",
};

export interface StaticServer extends AsyncDisposable {
  /** `http://127.0.0.1:<port>/<random>/`, ending in a slash. */
  baseUrl: string;
  /** The paths served so far (below the base URL, starting with a slash), in order. */
  served: string[];
}

export function serveFolder(root: string): StaticServer {
  const served: string[] = [];
  const prefix = `/${crypto.randomUUID()}`;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const full = normalize(decodeURIComponent(new URL(req.url).pathname));
    if (full.includes("..")) return new Response("bad path", { status: 400 });
    if (!full.startsWith(`${prefix}/`)) return new Response("not found", { status: 404 });
    const path = full.slice(prefix.length);
    try {
      const body = await Deno.readFile(join(root, path));
      served.push(path);
      const type = TYPES[extname(path)] ?? "application/octet-stream";
      return new Response(body, { headers: { "content-type": type } });
    } catch {
      return new Response("not found", { status: 404 });
    }
  });
  return {
    baseUrl: `http://127.0.0.1:${server.addr.port}${prefix}/`,
    served,
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}

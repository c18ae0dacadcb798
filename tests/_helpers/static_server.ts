/**
 * Serves a folder over HTTP on a loopback port, the way a static host (or JSR's file server)
 * would: TypeScript as `application/typescript`, JSON as `application/json`, 404 otherwise.
 */
import { extname, join, normalize } from "node:path";

const TYPES: Record<string, string> = {
  ".ts": "application/typescript; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".json": "application/json; charset=utf-8",
};

export interface StaticServer extends AsyncDisposable {
  /** `http://127.0.0.1:<port>/`, ending in a slash. */
  baseUrl: string;
  /** The paths served so far, in order. */
  served: string[];
}

export function serveFolder(root: string): StaticServer {
  const served: string[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const path = normalize(decodeURIComponent(new URL(req.url).pathname));
    if (path.includes("..")) return new Response("bad path", { status: 400 });
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
    baseUrl: `http://127.0.0.1:${server.addr.port}/`,
    served,
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}

/**
 * The engine server as a library, and as a program: `deno run … server.ts [svc llm run options]`
 * serves one model like `svc llm run`.
 *
 * @example
 * ```ts
 * import { startEngineServer } from "@svc/cli/server";
 * const server = await startEngineServer({
 *   model: "demo/chat", kind: "chat", hostname: "127.0.0.1", port: 0, cacheDir: "/tmp/svc",
 * });
 * await server.ready;
 * console.log(server.baseUrl);
 * await server.stop();
 * ```
 *
 * @module
 */

export {
  type EngineServer,
  type EngineServerOptions,
  startEngineServer,
} from "./src/server/engine_server.ts";
export { createEngineApp, type EngineAppOptions } from "./src/server/engine_app.ts";
export { serveApp, type ServeAppOptions, type ServedApp } from "./src/server/serve.ts";
export {
  ERROR_TABLE,
  errorBody,
  type OpenAIErrorBody,
  toWireError,
} from "./src/protocol/error_body.ts";

if (import.meta.main) {
  const { main } = await import("./cli.ts");
  Deno.exit(await main(["llm", "run", ...Deno.args]));
}

// An engine server on a demo model (random weights) on a free loopback port, for end-to-end tests.
import { type EngineServer, startEngineServer } from "../../src/server/engine_server.ts";
import { TEST_MODEL_CACHE } from "./demo_engines.ts";

/** An engine server on a demo model, on a free port, loaded (close it with `stop()`). */
export async function demoEngineServer(
  model: "demo/chat" | "demo/embed",
  apiKey?: string,
): Promise<EngineServer> {
  const server = await startEngineServer({
    model,
    kind: model === "demo/chat" ? "chat" : "embedding",
    hostname: "127.0.0.1",
    port: 0,
    device: "cpu",
    cacheDir: TEST_MODEL_CACHE,
    apiKey,
  });
  await server.ready;
  return server;
}

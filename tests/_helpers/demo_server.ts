// An engine server on a demo model (random weights) on a free loopback port, for end-to-end tests.
import type { HttpLimits } from "../../src/http/http1/limits.ts";
import { type EngineServer, startEngineServer } from "../../src/server/engine_server.ts";
import type { AdmissionLimits } from "../../src/core/inference_types.ts";
import { DEMO_MODEL_SPECS } from "../../src/engine/generated_models/demo_models.ts";
import { TEST_MODEL_CACHE } from "./demo_engines.ts";

/**
 * An engine server on a demo model, on a free port, loaded (close it with `stop()`); with
 * `withReranker`, demo/rerank is served beside it.
 */
export async function demoEngineServer(
  model: "demo/chat" | "demo/embed" | "demo/rerank",
  apiKey?: string,
  options: {
    withReranker?: boolean;
    limits?: Partial<AdmissionLimits>;
    httpLimits?: Partial<HttpLimits>;
  } = {},
): Promise<EngineServer> {
  const server = await startEngineServer({
    model,
    kind: DEMO_MODEL_SPECS[model].kind,
    hostname: "127.0.0.1",
    port: 0,
    device: "cpu",
    cacheDir: TEST_MODEL_CACHE,
    apiKey,
    limits: options.limits,
    httpLimits: options.httpLimits,
    ...(options.withReranker ? { rerank: { model: "demo/rerank" } } : {}),
  });
  await server.ready;
  return server;
}

/** POSTs `body` as JSON to `path` on `server` over its socket: the status and the parsed answer. */
export async function postJson(
  server: EngineServer,
  path: string,
  body: unknown,
  // deno-lint-ignore no-explicit-any
): Promise<{ status: number; body: any }> {
  const res = await fetch(`${server.served.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

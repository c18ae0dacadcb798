/**
 * Starts an engine server: one model behind the OpenAI-compatible app on a port. The socket opens
 * first and answers 503 while the model loads, so supervisors see the process at once.
 *
 * @module
 */

import { ConfigurationError } from "../core/errors.ts";
import { SvcPorts } from "../config/ports.ts";
import { createEngineOrDemo, type EngineOptions } from "../engine/create_engine.ts";
import { DeferredEngine } from "../engine/deferred_engine.ts";
import type { InferenceEngine, ModelKind } from "../core/inference_types.ts";
import { createEngineApp } from "./engine_app.ts";
import type { CorsOptions } from "../http/cors.ts";
import type { HttpLimits } from "../http/http1/limits.ts";
import type { AppHandler } from "../http/http_app.ts";
import { serveApp, type ServedApp } from "../http/serve.ts";

/** Options of {@link startEngineServer}. */
export interface EngineServerOptions extends EngineOptions {
  /** Model to serve; the default model of `kind` (or its demo stand-in) when left out. */
  model?: string;
  /** What the model does. */
  kind: ModelKind;
  /** Listen address. */
  hostname: string;
  /** 0 picks a free port. */
  port: number;
  /** Bearer key clients must send (ENGINE_API_KEY / SVC_CHAT_API_KEY). */
  apiKey?: string;
  /** Which web origins may call the server from a browser (default: any). */
  cors?: CorsOptions;
  /** Connection cap and timeouts of the HTTP server (default `DEFAULT_HTTP_LIMITS`). */
  httpLimits?: Partial<HttpLimits>;
  /** Folder of the responses `/v1/responses` stores (default: kept in memory). */
  responsesDir?: string;
  /** The token of the supervisor that started this process, echoed by `/health` (engine_instance.ts). */
  instance?: string;
  /**
   * Also serve a reranker on the same port (`svc llm run --with-rerank`): this model, or when
   * left out the default reranker (its demo stand-in when that cannot be loaded).
   */
  rerank?: { model?: string };
}

/** A running engine server. */
export interface EngineServer {
  /** The engine (loading until ready). */
  engine: DeferredEngine;
  /** The reranker served beside it, when asked for. */
  reranker?: DeferredEngine<"rerank">;
  /** The listening server. */
  served: ServedApp;
  /** `http://host:port/v1`. */
  baseUrl: string;
  /**
   * Resolves with the engine when every model is loaded; rejects (and the server stops) when
   * loading one fails.
   */
  ready: Promise<InferenceEngine>;
  /** Drains requests, stops listening and frees the model. */
  stop(): Promise<void>;
}

/** Options of {@link loadEngineApp}: the engine server's, less its socket. */
export type EngineAppLoadOptions = Omit<EngineServerOptions, "hostname" | "port" | "httpLimits"> & {
  /** Largest request body in bytes. */
  maxBodyBytes?: number;
};

/** The engines of an engine server and the app in front of them, with no socket. */
export interface LoadedEngineApp {
  /** The engine (loading until ready). */
  engine: DeferredEngine;
  /** The reranker served beside it, when asked for. */
  reranker?: DeferredEngine<"rerank">;
  /** The engine server's HTTP app (503 while a model loads). */
  app: AppHandler;
  /** Resolves with the engine when every model is loaded; rejects when loading one fails. */
  ready: Promise<InferenceEngine>;
  /** Frees the models. */
  dispose(): Promise<void>;
}

/**
 * Starts loading the model (and the reranker) and builds the app that serves them: what an engine
 * server runs on its port, and what a gateway runs in its own process (an engine in the gateway).
 *
 * @example
 * ```ts
 * import { loadEngineApp } from "@svc/cli/server";
 * const loaded = loadEngineApp({ model: "demo/embed", kind: "embedding", cacheDir: ".svc/hub" });
 * await loaded.ready;
 * const res = await loaded.app(new Request("http://engine/v1/models"));
 * await loaded.dispose();
 * ```
 */
export function loadEngineApp(options: EngineAppLoadOptions): LoadedEngineApp {
  const id = options.id ?? options.model ?? "default";
  // Disposing while loading cancels it (a download stops at once, a session once it is open), so
  // Ctrl-C during a long download does not wait for it.
  const loading = new AbortController();
  const signal = options.signal
    ? AbortSignal.any([loading.signal, options.signal])
    : loading.signal;
  const engine = new DeferredEngine(
    id,
    options.kind,
    createEngineOrDemo(options.model, options.kind, { ...options, signal }),
  );
  const reranker = options.rerank && new DeferredEngine(
    options.rerank.model ?? "default-rerank",
    "rerank",
    // The reranker's own model and weights: the dtype named for the main model may not exist.
    createEngineOrDemo(options.rerank.model, "rerank", {
      ...options,
      kind: "rerank",
      id: undefined,
      dtype: undefined,
      signal,
    }),
  );
  const engines = reranker ? [engine, reranker] : [engine];
  const app = createEngineApp({
    engines,
    apiKey: options.apiKey,
    cors: options.cors,
    responsesDir: options.responsesDir,
    instance: options.instance,
    maxBodyBytes: options.maxBodyBytes,
  });
  const ready = Promise.all(engines.map((e) => e.ready)).then(() => engine.ready);
  ready.catch(() => {}); // the caller observes it
  return {
    engine,
    reranker,
    app,
    ready,
    dispose: async () => {
      loading.abort();
      await Promise.all(engines.map((e) => e.dispose()));
    },
  };
}

/** Opens the port, then loads the model (and the reranker) in the background. */
export async function startEngineServer(options: EngineServerOptions): Promise<EngineServer> {
  const { hostname, port } = options;
  if (port !== 0 && !(await SvcPorts.isAvailable(port, hostname))) {
    throw new ConfigurationError(
      `port ${port} on ${hostname} is already in use; stop what runs there or pass --port <other>`,
      { code: "port_in_use", param: "port" },
    );
  }
  const loaded = loadEngineApp({ ...options, maxBodyBytes: options.httpLimits?.maxBodyBytes });
  const served = serveApp(loaded.app, { hostname, port, limits: options.httpLimits });
  const stop = async () => {
    await served.shutdown();
    await loaded.dispose();
  };
  const ready = loaded.ready.catch(async (err) => {
    await served.shutdown();
    throw err;
  });
  const { engine, reranker } = loaded;
  return { engine, reranker, served, baseUrl: `${served.url}/v1`, ready, stop };
}

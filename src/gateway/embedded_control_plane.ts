/**
 * The control plane inside the client's process: the gateway of `src/gateway` (dispatcher,
 * scheduling, health checks, its HTTP app) with engines loaded in this process, each reached
 * through its engine app by a handler call. No socket is opened: the client calls the gateway's
 * handler with `Request` objects.
 *
 * @module
 */
import { type EnvMap, loadConfig } from "../config/env.ts";
import { OutputPaths } from "../config/output_paths.ts";
import { ConfigurationError } from "../core/errors.ts";
import { createEngineOrDemo } from "../engine/create_engine.ts";
import type { ModelKind } from "../core/inference_types.ts";
import { createGateway, type Gateway } from "./gateway.ts";
import { HandlerTransport } from "./transport.ts";
import { createEngineApp } from "../server/engine_app.ts";
import {
  EMBEDDED_BASE_URL,
  type EmbeddedControlPlane,
  type EmbeddedControlPlaneOptions,
  type StartEmbeddedControlPlane,
} from "./embedded_types.ts";
import { backendKindOf } from "../core/model_kind.ts";

export { EMBEDDED_BASE_URL };
export type { EmbeddedControlPlane, EmbeddedControlPlaneOptions };

/**
 * Loads the engines and builds the gateway around them.
 *
 * @example
 * ```ts
 * import { startEmbeddedControlPlane } from "@svc/cli/gateway";
 * const plane = await startEmbeddedControlPlane({ chatModel: "demo/chat", embeddingModel: null });
 * const res = await plane.fetch(new Request(`${plane.baseUrl}/models`));
 * await plane.close();
 * ```
 */
export async function startEmbeddedControlPlane(
  options: EmbeddedControlPlaneOptions = {},
): Promise<EmbeddedControlPlane> {
  const config = loadConfig({ env: options.env, envFile: options.envFile });
  const engineOptions = {
    cacheDir: options.cacheDir ??
      OutputPaths.resolve({ env: options.env as EnvMap | undefined, envFile: options.envFile })
        .hub,
    device: options.device ?? config.device,
    offline: config.offline,
    hubEndpoint: config.hubEndpoint,
    hubToken: config.hubToken,
  };
  const wanted: [ModelKind, string | undefined][] = [];
  const chatModel = options.chatModel === undefined ? config.chatModel : options.chatModel;
  const embeddingModel = options.embeddingModel === undefined
    ? config.embeddingModel
    : options.embeddingModel;
  if (chatModel !== null) wanted.push(["chat", chatModel]);
  if (embeddingModel !== null) wanted.push(["embedding", embeddingModel]);
  if (options.rerankModel) wanted.push(["rerank", options.rerankModel]);
  const loaded = await Promise.allSettled(
    wanted.map(([kind, model]) => createEngineOrDemo(model, kind, engineOptions)),
  );
  const engines = [...(options.engines ?? [])];
  for (const r of loaded) if (r.status === "fulfilled") engines.push(r.value);
  const failed = loaded.find((r): r is PromiseRejectedResult => r.status === "rejected");
  if (failed !== undefined) {
    await Promise.all(engines.map((e) => e.dispose().catch(() => {})));
    throw failed.reason;
  }
  if (engines.length === 0) {
    throw new ConfigurationError(
      "the embedded control plane has no model to serve: give chatModel, embeddingModel, " +
        "rerankModel or engines",
      { param: "embedded" },
    );
  }

  let gateway: Gateway;
  try {
    gateway = await createGateway({ logger: options.logger, dispatcher: options.dispatcher });
    const seen = new Map<string, number>();
    for (const engine of engines) {
      const kind = engine.info.kind;
      const n = (seen.get(kind) ?? 0) + 1;
      seen.set(kind, n);
      const id = `embedded-${kind}${n > 1 ? `-${n}` : ""}`;
      const app = createEngineApp({ engines: [engine], logger: options.logger });
      const backend = gateway.dispatcher.addBackend({
        id,
        baseUrl: `http://${id}.svc/v1`,
        kind: backendKindOf(kind),
        models: [engine.info.id],
        local: true,
        maxConcurrency: 64,
      }, { transport: new HandlerTransport(app) });
      await gateway.checker.check(backend);
    }
  } catch (err) {
    await Promise.all(engines.map((e) => e.dispose().catch(() => {})));
    throw err;
  }

  const transport = new HandlerTransport(gateway.handler);
  let closing: Promise<void> | undefined;
  return {
    baseUrl: EMBEDDED_BASE_URL,
    fetch: (request) => transport.send(request),
    gateway,
    models: {
      chat: engines.find((e) => e.info.kind === "chat")?.info.id ?? null,
      embedding: engines.find((e) => e.info.kind === "embedding")?.info.id ?? null,
      rerank: engines.find((e) => e.info.kind === "rerank")?.info.id ?? null,
    },
    close: () =>
      closing ??= (async () => {
        await gateway.close();
        await Promise.all(engines.map((e) => e.dispose().catch(() => {})));
      })(),
  };
}

// The client loads this function by a specifier it cannot type-check; this line checks it instead.
startEmbeddedControlPlane satisfies StartEmbeddedControlPlane;

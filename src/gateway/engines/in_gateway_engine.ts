/**
 * An engine that runs in the gateway's own process: its app is called by the gateway's
 * dispatcher directly (a handler transport), so a request costs no second process, socket or
 * HTTP parse. For embedding engines (and the reranker beside them) of latency-bound retrieval,
 * where that hop is a fifth to a third of the request (bench/RESULTS.md); chat engines keep their
 * own process, as decoding works the event loop that the gateway's other requests share. The
 * price: a short text runs on the gateway's thread when the model's worker is idle (that is most of
 * the gain), so another request may wait behind it; and a crash of the engine's runtime is a crash
 * of the gateway, which nothing restarts.
 *
 * @module
 */
import { join } from "node:path";
import { errorMessage } from "../../core/errors.ts";
import { getLogger, type Logger } from "../../core/logging.ts";
import type { Device } from "../../core/inference_types.ts";
import { loadConfig } from "../../config/env.ts";
import { type LoadedEngineApp, loadEngineApp } from "../../server/engine_server.ts";
import { HandlerTransport } from "../transport.ts";
import type { EngineRunner, InGatewayEngineFactory, InGatewayEngineSpec } from "./engine_runner.ts";
import type { SupervisorState } from "./engine_supervisor.ts";

/**
 * Loads an engine in this process and serves it to the gateway by handler calls. Made by the
 * engine manager for `placement: "gateway"` (through {@link createInGatewayEngine}); it has no
 * example of its own, as no public API hands one out.
 */
export class InGatewayEngine implements EngineRunner {
  readonly spec: InGatewayEngineSpec;
  readonly restarts = 0;
  #state: SupervisorState = "idle";
  #message: string | null = null;
  #loaded: LoadedEngineApp | undefined;
  #starting: Promise<void> | undefined;
  #transport: HandlerTransport | undefined;
  #onStateChange: (state: SupervisorState) => void;
  #logger: Logger;

  constructor(
    spec: InGatewayEngineSpec,
    options: { onStateChange?: (state: SupervisorState) => void; logger?: Logger } = {},
  ) {
    this.spec = spec;
    this.#onStateChange = options.onStateChange ?? (() => {});
    this.#logger = options.logger ?? getLogger("gateway");
  }

  get state(): SupervisorState {
    return this.#state;
  }
  get message(): string | null {
    return this.#message;
  }
  /** The gateway's own pid while the engine lives. */
  get pid(): number | null {
    return this.#state === "starting" || this.#state === "ready" ? Deno.pid : null;
  }
  get models(): readonly string[] {
    if (this.#state !== "ready" || this.#loaded === undefined) return [];
    const { engine, reranker } = this.#loaded;
    return [engine.info.id, ...(reranker ? [reranker.info.id] : [])];
  }
  get rerankers(): readonly string[] {
    const reranker = this.#loaded?.reranker;
    return this.#state === "ready" && reranker ? [reranker.info.id] : [];
  }
  get randomWeights(): boolean {
    if (this.#state !== "ready" || this.#loaded === undefined) return false;
    const { engine, reranker } = this.#loaded;
    return Boolean(engine.info.randomWeights || reranker?.info.randomWeights);
  }
  get dtype(): string | null {
    return this.#state === "ready" ? this.#loaded?.engine.info.dtype ?? null : null;
  }
  /** Not a network address: the host names the engine; requests never leave the process. */
  get baseUrl(): string {
    return `http://${this.spec.id}.in-gateway.svc/v1`;
  }
  get transport(): HandlerTransport | undefined {
    return this.#transport;
  }

  start(): Promise<void> {
    return this.#starting ??= this.#load();
  }

  async stop(): Promise<void> {
    if (this.#state === "stopped") return;
    if (this.#state !== "error") this.#setState("stopping");
    const loaded = this.#loaded;
    this.#loaded = undefined;
    await loaded?.dispose().catch((err) =>
      this.#logger.warn("could not free an in-gateway engine", { error: String(err) })
    );
    if (this.#state !== "error") this.#setState("stopped");
  }

  async #load(): Promise<void> {
    this.#setState("starting");
    const spec = this.spec;
    const loaded = loadEngineApp({
      model: spec.model,
      kind: spec.kind,
      ...(spec.rerank ? { rerank: spec.rerank } : {}),
      device: spec.device as Device | undefined,
      allowFallbackAdapter: spec.allowFallbackAdapter,
      dtype: spec.dtype,
      offline: spec.offline,
      hubEndpoint: spec.hubEndpoint,
      // As an engine process reads it: HUB_TOKEN from the environment or .env.
      hubToken: loadConfig().hubToken,
      cacheDir: join(spec.home, "hub"),
      limits: spec.limits,
      maxBodyBytes: spec.maxBodyBytes,
    });
    this.#loaded = loaded;
    this.#transport = new HandlerTransport(loaded.app);
    try {
      await loaded.ready;
    } catch (err) {
      this.#loaded = undefined;
      await loaded.dispose().catch(() => {});
      const why = errorMessage(err);
      this.#setState(
        "error",
        `the ${spec.kind} engine for ${spec.model ?? "the default model"} failed to start: ${why}`,
      );
      throw err;
    }
    if (this.#state === "starting") this.#setState("ready", null);
  }

  #setState(state: SupervisorState, message?: string | null): void {
    if (message !== undefined) this.#message = message;
    if (state === this.#state) return;
    this.#state = state;
    this.#onStateChange(state);
  }
}

/**
 * The factory the engine manager loads lazily (this module brings the ML runtime, which a gateway
 * without in-gateway engines never loads).
 *
 * @example
 * ```ts
 * import { createInGatewayEngine } from "./in_gateway_engine.ts";
 * const engine = createInGatewayEngine({ id: "e", kind: "embedding", model: "demo/embed", home: ".svc" });
 * // await engine.start(); … await engine.stop();
 * ```
 */
export const createInGatewayEngine: InGatewayEngineFactory = (spec, options) =>
  new InGatewayEngine(spec, options);

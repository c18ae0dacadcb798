/**
 * The engines behind the gateway, as the management API sees them: engines the gateway starts
 * (child processes run by an {@link EngineSupervisor}) and remote engines registered by URL (any
 * OpenAI-compatible server). Each becomes a backend of the {@link Dispatcher} once it can serve.
 * Both are persisted through an {@link EngineStore}: started engines stop with the gateway and
 * start again with it, remote registrations come back.
 *
 * @module
 */
import { ValidationError } from "../../core/errors.ts";
import { getLogger } from "../../core/logging.ts";
import { sleep } from "../../core/sleep.ts";
import type { Dispatcher } from "../dispatcher.ts";
import { gatewayReadiness } from "../readiness.ts";
import type {
  ClusterStatus,
  EngineManagerOptions,
  EngineView,
  RegisterEngineRequest,
  StartEngineRequest,
} from "./engine_types.ts";
import { engineView, notReady } from "./_engine_util.ts";
import { EngineRecords } from "./_engine_records.ts";
import { startEngineNow } from "./_engine_start.ts";
import { registerRemote } from "./_remote_registration.ts";
import { restoreEngines, syncRemoteEngines } from "./_engines_from_store.ts";
import { saveStopped, stopEngine } from "./_engine_stop.ts";
import type { ManagerContext } from "./_manager_context.ts";

/**
 * Starts, registers, lists and stops engines, and keeps the dispatcher's backends in step.
 *
 * @example
 * ```ts
 * import { createGateway } from "@svc/cli/gateway";
 * // A gateway's manager, present when its `management` options are given.
 * const gateway = await createGateway({ management: { home: ".svc" } });
 * const manager = gateway.manager!;
 * // const { engine } = await manager.startEngine({ model: "demo/chat" });
 * // await manager.whenReady(engine.id);
 * console.log(manager.list());
 * await gateway.close(); // stops the engines it started
 * ```
 */
export class EngineManager {
  #ctx: ManagerContext;
  #started = Date.now();
  #starting: Promise<void> = Promise.resolve();
  #unwatch?: () => void;

  /** A manager that adds the engines it starts or registers to `dispatcher`. */
  constructor(dispatcher: Dispatcher, options: EngineManagerOptions) {
    this.#ctx = {
      dispatcher,
      options,
      logger: options.logger ?? getLogger("gateway"),
      records: new EngineRecords(),
      reservedPorts: new Set(),
      closed: false,
    };
  }

  /**
   * Registers again the remote engines of the state file and starts again the started ones (on
   * their old port when it is free; not with `remoteOnly`). Bad entries are logged and skipped.
   */
  async restore(): Promise<EngineView[]> {
    const restored = await restoreEngines(this.#ctx);
    // Other gateway replicas sharing the store: their registrations and removals reach us.
    this.#unwatch ??= this.#ctx.options.store?.watch?.((engines) =>
      syncRemoteEngines(this.#ctx, engines)
    );
    return restored.map((v) => this.get(v.id));
  }

  /**
   * Starts an engine for a model, or returns a live one that serves it (`created: false`).
   * Resolves as soon as the process is spawned (state `starting`); {@link whenReady} waits.
   * Calls are handled one at a time, so two requests for one model start one engine and two
   * engines never get the same port.
   */
  startEngine(request: StartEngineRequest): Promise<{ engine: EngineView; created: boolean }> {
    if (this.#ctx.options.remoteOnly) {
      return Promise.reject(
        new ValidationError(
          "this gateway starts no engines (svc llm gateway); register a running server with " +
            "POST /v1/management/engines/register, or start engines with 'svc llm serve'",
          { code: "engines_not_started_here" },
        ),
      );
    }
    const run = this.#starting.then(() => startEngineNow(this.#ctx, request));
    this.#starting = run.then(() => {}, () => {});
    return run;
  }

  /** Registers a running OpenAI-compatible server as an engine (and persists it). */
  registerRemote(request: RegisterEngineRequest): Promise<EngineView> {
    return registerRemote(this.#ctx, request);
  }

  /** Every engine, newest last (stopped and failed ones stay listed for a while). */
  list(): EngineView[] {
    return this.#ctx.records.all().map((r) => engineView(r));
  }

  /** One engine; NotFoundError when there is none with this id. */
  get(id: string): EngineView {
    return engineView(this.#ctx.records.get(id));
  }

  /**
   * Resolves with the engine once it is ready; rejects with its error when it fails to start, or
   * with a ServiceError (`engine_not_ready`) after `timeoutMs` (default 10 minutes).
   */
  async whenReady(id: string, options: { timeoutMs?: number } = {}): Promise<EngineView> {
    const rec = this.#ctx.records.get(id);
    const timeoutMs = options.timeoutMs ?? 600_000;
    const deadline = Date.now() + timeoutMs;
    if (rec.supervisor) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(notReady(id, timeoutMs)),
          Math.max(0, deadline - Date.now()),
        );
      });
      try {
        await Promise.race([rec.supervisor.start(), timeout]);
      } finally {
        clearTimeout(timer);
      }
    }
    while (engineView(rec).state !== "ready") {
      if (Date.now() > deadline) throw notReady(id, timeoutMs);
      await sleep(50);
    }
    return engineView(rec);
  }

  /**
   * Stops an engine with drain: no new requests go to it, running ones finish (up to
   * `drainTimeoutMs`, default 30 s), then a started engine's process is stopped and a remote one
   * is forgotten (and removed from the state file). Calling it again waits for the same stop.
   */
  stop(id: string, options: { drainTimeoutMs?: number } = {}): Promise<EngineView> {
    const rec = this.#ctx.records.get(id);
    // A stop whose save failed (the store unreachable) saves again, so the store forgets it too.
    if (rec.stopped) {
      return rec.unsaved ? saveStopped(this.#ctx, rec) : Promise.resolve(engineView(rec));
    }
    rec.stopping ??= stopEngine(this.#ctx, rec, options.drainTimeoutMs ?? 30_000);
    return rec.stopping;
  }

  /** Counts, models, queues and counters of the whole gateway. */
  status(): ClusterStatus {
    const engines = { total: 0, starting: 0, ready: 0, draining: 0, stopped: 0, error: 0 };
    const views = this.list();
    for (const v of views) {
      engines.total++;
      engines[v.state]++;
    }
    const dispatcher = this.#ctx.dispatcher;
    const snap = dispatcher.snapshot();
    return {
      // As GET /health/ready, the dashboard and /metrics say.
      ready: gatewayReadiness(dispatcher, views).ready,
      policy: snap.policy,
      uptimeSeconds: Math.round((Date.now() - this.#started) / 1000),
      engines,
      models: dispatcher.models(),
      queues: snap.pools,
      requests: snap.requests,
      failed: snap.failed,
      cancelled: snap.cancelled,
      retries: snap.retries,
    };
  }

  /** Stops every started engine (with a short drain); the state file keeps them for next time. */
  async close(options: { drainTimeoutMs?: number } = {}): Promise<void> {
    this.#ctx.closed = true;
    this.#unwatch?.();
    await Promise.all(
      this.#ctx.records.all().filter((r) => r.origin === "managed").map((r) =>
        this.stop(r.id, { drainTimeoutMs: options.drainTimeoutMs ?? 10_000 }).catch(() => {})
      ),
    );
  }
}

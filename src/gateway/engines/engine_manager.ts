/**
 * The engines behind the gateway, as the management API sees them: engines the gateway starts
 * (child processes run by an {@link EngineSupervisor}) and remote engines registered by URL (any
 * OpenAI-compatible server). Each becomes a backend of the {@link Dispatcher} once it can serve.
 * Both are persisted through an {@link EngineStore}: started engines stop with the gateway and
 * start again with it, remote registrations come back.
 *
 * @module
 */
import { ConflictError, NotFoundError, ValidationError } from "../../core/errors.ts";
import { getLogger, type Logger } from "../../core/logging.ts";
import type { Dtype } from "../../engine/dtype.ts";
import { validateBackendConfig } from "../backend_config.ts";
import type { Dispatcher } from "../dispatcher.ts";
import {
  EngineIdTakenError,
  type StoredEngine,
  type StoredManagedEngine,
  type StoredRemoteEngine,
} from "./engine_store.ts";
import { EngineSupervisor, type SupervisorState } from "./engine_supervisor.ts";
import type { InGatewayEngineFactory } from "./engine_runner.ts";
import { importLazily } from "../../core/lazy_module.ts";
import {
  type ClusterStatus,
  type EngineManagerOptions,
  type EngineOrigin,
  type EnginePlacement,
  type EngineState,
  type EngineView,
  MANAGED_MAX_CONCURRENCY,
  type RegisterEngineRequest,
  type StartEngineRequest,
} from "./engine_types.ts";
import {
  choosePort,
  discoverModels,
  drained,
  type EngineRecord,
  engineView,
  guessKind,
  notReady,
  remoteConfigOf,
  remoteRecord,
} from "./_engine_util.ts";
import { backendKindOf, type EngineKind } from "../../core/model_kind.ts";
import { gatewayReadiness } from "../readiness.ts";
import { sleep } from "../../core/sleep.ts";

/** Stopped or failed engines kept in the list (the oldest go first). */
const KEEP_FINISHED = 50;
/** Ids a registration without one tries before its conflict is answered (replicas at once). */
const GENERATED_ID_TRIES = 16;

export type {
  ClusterStatus,
  EngineManagerOptions,
  EngineOrigin,
  EngineState,
  EngineView,
  RegisterEngineRequest,
  StartEngineRequest,
};

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
  #dispatcher: Dispatcher;
  #options: EngineManagerOptions;
  #logger: Logger;
  #records = new Map<string, EngineRecord>();
  #reservedPorts = new Set<number>();
  #started = Date.now();
  #seq = 0;
  #closed = false;
  #starting: Promise<void> = Promise.resolve();
  #unwatch?: () => void;

  /** A manager that adds the engines it starts or registers to `dispatcher`. */
  constructor(dispatcher: Dispatcher, options: EngineManagerOptions) {
    this.#dispatcher = dispatcher;
    this.#options = options;
    this.#logger = options.logger ?? getLogger("gateway");
  }

  /**
   * Registers again the remote engines of the state file and starts again the started ones (on
   * their old port when it is free; not with `remoteOnly`). Bad entries are logged and skipped.
   */
  async restore(): Promise<EngineView[]> {
    // A gateway that starts no engines (`svc llm gateway` on a store shared with `svc llm serve`)
    // neither starts copies of another gateway's engines nor removes their rows.
    const remoteOnly = this.#options.remoteOnly === true;
    const stored = await this.#options.store?.load({ claimStarted: !remoteOnly }) ?? [];
    const out: EngineView[] = [];
    for (const entry of stored) {
      try {
        if (entry.origin === "managed") {
          if (remoteOnly) continue;
          out.push(await this.#restart(entry));
          continue;
        }
        const backend = this.#dispatcher.addBackend(remoteConfigOf(entry));
        const rec = remoteRecord(entry, backend);
        this.#records.set(rec.id, rec);
        out.push(engineView(rec));
      } catch (err) {
        this.#logger.warn("a stored engine could not be registered again; skipped", {
          engine: entry.id,
          error: err instanceof Error ? err.message : String(err),
        });
      }
    }
    if (this.#options.checker) {
      await Promise.all(
        [...this.#records.values()].map((r) =>
          r.backend && this.#options.checker!.check(r.backend)
        ),
      );
    }
    // Skipped entries leave the file; restarted engines may have a new port.
    if (stored.length > 0) await this.#persist();
    // Other gateway replicas sharing the store: their registrations and removals reach us.
    this.#unwatch ??= this.#options.store?.watch?.((engines) => this.#syncRemote(engines));
    return out.map((v) => this.get(v.id));
  }

  // Makes the remote engines match the shared store: new ones added, changed ones replaced,
  // removed ones dropped (requests in flight on them finish). Engines started here are ours alone.
  #syncRemote(engines: StoredEngine[]): void {
    if (this.#closed) return;
    const remote = engines.filter((e): e is StoredRemoteEngine => e.origin === "remote");
    const ids = new Set(remote.map((e) => e.id));
    for (const rec of this.#live()) {
      if (rec.origin === "remote" && rec.stored && !ids.has(rec.id)) {
        this.#dispatcher.removeBackend(rec.id);
        rec.stopped = true;
        this.#logger.info?.(`engine ${rec.id} was removed by another gateway replica`);
      }
    }
    for (const entry of remote) {
      const rec = this.#records.get(entry.id);
      if (rec && !rec.stopped) {
        if (rec.origin !== "remote" || JSON.stringify(rec.stored) === JSON.stringify(entry)) {
          continue;
        }
        this.#dispatcher.removeBackend(rec.id);
        this.#records.delete(rec.id);
      }
      try {
        const backend = this.#dispatcher.addBackend(remoteConfigOf(entry));
        this.#records.set(entry.id, remoteRecord(entry, backend));
        void this.#options.checker?.check(backend);
        this.#logger.info?.(`engine ${entry.id} was registered by another gateway replica`);
      } catch (err) {
        this.#logger.warn("an engine registered by another replica could not be added; skipped", {
          engine: entry.id,
          error: err instanceof Error ? err.message : String(err),
        });
      }
    }
    this.#prune();
  }

  async #restart(entry: StoredManagedEngine): Promise<EngineView> {
    const request: StartEngineRequest = {
      id: entry.id,
      model: entry.model ?? undefined,
      kind: entry.kind,
      device: entry.device,
      dtype: entry.dtype,
      port: entry.port,
      reuse: false,
    };
    const start = () => this.#startEngine(request, { createdAt: entry.createdAt });
    try {
      return (await start()).engine;
    } catch (err) {
      if (!(err instanceof ConflictError) || err.param !== "port") throw err;
      delete request.port; // the old port is taken now: any other will do
      return (await start()).engine;
    }
  }

  /**
   * Starts an engine for a model, or returns a live one that serves it (`created: false`).
   * Resolves as soon as the process is spawned (state `starting`); {@link whenReady} waits.
   * Calls are handled one at a time, so two requests for one model start one engine and two
   * engines never get the same port.
   */
  startEngine(request: StartEngineRequest): Promise<{ engine: EngineView; created: boolean }> {
    if (this.#options.remoteOnly) {
      return Promise.reject(
        new ValidationError(
          "this gateway starts no engines (svc llm gateway); register a running server with " +
            "POST /v1/management/engines/register, or start engines with 'svc llm serve'",
          { code: "engines_not_started_here" },
        ),
      );
    }
    const run = this.#starting.then(() => this.#startEngine(request));
    this.#starting = run.then(() => {}, () => {});
    return run;
  }

  async #startEngine(
    request: StartEngineRequest,
    restoring?: { createdAt: number },
  ): Promise<{ engine: EngineView; created: boolean }> {
    this.#checkOpen();
    const kind = request.kind ?? guessKind(request.model);
    const model = request.model ?? null;
    if (request.reuse !== false) {
      const existing = this.#findServing(kind, model, request.dtype, request.placement);
      if (existing) return { engine: engineView(existing), created: false };
    }
    if (request.id !== undefined) this.#checkIdFree(request.id);
    if (request.placement === "gateway") return await this.#startInGateway(request, kind, model);
    const port = await choosePort(kind, request.port, {
      host: this.#options.hostname ?? "127.0.0.1",
      reserved: this.#reservedPorts,
      candidates: this.#options.portCandidates,
    });
    const id = request.id ?? this.#freeId(`${kind}-${port}`);
    this.#checkIdFree(id);
    const device = request.device ?? this.#options.device;
    const createdAt = restoring?.createdAt ?? Math.floor(Date.now() / 1000);
    const rec: EngineRecord = {
      id,
      origin: "managed",
      kind,
      model,
      createdAt,
      port,
      device: device ?? null,
      draining: false,
      stopped: false,
    };
    if (request.persist !== false) {
      rec.stored = {
        origin: "managed",
        id,
        kind,
        model,
        device,
        dtype: request.dtype,
        port,
        createdAt,
      };
    }
    const supervisor = new EngineSupervisor({
      model: request.model,
      kind,
      ...(request.rerank ? { rerank: request.rerank } : {}),
      hostname: this.#options.hostname ?? "127.0.0.1",
      port,
      device,
      allowFallbackAdapter: this.#options.allowFallbackAdapter,
      ...(kind === "chat" ? { prefixCacheMib: this.#options.prefixCacheMib } : {}),
      dtype: request.dtype,
      offline: this.#options.offline,
      apiKey: this.#options.engineApiKey,
      home: this.#options.home,
      hubEndpoint: this.#options.hubEndpoint,
      limits: this.#options.engineLimits,
      httpLimits: this.#options.httpLimits,
    }, {
      ...this.#options.supervisor,
      logger: this.#logger,
      onStateChange: (state) => this.#onSupervisorState(rec, state),
      onOutput: (line) => this.#options.onOutput?.(id, line),
    });
    rec.supervisor = supervisor;
    this.#records.set(id, rec);
    this.#reservedPorts.add(port);
    this.#prune();
    if (rec.stored && !restoring) {
      try {
        await this.#persist();
      } catch (err) {
        this.#records.delete(id);
        this.#reservedPorts.delete(port);
        throw err;
      }
    }
    supervisor.start().catch(() => {}); // the state and message tell the outcome
    return { engine: engineView(rec), created: true };
  }

  // An engine in this process: no port, no supervisor, not stored (see EnginePlacement).
  async #startInGateway(
    request: StartEngineRequest,
    kind: EngineKind,
    model: string | null,
  ): Promise<{ engine: EngineView; created: boolean }> {
    if (kind !== "embedding") {
      throw new ValidationError(
        `only embedding engines run in the gateway's process; a ${kind} engine needs its own ` +
          "(leave placement out)",
        { param: "placement", code: "invalid_placement" },
      );
    }
    if (request.port !== undefined) {
      throw new ValidationError(
        "an engine in the gateway's process has no port; leave port out or placement as process",
        { param: "port", code: "invalid_placement" },
      );
    }
    const id = request.id ?? this.#freeId(`${kind}-in-gateway`);
    this.#checkIdFree(id);
    const device = request.device ?? this.#options.device;
    const rec: EngineRecord = {
      id,
      origin: "managed",
      placement: "gateway",
      kind,
      model,
      createdAt: Math.floor(Date.now() / 1000),
      port: null,
      device: device ?? null,
      draining: false,
      stopped: false,
    };
    const { createInGatewayEngine } = await importLazily<
      { createInGatewayEngine: InGatewayEngineFactory }
    >(new URL("./in_gateway_engine.ts", import.meta.url));
    rec.supervisor = createInGatewayEngine({
      id,
      kind,
      model: request.model,
      ...(request.rerank ? { rerank: request.rerank } : {}),
      device,
      allowFallbackAdapter: this.#options.allowFallbackAdapter,
      dtype: request.dtype,
      offline: this.#options.offline,
      home: this.#options.home,
      hubEndpoint: this.#options.hubEndpoint,
      limits: this.#options.engineLimits,
      maxBodyBytes: this.#options.httpLimits?.maxBodyBytes,
    }, { logger: this.#logger, onStateChange: (state) => this.#onSupervisorState(rec, state) });
    this.#records.set(id, rec);
    this.#prune();
    rec.supervisor.start().catch(() => {}); // the state and message tell the outcome
    return { engine: engineView(rec), created: true };
  }

  /** Registers a running OpenAI-compatible server as an engine (and persists it). */
  async registerRemote(request: RegisterEngineRequest): Promise<EngineView> {
    this.#checkOpen();
    const kind = backendKindOf(request.kind);
    // An id the user gave none for is made up here; a taken one is then ours to replace.
    const generated = request.id == null;
    const taken = new Set<string>();
    let id = request.id ?? this.#remoteId(request.kind, taken);
    // Validates the URL and every number before anything goes over the network.
    const probe = validateBackendConfig({
      id,
      baseUrl: request.baseUrl,
      kind,
      models: request.models ?? ["placeholder"],
      apiKey: request.apiKey ?? null,
      weight: request.weight,
      maxConcurrency: request.maxConcurrency,
      cost: request.cost,
      timeoutMs: request.timeoutMs,
    });
    const checkFree = () => {
      this.#checkIdFree(id);
      for (const r of this.#live()) {
        if (r.backend?.config.baseUrl === probe.baseUrl && r.backend.kind === kind) {
          throw new ConflictError(
            `the engine '${r.id}' is already registered at ${probe.baseUrl}; stop it first or ` +
              "use it",
            { param: "base_url" },
          );
        }
      }
      // A backend of the gateway's configuration (`--backend`, SVC_BACKENDS) at that URL.
      for (const b of this.#dispatcher.backends()) {
        if (b.config.baseUrl === probe.baseUrl && b.kind === kind) {
          throw new ConflictError(
            `the backend '${b.id}' of the gateway's configuration (--backend or SVC_BACKENDS) ` +
              `already serves ${probe.baseUrl}; it needs no registration`,
            { param: "base_url" },
          );
        }
      }
    };
    checkFree();
    const listed = request.models === undefined
      ? await discoverModels(probe.baseUrl, request.apiKey)
      : undefined;
    const models = request.models ?? listed!.ids;
    // Another replica's registration may have come in meanwhile under the id we made up.
    if (generated) id = this.#remoteId(request.kind, taken);
    checkFree(); // again: another registration may have finished while we asked for models
    const base: Omit<StoredRemoteEngine, "id"> = {
      origin: "remote",
      kind,
      baseUrl: probe.baseUrl,
      models,
      aliases: request.aliases,
      apiKey: request.apiKey ?? null,
      weight: request.weight,
      maxConcurrency: request.maxConcurrency,
      cost: request.cost,
      timeoutMs: request.timeoutMs,
      createdAt: Math.floor(Date.now() / 1000),
      ...(request.rerank
        ? { rerankers: models }
        : listed?.facts.rerankers.length
        ? { rerankers: [...listed.facts.rerankers] }
        : {}),
      ...(listed?.facts.randomWeights.length
        ? { randomWeights: [...listed.facts.randomWeights] }
        : {}),
    };
    for (let tries = 1;; tries++) {
      const entry: StoredRemoteEngine = { id, ...base };
      const backend = this.#dispatcher.addBackend(remoteConfigOf(entry));
      const rec = remoteRecord(entry, backend);
      this.#records.set(id, rec);
      this.#seq++;
      try {
        await this.#persist();
      } catch (err) {
        this.#dispatcher.removeBackend(id);
        this.#records.delete(id);
        // A made-up id may be taken in a store shared with a replica that registered at the same
        // moment (not seen here yet): the next one will do. A given id stays the user's to change.
        const retry = generated && tries < GENERATED_ID_TRIES &&
          err instanceof EngineIdTakenError && err.id === id;
        if (!retry) throw err;
        taken.add(id);
        id = this.#remoteId(request.kind, taken);
        continue;
      }
      await this.#options.checker?.check(backend);
      return engineView(rec);
    }
  }

  /** Every engine, newest last (stopped and failed ones stay listed for a while). */
  list(): EngineView[] {
    return [...this.#records.values()].map((r) => engineView(r));
  }

  /** One engine; NotFoundError when there is none with this id. */
  get(id: string): EngineView {
    return engineView(this.#record(id));
  }

  /**
   * Resolves with the engine once it is ready; rejects with its error when it fails to start, or
   * with a ServiceError (`engine_not_ready`) after `timeoutMs` (default 10 minutes).
   */
  async whenReady(id: string, options: { timeoutMs?: number } = {}): Promise<EngineView> {
    const rec = this.#record(id);
    const deadline = Date.now() + (options.timeoutMs ?? 600_000);
    if (rec.supervisor) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(notReady(id, options.timeoutMs ?? 600_000)),
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
      if (Date.now() > deadline) {
        throw notReady(id, options.timeoutMs ?? 600_000);
      }
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
    const rec = this.#record(id);
    // A stop whose save failed (the store unreachable) saves again, so the store forgets it too.
    if (rec.stopped) return rec.unsaved ? this.#saveStopped(rec) : Promise.resolve(engineView(rec));
    rec.stopping ??= this.#stop(rec, options.drainTimeoutMs ?? 30_000);
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
    const snap = this.#dispatcher.snapshot();
    return {
      // As GET /health/ready, the dashboard and /metrics say.
      ready: gatewayReadiness(this.#dispatcher, views).ready,
      policy: snap.policy,
      uptimeSeconds: Math.round((Date.now() - this.#started) / 1000),
      engines,
      models: this.#dispatcher.models(),
      queues: snap.pools,
      requests: snap.requests,
      failed: snap.failed,
      cancelled: snap.cancelled,
      retries: snap.retries,
    };
  }

  /** Stops every started engine (with a short drain); the state file keeps them for next time. */
  async close(options: { drainTimeoutMs?: number } = {}): Promise<void> {
    this.#closed = true;
    this.#unwatch?.();
    await Promise.all(
      [...this.#records.values()].filter((r) => r.origin === "managed").map((r) =>
        this.stop(r.id, { drainTimeoutMs: options.drainTimeoutMs ?? 10_000 }).catch(() => {})
      ),
    );
  }

  async #stop(rec: EngineRecord, drainTimeoutMs: number): Promise<EngineView> {
    rec.draining = true;
    const backend = rec.backend;
    if (backend !== undefined) {
      this.#dispatcher.removeBackend(rec.id);
      await drained(backend, drainTimeoutMs);
    }
    if (rec.supervisor) await rec.supervisor.stop();
    rec.stopped = true;
    rec.draining = false;
    if (rec.port !== null) this.#reservedPorts.delete(rec.port);
    // Stopped by request: forgotten. Stopped with the gateway: it comes back with it.
    if (rec.stored && !this.#closed) return await this.#saveStopped(rec);
    return engineView(rec);
  }

  /** Saves the store without `rec`, stopped by request. */
  async #saveStopped(rec: EngineRecord): Promise<EngineView> {
    rec.unsaved = true;
    await this.#persist();
    rec.unsaved = false;
    return engineView(rec);
  }

  #onSupervisorState(rec: EngineRecord, state: SupervisorState): void {
    const sup = rec.supervisor!;
    if (state === "ready") {
      if (rec.backend === undefined) {
        const served = [...sup.models];
        const aliases: Record<string, string> = {};
        if (rec.model !== null && !served.includes(rec.model) && served.length > 0) {
          aliases[rec.model] = served[0];
        }
        try {
          rec.backend = this.#dispatcher.addBackend({
            id: rec.id,
            baseUrl: sup.baseUrl,
            kind: backendKindOf(rec.kind),
            models: served.length > 0 ? served : [rec.model ?? rec.id],
            aliases,
            apiKey: sup.transport ? null : this.#options.engineApiKey ?? null,
            maxConcurrency: this.#options.managedMaxConcurrency ??
              MANAGED_MAX_CONCURRENCY[rec.kind],
            local: true,
          }, { transport: sup.transport });
        } catch (err) {
          this.#logger.error("could not add a started engine to the gateway", {
            engine: rec.id,
            error: err instanceof Error ? err.message : String(err),
          });
          return;
        }
      }
      // A restarted process owes nothing to the one that crashed: the supervisor has just seen it
      // ready, so its circuit starts closed and late probe answers about the old one are ignored.
      rec.backend.restarted();
      this.#logger.info?.(`engine ${rec.id} is ready`, { models: sup.models, pid: sup.pid });
      this.#options.onReady?.(engineView(rec));
    } else if (state === "restarting" && rec.backend) {
      rec.backend.setHealth("unhealthy", sup.message ?? "restarting");
    } else if (state === "error") {
      if (rec.backend && !rec.draining) this.#dispatcher.removeBackend(rec.id);
      // One that cannot start or gave up restarting is not tried again at the next start.
      if (rec.stored && !this.#closed) {
        rec.stored = undefined;
        this.#persist().catch((err) =>
          this.#logger.warn("could not update the engine state file", { error: String(err) })
        );
      }
    }
    if ((state === "error" || state === "stopped") && rec.port !== null && !rec.draining) {
      this.#reservedPorts.delete(rec.port);
    }
  }

  #findServing(
    kind: EngineKind,
    model: string | null,
    dtype?: Dtype,
    placement: EnginePlacement = "process",
  ): EngineRecord | undefined {
    return this.#live().find((r) => {
      if (r.kind !== kind || r.draining) return false;
      // An engine in the gateway serves only requests for one there, and the other way round.
      if ((r.placement === "gateway") !== (placement === "gateway")) return false;
      const view = engineView(r);
      const state = view.state;
      if (state !== "starting" && state !== "ready") return false;
      // A named dtype is only served by an engine that loads (or was asked for) that dtype.
      if (dtype !== undefined && view.dtype !== null && view.dtype !== dtype) return false;
      if (model === null) return r.origin === "managed" && r.model === null;
      return r.model === model || r.backend?.upstreamModel(model) !== undefined ||
        (r.supervisor?.models.includes(model) ?? false);
    });
  }

  #checkIdFree(id: string): void {
    if (!/^[A-Za-z0-9._:-]{1,64}$/.test(id)) {
      throw new ValidationError(
        "'id' must be 1-64 characters of letters, digits, '.', '_', ':' or '-'",
        { param: "id" },
      );
    }
    const existing = this.#records.get(id);
    if (existing !== undefined && !existing.stopped && engineView(existing).state !== "error") {
      throw new ConflictError(
        `an engine with id '${id}' already exists (${engineView(existing).state}); ` +
          "pick another id or stop it first",
        { param: "id" },
      );
    }
    if (existing !== undefined) this.#records.delete(id);
  }

  // `remote-<kind>-<n>` for the first n from the registrations so far on that no live engine here
  // has, nor the shared store was found to have (`taken`).
  #remoteId(kind: string, taken: ReadonlySet<string>): string {
    for (let n = this.#seq + 1;; n++) {
      const id = `remote-${kind}-${n}`;
      const rec = this.#records.get(id);
      if (!taken.has(id) && (rec === undefined || rec.stopped)) return id;
    }
  }

  #freeId(base: string): string {
    let id = base;
    for (let n = 2; this.#records.has(id) && !this.#records.get(id)!.stopped; n++) {
      id = `${base}-${n}`;
    }
    return id;
  }

  #record(id: string): EngineRecord {
    const rec = this.#records.get(id);
    if (rec === undefined) {
      throw new NotFoundError(
        `no engine has the id '${id.slice(0, 100)}'; GET /v1/management/engines lists them`,
        { code: "engine_not_found", param: "id" },
      );
    }
    return rec;
  }

  #live(): EngineRecord[] {
    return [...this.#records.values()].filter((r) => !r.stopped);
  }

  #prune(): void {
    const finished = [...this.#records.values()].filter((r) => r.stopped);
    for (const r of finished.slice(0, Math.max(0, finished.length - KEEP_FINISHED))) {
      this.#records.delete(r.id);
    }
  }

  #checkOpen(): void {
    if (this.#closed) {
      throw new ConflictError("the gateway is shutting down; it takes no new engines");
    }
  }

  async #persist(): Promise<void> {
    const store = this.#options.store;
    if (store === undefined) return;
    await store.save(
      [...this.#records.values()].filter((r) => !r.stopped && r.stored).map((r) => r.stored!),
    );
  }
}

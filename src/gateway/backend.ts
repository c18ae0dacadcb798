/**
 * One backend instance as the gateway tracks it: its config and transport, how much work it has
 * (in flight against `maxConcurrency`), how fast it answers (an exponentially weighted moving
 * average), counters, its circuit breaker and its health from the health checker.
 *
 * @module
 */
import type { BackendKind, ResolvedBackendConfig } from "./backend_config.ts";
import { CircuitBreaker, type CircuitBreakerOptions } from "./circuit_breaker.ts";
import { type BackendTransport, RemoteTransport } from "./transport.ts";
import { type ProbeResult, probeResultOf, unansweredProbe } from "./_probe_result.ts";
import { KnownModelFacts, type ModelFacts } from "./_model_facts.ts";
import type {
  BackendChange,
  BackendSnapshot,
  HealthState,
  RequestOutcome,
} from "./backend_types.ts";

export type { ProbeFailure, ProbeResult } from "./_probe_result.ts";
export { MAX_FACT_TRIES, type ModelFacts, modelFactsOf } from "./_model_facts.ts";
export type {
  BackendChange,
  BackendSnapshot,
  HealthState,
  RequestOutcome,
} from "./backend_types.ts";

/** Options of {@link Backend}. */
export interface BackendOptions {
  /** Default: a {@link RemoteTransport} (fetch to `baseUrl`). */
  transport?: BackendTransport;
  circuit?: CircuitBreakerOptions;
  /** Weight of the newest latency sample in the moving average, 0-1 (default 0.3). */
  ewmaAlpha?: number;
  /** Clock in ms (default `performance.now`). */
  now?: () => number;
}

/**
 * A backend instance with its live state.
 *
 * @example
 * ```ts
 * import { Dispatcher } from "@svc/cli/gateway";
 * // The dispatcher makes one for each backend it is given.
 * const backend = new Dispatcher().addBackend({
 *   id: "a", baseUrl: "http://127.0.0.1:8001/v1", kind: "llm", models: ["demo/chat"],
 * });
 * backend.tryAcquire(); // true: a slot is taken
 * backend.release("success", 12);
 * backend.latencyMs; // 12
 * ```
 */
export class Backend {
  /** Its validated configuration. */
  readonly config: ResolvedBackendConfig;
  /** How requests reach it. */
  readonly transport: BackendTransport;
  /** Its circuit breaker. */
  readonly circuit: CircuitBreaker;
  /** When it was added, in seconds since the epoch (`created` of its models in `/v1/models`). */
  readonly createdAt: number = Math.floor(Date.now() / 1000);
  #alpha: number;
  #now: () => number;
  #inFlight = 0;
  #health: HealthState = "unknown";
  #healthMessage: string | null = null;
  #failedProbes = 0;
  #passedProbes = 0;
  #draining = false;
  #ewma: number | null = null;
  #samples = 0;
  #sampleSum = 0;
  #lastSampleAt = -Infinity;
  #requests = 0;
  #successes = 0;
  #errors = 0;
  #retries = 0;
  #useModelsForHealth = false;
  #generation = 0;
  #listeners = new Set<(change: BackendChange) => void>();
  #baseHeaders: Record<string, string>;
  #jsonHeaders: Record<string, string>;
  readonly #facts = new KnownModelFacts();

  /** A backend from a validated configuration. */
  constructor(config: ResolvedBackendConfig, options: BackendOptions = {}) {
    this.config = config;
    this.#baseHeaders = baseHeaders(config);
    this.#jsonHeaders = { ...this.#baseHeaders, "content-type": "application/json" };
    this.transport = options.transport ?? new RemoteTransport();
    this.#now = options.now ?? (() => performance.now());
    this.#alpha = Math.min(1, Math.max(0.01, options.ewmaAlpha ?? 0.3));
    const onStateChange = options.circuit?.onStateChange;
    this.circuit = new CircuitBreaker({
      now: this.#now,
      ...options.circuit,
      onStateChange: (state, previous) => {
        onStateChange?.(state, previous);
        this.#notify("state");
      },
    });
  }

  /** Backend id. */
  get id(): string {
    return this.config.id;
  }
  /** What it serves. */
  get kind(): BackendKind {
    return this.config.kind;
  }
  /** Requests in flight. */
  get inFlight(): number {
    return this.#inFlight;
  }
  /** Share of `maxConcurrency` in use, 0-1. */
  get load(): number {
    return this.#inFlight / this.config.maxConcurrency;
  }
  /** Whether it can take one more request now. */
  get hasCapacity(): boolean {
    return this.#inFlight < this.config.maxConcurrency;
  }
  /** Health state. */
  get health(): HealthState {
    return this.#health;
  }
  /** Whether it takes no new requests. */
  get draining(): boolean {
    return this.#draining;
  }
  /** Moving-average latency in ms, undefined before the first sample. */
  get latencyMs(): number | undefined {
    return this.#ewma ?? undefined;
  }
  /** Number of latency samples. */
  get latencySamples(): number {
    return this.#samples;
  }
  /** Clock time of the newest latency sample (-Infinity when none). */
  get lastSampleAt(): number {
    return this.#lastSampleAt;
  }

  /**
   * What the backend's `/v1/models` says of its models beyond their ids (Svc's extensions): which
   * rerank, which have random weights. The facts given when it was discovered or registered (set
   * here), together with those its own listing gave once it was reachable
   * ({@link Backend.learnModelFacts}, which the health checker calls once).
   */
  get modelFacts(): ModelFacts {
    return this.#facts.facts;
  }
  set modelFacts(facts: ModelFacts) {
    this.#facts.give(facts);
  }

  /** Whether its own `/v1/models` was read (again false after {@link Backend.restarted}). */
  get knowsModelFacts(): boolean {
    return this.#facts.learnt;
  }

  /**
   * Reads the backend's own `/v1/models` once, for its {@link modelFacts}. Any HTTP answer settles
   * it (a server without the listing has no facts to tell); a request that did not get one (not
   * reachable, aborted) leaves it for the next call, up to {@link MAX_FACT_TRIES} tries. Resolves
   * whether it settled.
   */
  learnModelFacts(signal: AbortSignal): Promise<boolean> {
    const generation = this.#generation;
    const list = () => this.send(this.url("/models"), { method: "GET", signal });
    return this.#facts.learn(list, signal, () => generation === this.#generation);
  }

  /** The model name to send upstream for `model` (itself or an alias's target), or undefined. */
  upstreamModel(model: string): string | undefined {
    if (this.config.models.includes(model)) return model;
    return this.config.aliases[model];
  }

  /** May get new work: not draining, not known unhealthy, circuit letting requests through. */
  isEligible(): boolean {
    return !this.#draining && this.#health !== "unhealthy" && this.circuit.isAvailable();
  }

  /** Takes a slot if eligible and below `maxConcurrency` (reserving the half-open probe). */
  tryAcquire(): boolean {
    if (!this.hasCapacity || this.#draining || this.#health === "unhealthy") return false;
    if (!this.circuit.tryAcquire()) return false;
    this.#inFlight++;
    this.#requests++;
    return true;
  }

  /** Gives a slot back with the outcome, and the latency in ms when the backend answered. */
  release(outcome: RequestOutcome, latencyMs?: number): void {
    this.#inFlight = Math.max(0, this.#inFlight - 1);
    if (outcome === "success") {
      this.#successes++;
      this.circuit.recordSuccess();
    } else if (outcome === "failure") {
      this.#errors++;
      this.circuit.recordFailure();
    } else if (outcome === "overloaded") {
      this.#errors++;
      this.circuit.recordNeutral();
    } else {
      this.circuit.recordNeutral();
    }
    if (latencyMs !== undefined && outcome === "success") this.recordLatency(latencyMs);
    this.#notify("capacity");
  }

  /** Adds a latency sample (ms) to the moving average. */
  recordLatency(ms: number): void {
    const sample = Math.max(0, ms);
    this.#ewma = this.#ewma === null
      ? sample
      : this.#alpha * sample + (1 - this.#alpha) * this.#ewma;
    this.#samples++;
    this.#sampleSum += sample;
    this.#lastSampleAt = this.#now();
  }

  /** Counts a retry sent to this backend after another attempt failed. */
  countRetry(): void {
    this.#retries++;
  }

  /** Sets the health seen by the checker (and tells listeners, so queued work can move). */
  setHealth(state: HealthState, message?: string): void {
    const changed = state !== this.#health;
    this.#health = state;
    this.#healthMessage = message ?? null;
    // Marked down by anyone (a restarting engine too): coming back takes passes seen since.
    if (changed && state === "unhealthy") this.#passedProbes = 0;
    if (changed) this.#notify("state");
  }

  /** Health probes failed in a row (0 once one passes): the checker's thresholds count them. */
  get failedProbes(): number {
    return this.#failedProbes;
  }
  /** Health probes passed in a row since it last failed one or was marked unhealthy. */
  get passedProbes(): number {
    return this.#passedProbes;
  }

  /** Counts one health probe's outcome: its streak grows, the other one starts over. */
  countProbe(ok: boolean): void {
    if (ok) {
      this.#passedProbes++;
      this.#failedProbes = 0;
    } else {
      this.#failedProbes++;
      this.#passedProbes = 0;
    }
  }

  /** How many times the process behind it was replaced ({@link Backend.restarted}). */
  get generation(): number {
    return this.#generation;
  }

  /**
   * The process behind this backend was replaced by one just seen ready (a supervised engine
   * restarted): the old one's failures and health are forgotten, and health probes sent before
   * this (to the old process, answered late) no longer count — see `HealthChecker.check`.
   */
  restarted(): void {
    this.#generation++;
    this.#facts.forget(); // the new process lists its models again
    this.#failedProbes = 0;
    this.#passedProbes = 0;
    this.circuit.reset();
    this.setHealth("healthy");
  }

  /** A draining backend finishes its work but gets no new requests. */
  setDraining(draining: boolean): void {
    this.#draining = draining;
    this.#notify("state");
  }

  /** Calls `listener` whenever capacity, health or circuit state changes; returns the unsubscribe. */
  subscribe(listener: (change: BackendChange) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** `${baseUrl}${path}` (path like `/chat/completions`). */
  url(path: string): string {
    return `${this.config.baseUrl}${path}`;
  }

  /** A path next to `/v1` rather than under it (e.g. `/health`). */
  rootUrl(path: string): string {
    return `${this.config.baseUrl.slice(0, -"/v1".length)}${path}`;
  }

  /**
   * Sends a request with the backend's key and headers. `body` is sent as JSON when given.
   * Does not take a slot: callers do that with {@link Backend.tryAcquire}.
   */
  send(
    url: string,
    init: {
      method: "GET" | "POST";
      body?: string;
      signal: AbortSignal;
      requestId?: string;
      via?: string;
    },
  ): Promise<Response> {
    const headers = init.body !== undefined ? { ...this.#jsonHeaders } : { ...this.#baseHeaders };
    if (init.requestId !== undefined) headers["x-request-id"] = init.requestId;
    if (init.via !== undefined) headers.via = init.via;
    const request = { method: init.method, headers, body: init.body, signal: init.signal };
    return this.transport.sendInit
      ? this.transport.sendInit(url, request)
      : this.transport.send(new Request(url, request));
  }

  /**
   * One health probe: `GET /health`; a server without it (404/405, as most OpenAI-compatible
   * servers) is probed with `GET /v1/models` from then on. 2xx is healthy. A passing `/v1/models`
   * probe also gives the {@link modelFacts} when they are not known yet (no second request).
   */
  async probe(signal: AbortSignal): Promise<ProbeResult> {
    try {
      if (!this.#useModelsForHealth) {
        const res = await this.send(this.rootUrl("/health"), { method: "GET", signal });
        await res.body?.cancel();
        if (res.status !== 404 && res.status !== 405) return probeResultOf(res.status);
        this.#useModelsForHealth = true;
      }
      const generation = this.#generation;
      const res = await this.send(this.url("/models"), { method: "GET", signal });
      if (res.ok && !this.#facts.learnt) {
        await this.#facts.learnFrom(res, signal, () => generation === this.#generation);
      } else await res.body?.cancel();
      return probeResultOf(res.status);
    } catch (err) {
      return unansweredProbe(err, signal);
    }
  }

  /** Counters and state as plain data. */
  snapshot(): BackendSnapshot {
    const c = this.config;
    return {
      id: c.id,
      kind: c.kind,
      baseUrl: c.baseUrl,
      transport: this.transport.kind,
      models: [...c.models, ...Object.keys(c.aliases)],
      local: c.local,
      cost: c.cost,
      weight: c.weight,
      maxConcurrency: c.maxConcurrency,
      health: this.#health,
      healthMessage: this.#healthMessage,
      failedProbes: this.#failedProbes,
      draining: this.#draining,
      circuit: this.circuit.state,
      circuitOpens: this.circuit.opens,
      inFlight: this.#inFlight,
      requests: this.#requests,
      successes: this.#successes,
      errors: this.#errors,
      retries: this.#retries,
      latencyMs: this.#ewma,
      latencySamples: this.#samples,
      latencySumMs: this.#sampleSum,
    };
  }

  /** A plain view (no key). */
  toJSON(): BackendSnapshot {
    return this.snapshot();
  }

  #notify(change: BackendChange): void {
    for (const listener of [...this.#listeners]) listener(change);
  }
}

// What every request to the backend carries, built once: names lower-cased, so the per-request
// headers replace a configured one instead of being sent next to it.
function baseHeaders(config: ResolvedBackendConfig): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(config.headers)) headers[name.toLowerCase()] = value;
  headers.accept = "application/json, text/event-stream";
  if (config.apiKey !== null) headers.authorization = `Bearer ${config.apiKey.reveal()}`;
  return headers;
}

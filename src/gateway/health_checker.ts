/**
 * Periodic health probes of the backend instances (`GET /health`, or `GET /v1/models` for
 * OpenAI-compatible servers without it), each under a timeout. Probes set the instance's health
 * and feed its circuit breaker: a failed probe counts as a failure; a passing probe closes a
 * circuit whose cool-down is over (it is the half-open probe). The first time an instance
 * answers healthy, its own `/v1/models` is read once (no more per round) for what it says of its
 * models beyond their ids: which rerank, which have random weights (`Backend.modelFacts`).
 *
 * One late probe does not take a healthy instance out: a timeout (a busy machine), a connection
 * error or a busy answer must happen `failureThreshold` times in a row, as HAProxy's `fall`,
 * Envoy's `unhealthy_threshold` and Kubernetes' `failureThreshold`. A refused connection (nothing
 * listens) or another answer that is not 2xx (the backend itself says it cannot serve, e.g. 503
 * while loading) marks it unhealthy at once, as Envoy does for such answers; so does a failed first
 * probe (never seen healthy, it gets no traffic on a guess). `successThreshold` passes in a row
 * bring an unhealthy one back. Requests that fail are the circuit breaker's to count, not this.
 *
 * Gateway replicas sharing a coordinator share the periodic rounds: each round, one replica
 * claims a backend, probes it and publishes the result, and the others apply that result instead
 * of probing (so a backend gets one probe per round, not one per replica). A shared result is
 * counted once by each replica, however often it reads it before the next one is published.
 *
 * @module
 */
import type { Backend, HealthState, ProbeResult } from "./backend.ts";
import type { Coordinator } from "../coord/coordinator.ts";

const STOPPED = Symbol("health checker stopped");

/** Defaults of {@link HealthCheckerOptions}. */
export const HEALTH_DEFAULTS = {
  intervalMs: 5000,
  timeoutMs: 2000,
  failureThreshold: 3,
  successThreshold: 1,
} as const;

// A probe's result as a replica shares it; `id` tells a new result from one already counted.
type Published = ProbeResult & { id?: string };

// Answers that say "busy" or "timed out" (408, 429, a proxy's 504): counted like a timeout.
const BUSY_STATUSES: ReadonlySet<number> = new Set([408, 429, 504]);

/** Options of {@link HealthChecker}. */
export interface HealthCheckerOptions {
  /** Time between the end of one round of probes and the start of the next, in ms (default 5000). */
  intervalMs?: number;
  /** Longest wait for one probe, in ms (default 2000). */
  timeoutMs?: number;
  /**
   * Failed probes in a row that mark a healthy instance unhealthy (default 3), for timeouts,
   * connection errors and busy answers (408, 429, 504). A refused connection, any other answer that
   * is not 2xx, or a failed first probe marks it unhealthy at once.
   */
  failureThreshold?: number;
  /** Passing probes in a row that mark an unhealthy instance healthy again (default 1). */
  successThreshold?: number;
  /** Called when an instance's health changes. */
  onChange?: (backend: Backend, state: HealthState, result: ProbeResult) => void;
  /** Shared with other gateway replicas: periodic probes are shared out (see the module). */
  coordinator?: Coordinator;
}

/**
 * Probes every instance the source gives, every `intervalMs`, until stopped.
 *
 * @example
 * ```ts
 * import { createGateway } from "@svc/cli/gateway";
 * // A gateway's checker, set by its `health` options; it probes the dispatcher's backends.
 * const gateway = await createGateway({ health: { intervalMs: 5000 } });
 * await gateway.checker.checkAll(); // one round now, besides the periodic ones
 * await gateway.close(); // stops it
 * ```
 */
export class HealthChecker {
  /** Time between probes in ms. */
  readonly intervalMs: number;
  /** Longest wait for one probe in ms. */
  readonly timeoutMs: number;
  /** Failed probes in a row (timeouts, connection errors) that mark an instance unhealthy. */
  readonly failureThreshold: number;
  /** Passing probes in a row that mark an unhealthy instance healthy. */
  readonly successThreshold: number;
  #source: () => Iterable<Backend>;
  #onChange?: HealthCheckerOptions["onChange"];
  #timer: ReturnType<typeof setTimeout> | undefined;
  #running = false;
  #round: Promise<void> | null = null;
  #aborts = new Set<AbortController>();
  #coordinator?: Coordinator;
  /** Per backend, the id of the shared result last counted here (see `#roundCheck`). */
  #counted = new WeakMap<Backend, string>();

  /** Probes the backends `source` gives. */
  constructor(source: () => Iterable<Backend>, options: HealthCheckerOptions = {}) {
    this.#source = source;
    this.intervalMs = Math.max(10, options.intervalMs ?? HEALTH_DEFAULTS.intervalMs);
    this.timeoutMs = Math.max(1, options.timeoutMs ?? HEALTH_DEFAULTS.timeoutMs);
    this.failureThreshold = threshold(options.failureThreshold, HEALTH_DEFAULTS.failureThreshold);
    this.successThreshold = threshold(options.successThreshold, HEALTH_DEFAULTS.successThreshold);
    this.#onChange = options.onChange;
    const coordinator = options.coordinator;
    if (coordinator !== undefined && coordinator.kind !== "local") this.#coordinator = coordinator;
  }

  /** Whether periodic probing is on. */
  get running(): boolean {
    return this.#running;
  }

  /** Probes at once, then every `intervalMs`. Calling it twice does nothing more. */
  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#loop();
  }

  /** Stops probing: clears the timer, aborts probes in flight and waits for them to end. */
  async stop(): Promise<void> {
    this.#running = false;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    for (const ctrl of this.#aborts) ctrl.abort(STOPPED);
    await this.#round;
  }

  /** Probes every instance once now (all in parallel) and resolves when all are done. */
  async checkAll(): Promise<void> {
    await Promise.all([...this.#source()].map((b) => this.check(b)));
  }

  /**
   * Probes one instance and applies the result. The first time it answers healthy, its own
   * `/v1/models` is read once for its model facts (`Backend.learnModelFacts`).
   */
  async check(backend: Backend): Promise<ProbeResult> {
    const { result, applies } = await this.#probe(backend);
    if (applies) {
      this.#apply(backend, result);
      if (result.ok) await this.#learnFacts(backend);
    }
    return result;
  }

  /**
   * A periodic check: with a shared coordinator, the result another replica published this
   * round, else a probe of our own (published for the others).
   */
  async #roundCheck(backend: Backend): Promise<void> {
    const coordinator = this.#coordinator;
    if (coordinator === undefined) return void await this.check(backend);
    const name = `health:${backend.id}`;
    try {
      if (!(await coordinator.claim(name, this.intervalMs * 0.8))) {
        const published = await coordinator.get(name);
        if (published !== null) {
          const { id, ...result } = JSON.parse(published) as Published;
          // Still the one counted last round (the next is being probed): a failure counts once.
          if (id !== undefined && this.#counted.get(backend) === id) return;
          if (id !== undefined) this.#counted.set(backend, id);
          this.#apply(backend, result);
          // Each replica reads the listing once itself: the facts are not published.
          if (result.ok) await this.#learnFacts(backend);
          return;
        }
      }
    } catch { /* the coordinator is unreachable: probe as if alone */ }
    const { result, applies } = await this.#probe(backend);
    if (!applies) return;
    this.#apply(backend, result);
    if (result.ok) await this.#learnFacts(backend);
    const id = crypto.randomUUID();
    this.#counted.set(backend, id);
    const value = JSON.stringify({ ...result, id } satisfies Published);
    await coordinator.put(name, value, this.intervalMs * 2.5).catch(() => {});
  }

  /** Probes `backend`; `applies` is false when the result says nothing about it. */
  async #probe(backend: Backend): Promise<{ result: ProbeResult; applies: boolean }> {
    const generation = backend.generation;
    const ctrl = new AbortController();
    this.#aborts.add(ctrl);
    const timer = setTimeout(() => ctrl.abort(), this.timeoutMs);
    let result: ProbeResult;
    try {
      result = await backend.probe(ctrl.signal);
    } finally {
      clearTimeout(timer);
      this.#aborts.delete(ctrl);
    }
    // A probe cut short by stop() tells nothing about the backend, nor does one that reached a
    // process replaced while it was under way (it would mark the restarted engine down).
    const applies = ctrl.signal.reason !== STOPPED && backend.generation === generation;
    return { result, applies };
  }

  /** Reads the backend's model facts if not known yet, under the probe timeout. */
  async #learnFacts(backend: Backend): Promise<void> {
    if (backend.knowsModelFacts) return;
    const ctrl = new AbortController();
    this.#aborts.add(ctrl);
    const timer = setTimeout(() => ctrl.abort(), this.timeoutMs);
    try {
      await backend.learnModelFacts(ctrl.signal);
    } finally {
      clearTimeout(timer);
      this.#aborts.delete(ctrl);
    }
  }

  /**
   * Counts a probe's result in the backend's streaks, changes its health when a threshold (see the
   * module) is met, and feeds its circuit breaker.
   */
  #apply(backend: Backend, result: ProbeResult): void {
    const before = backend.health;
    backend.countProbe(result.ok);
    if (result.ok) {
      if (before !== "unhealthy" || backend.passedProbes >= this.successThreshold) {
        backend.setHealth("healthy");
      }
      backend.circuit.recordSuccess();
    } else {
      // Unknown: never seen healthy. Unhealthy: it keeps the newest reason.
      const down = before !== "healthy" || downAtOnce(result) ||
        backend.failedProbes >= this.failureThreshold;
      if (down) backend.setHealth("unhealthy", result.message);
      backend.circuit.recordFailure();
    }
    if (backend.health !== before) this.#onChange?.(backend, backend.health, result);
  }

  #loop(): void {
    if (!this.#running) return;
    const round = Promise.all([...this.#source()].map((b) => this.#roundCheck(b))).then(
      () => {},
      () => {},
    );
    this.#round = round;
    round.then(() => {
      if (this.#round === round) this.#round = null;
      if (this.#running) this.#timer = setTimeout(() => this.#loop(), this.intervalMs);
    });
  }
}

// Whether a failed probe is certain enough to mark a healthy backend unhealthy alone: nothing
// listens, or it answered (only answers have a status) that it cannot serve.
function downAtOnce(result: ProbeResult): boolean {
  if (result.failure === "refused") return true;
  return result.status !== undefined && !BUSY_STATUSES.has(result.status);
}

function threshold(value: number | undefined, fallback: number): number {
  return value === undefined || !Number.isFinite(value) ? fallback : Math.max(1, Math.floor(value));
}

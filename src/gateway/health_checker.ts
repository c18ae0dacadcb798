/**
 * Periodic health probes of the backend instances (`GET /health`, or `GET /v1/models` for
 * OpenAI-compatible servers without it), each under a timeout. A probe sets the instance's
 * health and feeds its circuit breaker: a failed probe counts as a failure; a passing probe
 * closes a circuit whose cool-down is over (it is the half-open probe). The first time an instance
 * answers healthy, its own `/v1/models` is read once (no more per round) for what it says of its
 * models beyond their ids: which rerank, which have random weights (`Backend.modelFacts`).
 *
 * Gateway replicas sharing a coordinator share the periodic rounds: each round, one replica
 * claims a backend, probes it and publishes the result, and the others apply that result instead
 * of probing (so a backend gets one probe per round, not one per replica).
 *
 * @module
 */
import type { Backend, HealthState, ProbeResult } from "./backend.ts";
import type { Coordinator } from "../coord/coordinator.ts";

const STOPPED = Symbol("health checker stopped");

/** Options of {@link HealthChecker}. */
export interface HealthCheckerOptions {
  /** Time between the end of one round of probes and the start of the next, in ms (default 5000). */
  intervalMs?: number;
  /** Longest wait for one probe, in ms (default 2000). */
  timeoutMs?: number;
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
  #source: () => Iterable<Backend>;
  #onChange?: HealthCheckerOptions["onChange"];
  #timer: ReturnType<typeof setTimeout> | undefined;
  #running = false;
  #round: Promise<void> | null = null;
  #aborts = new Set<AbortController>();
  #coordinator?: Coordinator;

  /** Probes the backends `source` gives. */
  constructor(source: () => Iterable<Backend>, options: HealthCheckerOptions = {}) {
    this.#source = source;
    this.intervalMs = Math.max(10, options.intervalMs ?? 5000);
    this.timeoutMs = Math.max(1, options.timeoutMs ?? 2000);
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
          const result = JSON.parse(published) as ProbeResult;
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
    await coordinator.put(name, JSON.stringify(result), this.intervalMs * 2.5).catch(() => {});
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

  /** Sets the backend's health from a probe's result and feeds its circuit breaker. */
  #apply(backend: Backend, result: ProbeResult): void {
    const before = backend.health;
    if (result.ok) {
      backend.setHealth("healthy");
      backend.circuit.recordSuccess();
    } else {
      backend.setHealth("unhealthy", result.message);
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

/**
 * A circuit breaker per backend instance: `closed` lets everything through; after
 * `failureThreshold` consecutive failures it goes `open` and lets nothing through; once
 * `cooldownMs` has passed it is `half_open` and lets exactly one probe through — the probe's
 * success closes it, its failure opens it again for another cool-down.
 *
 * @module
 */

/** State of a {@link CircuitBreaker}. */
export type CircuitState = "closed" | "open" | "half_open";

/** Options of {@link CircuitBreaker}. */
export interface CircuitBreakerOptions {
  /** Consecutive failures that open the circuit (default 5). */
  failureThreshold?: number;
  /** How long the circuit stays open before a probe may go through, in ms (default 10000). */
  cooldownMs?: number;
  /** Clock in ms (tests pass a fake one). Default `performance.now`. */
  now?: () => number;
  /** Called on every state change. */
  onStateChange?: (state: CircuitState, previous: CircuitState) => void;
}

/** Defaults of {@link CircuitBreakerOptions}. */
export const CIRCUIT_DEFAULTS = { failureThreshold: 5, cooldownMs: 10_000 } as const;

/**
 * Tracks consecutive failures of one backend and decides whether to send it work.
 *
 * @example
 * ```ts
 * import { Dispatcher } from "@svc/cli/gateway";
 * // Each backend of a dispatcher has one, made with the dispatcher's `circuit` options.
 * const dispatcher = new Dispatcher({ circuit: { failureThreshold: 2, cooldownMs: 1000 } });
 * const breaker = dispatcher.addBackend({
 *   id: "a", baseUrl: "http://127.0.0.1:8001/v1", kind: "llm", models: ["demo/chat"],
 * }).circuit;
 * breaker.recordFailure();
 * breaker.recordFailure();
 * breaker.state; // "open"
 * breaker.tryAcquire(); // false until the cool-down has passed
 * ```
 */
export class CircuitBreaker {
  /** Failures in a row that open the circuit. */
  readonly failureThreshold: number;
  /** How long it stays open, in ms. */
  readonly cooldownMs: number;
  #now: () => number;
  #onStateChange?: (state: CircuitState, previous: CircuitState) => void;
  #state: CircuitState = "closed";
  #failures = 0;
  #openedAt = 0;
  #probeInFlight = false;
  #opens = 0;

  /** A closed breaker. */
  constructor(options: CircuitBreakerOptions = {}) {
    this.failureThreshold = Math.max(
      1,
      options.failureThreshold ?? CIRCUIT_DEFAULTS.failureThreshold,
    );
    this.cooldownMs = Math.max(0, options.cooldownMs ?? CIRCUIT_DEFAULTS.cooldownMs);
    this.#now = options.now ?? (() => performance.now());
    this.#onStateChange = options.onStateChange;
  }

  /** Current state; an open circuit whose cool-down has passed reads as `half_open`. */
  get state(): CircuitState {
    if (this.#state === "open" && this.#now() - this.#openedAt >= this.cooldownMs) {
      this.#set("half_open");
    }
    return this.#state;
  }

  /** Consecutive failures counted so far. */
  get consecutiveFailures(): number {
    return this.#failures;
  }

  /** How many times the circuit has opened. */
  get opens(): number {
    return this.#opens;
  }

  /** Milliseconds until an open circuit lets a probe through (0 when not open). */
  get remainingCooldownMs(): number {
    if (this.state !== "open") return 0;
    return Math.max(0, this.cooldownMs - (this.#now() - this.#openedAt));
  }

  /** Whether a request could go through now (does not reserve the half-open probe). */
  isAvailable(): boolean {
    const state = this.state;
    return state === "closed" || (state === "half_open" && !this.#probeInFlight);
  }

  /**
   * Asks to send one request. Closed: yes. Half-open: yes for the first caller only (the probe),
   * until its outcome is recorded. Open: no.
   */
  tryAcquire(): boolean {
    const state = this.state;
    if (state === "closed") return true;
    if (state === "half_open" && !this.#probeInFlight) {
      this.#probeInFlight = true;
      return true;
    }
    return false;
  }

  /**
   * A request (or health probe) succeeded: resets the count and closes a half-open circuit. A
   * late success while still open (a request sent before it opened) changes nothing: only a probe
   * after the cool-down may close it.
   */
  recordSuccess(): void {
    const state = this.state;
    if (state === "open") return;
    this.#failures = 0;
    this.#probeInFlight = false;
    if (state === "half_open") this.#set("closed");
  }

  /** A request failed: counts it; opens the circuit at the threshold, or re-opens a half-open one. */
  recordFailure(): void {
    this.#failures++;
    const state = this.state;
    this.#probeInFlight = false;
    if (state === "half_open" || (state === "closed" && this.#failures >= this.failureThreshold)) {
      this.#openedAt = this.#now();
      this.#opens++;
      this.#set("open");
    }
  }

  /** A request ended without telling anything (cancelled by its client): frees the probe slot. */
  recordNeutral(): void {
    this.#probeInFlight = false;
  }

  /**
   * Opens the circuit for `remainingMs` more, as another gateway replica opened it (the shared
   * state, _shared_circuit.ts); no failures are counted here.
   */
  openFor(remainingMs: number): void {
    this.#openedAt = this.#now() - Math.max(0, this.cooldownMs - remainingMs);
    this.#probeInFlight = false;
    if (this.#state !== "open") {
      this.#opens++;
      this.#set("open");
    }
  }

  /** Back to closed with no failures (after a backend is restarted or re-registered). */
  reset(): void {
    this.#failures = 0;
    this.#probeInFlight = false;
    if (this.#state !== "closed") this.#set("closed");
  }

  #set(state: CircuitState): void {
    const previous = this.#state;
    if (previous === state) return;
    this.#state = state;
    this.#onStateChange?.(state, previous);
  }
}

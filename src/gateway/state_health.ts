/**
 * Whether the gateway's state store (the managed keys' PostgreSQL or SQLite) can be reached: the
 * key lookups, the key routes, the writes of engine registrations and the stored Responses'
 * reads and writes run through {@link StateHealth.run}, which turns a store that cannot be reached (connection refused or lost,
 * or no answer within {@link STATE_TIMEOUT_MS}) into a 503 `state_unavailable` with Retry-After
 * instead of a 500, and remembers it for readiness until the store answers again; {@link StateHealth.watch} probes the store meanwhile, so readiness also
 * follows an outage (and its end) that no request saw.
 *
 * @module
 */
import { withTimeout } from "../core/with_timeout.ts";
import { ServiceUnavailableError } from "../core/errors.ts";
import { getLogger } from "../core/logging.ts";

/** The `code` of the 503 for a state store that cannot be reached. */
export const STATE_UNAVAILABLE = "state_unavailable";

/** How long one state operation may take before the caller gets the 503. */
export const STATE_TIMEOUT_MS = 3_000;

/** How often {@link StateHealth.watch} probes the store. */
export const PROBE_EVERY_MS = 2_000;

// Socket errors (Node's codes) and the `postgres` driver's own connection errors.
const CONNECTION_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "ETIMEDOUT",
  "EPIPE",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
  "CONNECTION_CLOSED",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
  "CONNECT_TIMEOUT",
]);

/**
 * True when `err` says the store cannot be reached now, not that a statement is wrong: a socket
 * error, PostgreSQL's connection exceptions (SQLSTATE class 08), shutdown and start-up states
 * (57P01-57P03) and too many connections (53300).
 */
export function isStateUnreachable(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== "string") return false;
  return CONNECTION_CODES.has(code) || code.startsWith("08") || /^57P0[123]$/.test(code) ||
    code === "53300";
}

class StateTimeout extends Error {
  code = "ETIMEDOUT";
}

/**
 * The state store's reachability as the gateway saw it last.
 *
 * @example
 * ```ts
 * import { StateHealth } from "@svc/cli/gateway";
 * const health = new StateHealth();
 * await health.run(() => Promise.resolve(1)); // 1
 * health.unavailable(); // null
 * ```
 */
export class StateHealth {
  #failure: string | null = null;
  #timeoutMs: number;
  #timer?: ReturnType<typeof setInterval>;
  #probing?: Promise<unknown>;

  /** `timeoutMs`: how long one store call may take before it counts as unreachable (3 s). */
  constructor(options: { timeoutMs?: number } = {}) {
    this.#timeoutMs = options.timeoutMs ?? STATE_TIMEOUT_MS;
  }

  /** Why the store cannot be reached now, or null when its last operation succeeded. */
  unavailable(): string | null {
    return this.#failure;
  }

  /**
   * Runs one store operation; see the module's description for what a failure becomes.
   * `options.meanwhile` says in the 503 what cannot be done until the store is back (default: API
   * keys cannot be checked or managed).
   */
  async run<T>(operation: () => Promise<T>, options: { meanwhile?: string } = {}): Promise<T> {
    let result: T;
    try {
      result = await withTimeout(
        operation(),
        this.#timeoutMs,
        () => new StateTimeout(`no answer within ${this.#timeoutMs} ms`),
      );
    } catch (err) {
      if (!isStateUnreachable(err)) throw err;
      const why = (err as Error).message || String(err);
      if (this.#failure === null) {
        getLogger("gateway").warn("the state store cannot be reached", { error: why });
      }
      this.#failure = `The gateway cannot reach its state store: ${why}.`;
      const meanwhile = options.meanwhile ?? "API keys cannot be checked or managed meanwhile";
      throw new ServiceUnavailableError(
        `${this.#failure} ${meanwhile}; retry shortly (the gateway's admin should check that ` +
          "the database runs).",
        { code: STATE_UNAVAILABLE, retryAfterSeconds: 1, cause: err },
      );
    }
    if (this.#failure !== null) {
      this.#failure = null;
      getLogger("gateway").info("the state store is reachable again");
    }
    return result;
  }

  /** Probes the store with `probe` every `everyMs` until {@link stop}. */
  watch(probe: () => Promise<unknown>, everyMs = PROBE_EVERY_MS): void {
    if (this.#timer !== undefined) return;
    this.#timer = setInterval(() => {
      this.#probing ??= this.run(probe).catch(() => {}).finally(() => this.#probing = undefined);
    }, everyMs);
    Deno.unrefTimer(this.#timer as unknown as number);
  }

  /** Stops probing (waits for a probe under way). */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#probing;
  }
}

/**
 * Coordination between gateway replicas: what must hold across all of them at once — per-key
 * request and token rates, a backend's concurrency limit, a backend's open circuit and its one
 * half-open probe, and which replicas are alive. One process needs no coordination: the
 * in-process {@link LocalCoordinator} is the default; several replicas share a Redis
 * (`redis://…`, redis_coordinator.ts). Rates are counted in fixed one-minute windows, as OpenAI
 * and LiteLLM count them; slots and claims expire by themselves, so a replica that dies holds
 * nothing for longer than their time to live.
 *
 * @module
 */

import { ServiceUnavailableError } from "../core/errors.ts";

/** A key's limits per minute; an absent field is no limit. */
export interface RateLimit {
  /** Requests per minute. */
  rpm?: number;
  /** Tokens (prompt + completion, charged after each answer) per minute. */
  tpm?: number;
}

/** Where a key stands against one of its limits in the current window. */
export interface RateWindow {
  /** The limit per minute. */
  limit: number;
  /** What is left of it in this window. */
  remaining: number;
  /** Milliseconds until the window resets. */
  resetMs: number;
}

/** The answer to {@link Coordinator.admit}. */
export interface RateDecision {
  /** Whether the request was counted and may go on. */
  allowed: boolean;
  /** Which limit refused the request (when not allowed). */
  limitedBy?: "requests" | "tokens";
  /** How long to wait before trying again (0 when allowed). */
  retryAfterMs: number;
  /** The request window, when the key has an rpm. */
  requests?: RateWindow;
  /** The token window, when the key has a tpm. */
  tokens?: RateWindow;
}

/** A slot held; give it back once the work is done. */
export interface Lease {
  /** Gives the slot back (once; later calls do nothing). */
  release(): Promise<void>;
}

/** What every replica shares. */
export interface Coordinator {
  /** `local` or `redis`. */
  readonly kind: "local" | "redis";
  /**
   * Why the shared state cannot be reached right now (Redis down, a command timed out), or null
   * when it can: what readiness reports, and what lets the features that can do without it go on
   * alone. Every method rejects with a 503 {@link COORDINATION_UNAVAILABLE} error meanwhile.
   */
  unavailable(): string | null;
  /**
   * Counts one request of `key` unless a limit of its window is reached: then nothing is
   * counted and the decision says which limit and how long to wait.
   */
  admit(key: string, limit: RateLimit): Promise<RateDecision>;
  /** Charges `tokens` to `key`'s token window (from the answer's usage). */
  charge(key: string, tokens: number): Promise<void>;
  /**
   * One of `max` slots of `resource` across all replicas, or null when all are held. A slot is
   * kept alive while held and expires `ttlMs` after its holder stops renewing it.
   */
  acquire(resource: string, max: number, ttlMs?: number): Promise<Lease | null>;
  /**
   * True for exactly one caller until `ttlMs` passes (or {@link release} is called): who
   * probes a half-open circuit, who health-checks a backend this round.
   */
  claim(name: string, ttlMs: number): Promise<boolean>;
  /** Gives a claim up early. */
  release(name: string): Promise<void>;
  /** Sets a shared value that expires after `ttlMs` (an open circuit, a health result). */
  put(name: string, value: string, ttlMs: number): Promise<void>;
  /** The value of {@link put}, or null once it expired or was never set. */
  get(name: string): Promise<string | null>;
  /** Says that replica `id` is alive for `ttlMs` more. */
  heartbeat(id: string, ttlMs: number): Promise<void>;
  /** The replicas whose last heartbeat has not expired. */
  members(): Promise<string[]>;
  /** Closes connections. */
  close(): Promise<void>;
}

/** The `code` of the 503 the methods reject with when the shared state cannot be reached. */
export const COORDINATION_UNAVAILABLE = "coordination_unavailable";

/** True for the error a coordinator rejects with when its shared state cannot be reached. */
export function isCoordinationUnavailable(err: unknown): boolean {
  return err instanceof ServiceUnavailableError && err.code === COORDINATION_UNAVAILABLE;
}

/** How long a slot lives without renewal (a dead replica's slots free up after this). */
export const DEFAULT_SLOT_TTL_MS = 30_000;

/** Length of a rate window. */
export const RATE_WINDOW_MS = 60_000;

/** The start of the rate window holding `now`, and the time left in it. */
export function rateWindow(now: number): { start: number; resetMs: number } {
  const start = Math.floor(now / RATE_WINDOW_MS) * RATE_WINDOW_MS;
  return { start, resetMs: start + RATE_WINDOW_MS - now };
}

/** The decision for counts `requests` and `tokens` already in the window (before this one). */
export function decide(
  limit: RateLimit,
  used: { requests: number; tokens: number },
  resetMs: number,
): RateDecision {
  const requestsFull = limit.rpm !== undefined && used.requests >= limit.rpm;
  const tokensFull = limit.tpm !== undefined && used.tokens >= limit.tpm;
  const allowed = !requestsFull && !tokensFull;
  const counted = used.requests + (allowed ? 1 : 0);
  return {
    allowed,
    ...(allowed ? {} : { limitedBy: requestsFull ? "requests" as const : "tokens" as const }),
    retryAfterMs: allowed ? 0 : resetMs,
    ...(limit.rpm !== undefined && {
      requests: { limit: limit.rpm, remaining: Math.max(0, limit.rpm - counted), resetMs },
    }),
    ...(limit.tpm !== undefined && {
      tokens: { limit: limit.tpm, remaining: Math.max(0, limit.tpm - used.tokens), resetMs },
    }),
  };
}

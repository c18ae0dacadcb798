/**
 * What a backend (backend.ts) reports: its health, how a request to it ended, what changed when
 * it tells its listeners, and its plain view for metrics and status pages.
 *
 * @module
 */
import type { BackendKind } from "./backend_config.ts";
import type { CircuitState } from "./circuit_breaker.ts";

/** What the health checker last saw. `unknown` until the first probe (requests may still go). */
export type HealthState = "healthy" | "unhealthy" | "unknown";
/**
 * What changed: `capacity` (a slot was given back; nothing else), `state` (health, draining or
 * circuit, which may also change who can serve what).
 */
export type BackendChange = "capacity" | "state";

/** How a request to a backend ended, for its counters and circuit breaker. */
export type RequestOutcome =
  /** Answered (2xx, or a 4xx that is the client's fault). */
  | "success"
  /** Connection error, timeout, 5xx, broken stream, rejected credentials: counts against the circuit. */
  | "failure"
  /** Busy (429, 408): an error, but the backend is not broken. */
  | "overloaded"
  /** Cancelled by the client: tells nothing about the backend. */
  | "cancelled";

/** A plain view of a backend for metrics and status pages (no key). */
export interface BackendSnapshot {
  /** Backend id. */
  id: string;
  /** What it serves. */
  kind: BackendKind;
  /** Its base URL. */
  baseUrl: string;
  /** Reached over HTTP (`remote`) or by a handler call (`in_process`). */
  transport: "remote" | "in_process";
  /** Models it serves. */
  models: string[];
  /** Whether it runs on this machine. */
  local: boolean;
  /** Cost per 1k tokens. */
  cost: number;
  /** Routing weight. */
  weight: number;
  /** Requests it takes at once. */
  maxConcurrency: number;
  /** Health state. */
  health: HealthState;
  /** Why it is unhealthy, when it is. */
  healthMessage: string | null;
  /** Health probes failed in a row (0 once one passes). */
  failedProbes: number;
  /** Whether it takes no new requests. */
  draining: boolean;
  /** Circuit breaker state. */
  circuit: CircuitState;
  /** How often the circuit opened. */
  circuitOpens: number;
  /** Requests in flight. */
  inFlight: number;
  /** Requests sent. */
  requests: number;
  /** Requests that succeeded. */
  successes: number;
  /** Requests that failed. */
  errors: number;
  /** Requests retried elsewhere after failing here. */
  retries: number;
  /** Moving average latency in ms; null before the first sample. */
  latencyMs: number | null;
  /** Number of latency samples. */
  latencySamples: number;
  /** Sum of every latency sample in ms (for a Prometheus summary with `latencySamples`). */
  latencySumMs: number;
}

/**
 * What the dispatcher (dispatcher.ts) takes and reports: the requests it forwards, its options,
 * the models it offers and its counters.
 *
 * @module
 */
import type { Logger } from "../core/logging.ts";
import type { BackendSnapshot } from "./backend.ts";
import type { BackendKind } from "./backend_config.ts";
import type { CircuitBreakerOptions } from "./circuit_breaker.ts";
import type { SchedulingOptions, SchedulingPolicyType } from "./scheduling.ts";
import type { Coordinator } from "../coord/coordinator.ts";

/** The endpoints the dispatcher forwards. */
export type DispatchEndpoint =
  | "chat"
  | "completion"
  | "embedding"
  | "rerank"
  | "tokenize"
  | "detokenize";

/** One request to forward. */
export interface DispatchRequest {
  /** The endpoint it was sent to. */
  kind: DispatchEndpoint;
  /** The model the client asked for (an id or alias of some backend). */
  model: string;
  /**
   * The instances to send it to (default: embedding instances for embeddings and rerank, LLM
   * instances otherwise); `/tokenize` goes to whichever kind serves the model.
   */
  backendKind?: BackendKind;
  /**
   * The backend's path for it, where the endpoint has several (`/score`, `/v2/rerank` beside
   * `/rerank`); default: the endpoint's own (like `/rerank`, under the backend's `/v1`).
   */
  path?: string;
  /** The parsed JSON body; `model` is rewritten to the backend's name, `priority` is dropped. */
  body: Record<string, unknown>;
  /**
   * The client's headers (read for `x-priority`, `x-deadline-ms`, `x-user-id`, and `via`, which
   * goes upstream with this gateway added; the others are never forwarded).
   */
  headers?: Headers;
  /** The client's signal: aborting it cancels the upstream request. */
  signal?: AbortSignal;
  /** Stream the answer (default: `body.stream === true`). */
  stream?: boolean;
  /** Overall time budget in ms, retries included (default: the dispatcher's `requestTimeoutMs`). */
  timeoutMs?: number;
  /** Sent upstream as `x-request-id`. */
  requestId?: string;
}

/** Options of the `Dispatcher` (dispatcher.ts). */
export interface DispatcherOptions extends SchedulingOptions {
  /** Default `adaptive`. */
  policy?: SchedulingPolicyType;
  /** Most requests waiting per pool (default 256). */
  maxQueue?: number;
  /** `hybrid`: most inputs in one merged embedding request (default 256). */
  maxBatchInputs?: number;
  /** Failovers after the first attempt (default 2). */
  maxRetries?: number;
  /** Overall budget of a request in ms, queueing and retries included (default 300000). */
  requestTimeoutMs?: number;
  /** `slo_aware`: deadline of requests without `x-deadline-ms`, in ms (default 30000). */
  sloMs?: number;
  /** Circuit breaker settings of the backends added by config. */
  circuit?: CircuitBreakerOptions;
  /** Clock in ms (default `performance.now`). */
  now?: () => number;
  /** Log of the dispatcher. */
  logger?: Logger;
  /**
   * Shared by the gateway's replicas: a backend's `maxConcurrency` then holds across all of
   * them (each attempt also takes one of the backend's shared slots). Unset or in process: the
   * local slots are the limit.
   */
  coordinator?: Coordinator;
}

/** A model offered by the gateway. */
export interface GatewayModel {
  /** Model id. */
  id: string;
  /** What it does. */
  kind: BackendKind;
  /** Ids of the instances that serve it and are not known to be down. */
  backends: string[];
}

/** Everything the metrics endpoint renders. */
export interface DispatcherSnapshot {
  /** Scheduling policy in use. */
  policy: SchedulingPolicyType;
  /** Every backend. */
  backends: BackendSnapshot[];
  /** Wait queues, one per pool. */
  pools: { name: string; queueLength: number; maxQueue: number; rejected: number }[];
  /** Requests since start. */
  requests: number;
  /** Requests that failed. */
  failed: number;
  /** Requests the caller cancelled. */
  cancelled: number;
  /** Retries on another backend. */
  retries: number;
}

/**
 * The gateway's scheduling core: takes an OpenAI request, picks an instance by policy and
 * strategy, waits for a slot when all are busy, sends it, and fails over to another instance on
 * connection errors, timeouts, 5xx and 429 — as long as nothing has reached the client. A stream
 * is committed at its first byte: after that it is never retried, and a break ends it with an
 * error event. No HTTP server here: the HTTP layer calls {@link Dispatcher.dispatch}.
 *
 * @module
 */
import { newViaName, viaUpstream } from "./via.ts";
import { CancelledError, ConflictError, ServiceUnavailableError } from "../core/errors.ts";
import { getLogger, type Logger } from "../core/logging.ts";
import { Backend, type RequestOutcome } from "./backend.ts";
import {
  type BackendInstanceConfig,
  type BackendKind,
  validateBackendConfig,
} from "./backend_config.ts";
import { BackendPool, type Grant, type MergedInto } from "./backend_pool.ts";
import {
  createSchedulingPolicy,
  DEFAULT_SCHEDULING_POLICY,
  readSchedulingHints,
  type SchedulingPolicy,
} from "./scheduling.ts";
import { type BackendTransport, RemoteTransport } from "./transport.ts";
import { Http1Client } from "../http/http1/client.ts";
import { type Attempt, runAttempt } from "./_attempt.ts";
import { sharedSlot } from "./_shared_slot.ts";
import { SharedCircuits } from "./_shared_circuit.ts";
import type { Coordinator, Lease } from "../coord/coordinator.ts";
import type { Job, Member } from "./_job.ts";
import { requestJob } from "./_request_job.ts";
import type {
  DispatcherOptions,
  DispatcherSnapshot,
  DispatchRequest,
  GatewayModel,
} from "./dispatcher_types.ts";

export type {
  DispatchEndpoint,
  DispatcherOptions,
  DispatcherSnapshot,
  DispatchRequest,
  GatewayModel,
} from "./dispatcher_types.ts";

/**
 * Schedules requests over backend instances.
 *
 * @example
 * ```ts
 * import { Dispatcher } from "@svc/cli/gateway";
 * const dispatcher = new Dispatcher({ policy: "fifo", maxQueue: 64 });
 * dispatcher.addBackend({ id: "a", baseUrl: "http://127.0.0.1:8001/v1", kind: "llm", models: ["m"] });
 * // const res = await dispatcher.dispatch({ kind: "chat", model: "m", body: {...} });
 * ```
 */
export class Dispatcher {
  /** Orders the waiting work. */
  readonly policy: SchedulingPolicy;
  /** Failovers after the first attempt. */
  readonly maxRetries: number;
  /** Overall budget of a request in ms. */
  readonly requestTimeoutMs: number;
  /** `slo_aware` deadline of requests without one, in ms. */
  readonly sloMs: number;
  #options: DispatcherOptions;
  // Reaches the http:// backends added by config over kept-alive sockets (less CPU than fetch).
  readonly #httpClient = new Http1Client();
  /** What this replica shares with the others (only with a shared coordinator). */
  #shared: { coordinator: Coordinator; circuits: SharedCircuits } | undefined;
  #now: () => number;
  #logger: Logger;
  #pools = new Map<string, BackendPool<Job>>();
  #backends = new Map<string, Backend>();
  #running = new Set<Job>();
  #seq = 0;
  #requests = 0;
  #failed = 0;
  #cancelled = 0;
  #retries = 0;
  #closed = false;
  /** This gateway in the `Via` header of what it sends upstream (via.ts). */
  readonly #viaName = newViaName();

  /** A dispatcher with no backends yet. */
  constructor(options: DispatcherOptions = {}) {
    this.#options = options;
    const coordinator = options.coordinator;
    this.#shared = coordinator && coordinator.kind !== "local"
      ? { coordinator, circuits: new SharedCircuits(coordinator) }
      : undefined;
    this.policy = createSchedulingPolicy(options.policy ?? DEFAULT_SCHEDULING_POLICY, options);
    this.maxRetries = Math.max(0, options.maxRetries ?? 2);
    this.requestTimeoutMs = options.requestTimeoutMs ?? 300_000;
    this.sloMs = options.sloMs ?? 30_000;
    this.#now = options.now ?? (() => performance.now());
    this.#logger = options.logger ?? getLogger("gateway");
  }

  /**
   * Adds an instance from its config (validated) or as a ready {@link Backend}. `transport`
   * replaces the default fetch transport (an in-process engine app, for one).
   */
  addBackend(
    backend: Backend | BackendInstanceConfig,
    options: { transport?: BackendTransport } = {},
  ): Backend {
    const b = backend instanceof Backend ? backend : new Backend(validateBackendConfig(backend), {
      transport: options.transport ?? new RemoteTransport({ client: this.#httpClient }),
      circuit: this.#options.circuit,
      now: this.#options.now,
    });
    if (this.#backends.has(b.id)) {
      throw new ConflictError(
        `a backend with id '${b.id}' is already registered; pick another id or remove it first`,
      );
    }
    this.#backends.set(b.id, b);
    this.#pool(b.kind).add(b);
    return b;
  }

  /** Stops sending new work to an instance and forgets it; its running requests finish. */
  removeBackend(id: string): boolean {
    const b = this.#backends.get(id);
    if (b === undefined) return false;
    b.setDraining(true);
    this.#backends.delete(id);
    for (const pool of this.#pools.values()) pool.remove(id);
    return true;
  }

  /** The instance with this id. */
  backend(id: string): Backend | undefined {
    return this.#backends.get(id);
  }

  /** Every instance. */
  backends(): Backend[] {
    return [...this.#backends.values()];
  }

  /** True when at least one instance passed its health check (gateway readiness). */
  isReady(): boolean {
    return this.backends().some((b) => b.health === "healthy" && !b.draining);
  }

  /** Models of the instances not known to be down, with their kind and instances. */
  models(): GatewayModel[] {
    const out = new Map<string, GatewayModel>();
    for (const b of this.#backends.values()) {
      if (b.health === "unhealthy" || b.draining) continue;
      for (const id of [...b.config.models, ...Object.keys(b.config.aliases)]) {
        const key = `${b.kind}\u0000${id}`;
        const entry = out.get(key) ?? { id, kind: b.kind, backends: [] };
        entry.backends.push(b.id);
        out.set(key, entry);
      }
    }
    return [...out.values()];
  }

  /**
   * Forwards one request and resolves with the response to give the client: the backend's answer
   * (2xx, or a 4xx that is the client's fault, passed through) or, for streams, a relayed SSE
   * body. Rejects with an `SvcException`: NotFoundError, RateLimitError, ServiceUnavailableError,
   * ServiceError (every attempt failed), CancelledError, ValidationError (bad scheduling hints).
   */
  dispatch(request: DispatchRequest): Promise<Response> {
    if (this.#closed) {
      return Promise.reject(
        new ServiceUnavailableError("The gateway is shutting down; retry shortly.", {
          code: "shutting_down",
        }),
      );
    }
    let hints;
    let via;
    try {
      via = viaUpstream(request.headers?.get("via") ?? null, this.#viaName);
      hints = readSchedulingHints(request.headers, request.body);
    } catch (err) {
      return Promise.reject(err);
    }
    this.#requests++;
    const { job, answer } = requestJob(request, {
      now: this.#now(),
      seq: ++this.#seq,
      hints,
      via,
      settings: this,
      abort: (member) => this.#abortMember(member),
    });
    this.#run(job);
    return answer;
  }

  /** Counters and state of every instance and queue. */
  snapshot(): DispatcherSnapshot {
    return {
      policy: this.policy.type,
      backends: this.backends().map((b) => b.snapshot()),
      pools: [...this.#pools.values()].map((p) => ({
        name: p.name,
        queueLength: p.queueLength,
        maxQueue: p.maxQueue,
        rejected: p.rejected,
      })),
      requests: this.#requests,
      failed: this.#failed,
      cancelled: this.#cancelled,
      retries: this.#retries,
    };
  }

  /** Refuses new work, rejects waiting requests and cancels running ones. */
  close(): void {
    this.#closed = true;
    const reason = new ServiceUnavailableError("The gateway is shutting down; retry shortly.", {
      code: "shutting_down",
    });
    for (const pool of this.#pools.values()) pool.close(reason);
    for (const job of [...this.#running]) {
      for (const m of job.open()) this.#settle(m, reason);
      job.controller.abort(reason);
    }
    this.#httpClient.close();
  }

  #pool(kind: BackendKind): BackendPool<Job> {
    const name = this.policy.poolOf(kind);
    let pool = this.#pools.get(name);
    if (pool === undefined) {
      pool = new BackendPool<Job>(name, this.policy, {
        maxQueue: this.#options.maxQueue,
        maxBatchInputs: this.#options.maxBatchInputs,
        now: this.#options.now,
      });
      this.#pools.set(name, pool);
    }
    return pool;
  }

  #abortMember(member: Member): void {
    member.aborted = true;
    if (!member.settled) this.#settle(member, new CancelledError());
    const job = member.job;
    if (job.members.every((m) => m.aborted)) {
      job.controller.abort(new CancelledError("the client cancelled the request"));
    }
  }

  #settle(member: Member, result: Response | unknown): void {
    if (member.settled) return;
    member.settled = true;
    if (result instanceof Response) {
      member.resolve(result);
    } else {
      if (result instanceof CancelledError) this.#cancelled++;
      else this.#failed++;
      member.detach();
      member.reject(result);
    }
  }

  async #run(job: Job): Promise<void> {
    this.#running.add(job);
    let lastError: Error | undefined;
    try {
      for (let attempt = 0; attempt <= this.maxRetries;) {
        if (job.open().length === 0) return;
        let grant: Grant<Job> | MergedInto<Job>;
        try {
          grant = await this.#pool(job.kind).acquire(job, job.controller.signal);
        } catch (err) {
          // After a failed attempt, "nothing else to try" is best explained by that failure.
          const fatal = lastError !== undefined && !(err instanceof CancelledError)
            ? lastError
            : err;
          for (const m of job.open()) this.#settle(m, fatal);
          return;
        }
        // Merged into another job: that job took these members along and answers them.
        if (grant.backend === null) return;
        for (const other of grant.merged) {
          for (const m of other.members) {
            m.job = job;
            job.members.push(m);
          }
        }
        if (attempt > 0) {
          grant.backend.countRetry();
          this.#retries++;
        }
        const result = await this.#attempt(job, grant.backend);
        if (result.kind === "done") return;
        if (result.kind === "split") {
          // A merged request was refused as a whole (4xx): send each member alone.
          for (const m of job.open()) this.#resend(job, m);
          return;
        }
        lastError = result.error;
        const waitMs = result.retryAfterMs;
        if (waitMs !== undefined && !this.#pool(job.kind).servesElsewhere(job, grant.backend.id)) {
          // Every instance that could take it is busy: wait as long as it asked, then try it
          // again, as if queued here (not a failover; the request's timeout still bounds it).
          if (this.#now() + waitMs >= job.timeoutAt) break;
          if (!(await sleepUnlessAborted(waitMs, job.controller.signal))) {
            const why = "the request was cancelled while waiting for a busy backend";
            for (const m of job.open()) this.#settle(m, new CancelledError(why));
            return;
          }
          continue;
        }
        attempt++;
        job.exclude.add(grant.backend.id);
        this.#logger.warn("backend attempt failed", {
          backend: grant.backend.id,
          model: job.model,
          attempt,
          error: result.error.message,
          retry: attempt <= this.maxRetries,
        });
        if (this.#now() >= job.timeoutAt) break;
      }
      for (const m of job.open()) this.#settle(m, lastError);
    } catch (err) {
      for (const m of job.open()) this.#settle(m, err);
    } finally {
      if (!job.streaming) this.#running.delete(job);
    }
  }

  #resend(from: Job, member: Member): void {
    const job = from.solo();
    member.job = job;
    job.members.push(member);
    this.#run(job);
  }

  async #attempt(job: Job, backend: Backend): Promise<Attempt> {
    const shared = this.#shared;
    let lease: Lease | null = null;
    const opensBefore = backend.circuit.opens;
    const stateBefore = backend.circuit.state;
    if (shared !== undefined) {
      try {
        if (!(await shared.circuits.mayAttempt(backend))) {
          backend.release("cancelled");
          return {
            kind: "retry",
            error: new ServiceUnavailableError(
              `The backend '${backend.id}' is failing (its circuit is open on another gateway ` +
                `replica, or another replica is probing it); retry later.`,
              { code: "backend_unavailable" },
            ),
          };
        }
        lease = await sharedSlot(shared.coordinator, backend, job, this.#now);
      } catch (err) {
        backend.release("overloaded");
        return { kind: "retry", error: err instanceof Error ? err : new Error(String(err)) };
      }
    }
    return runAttempt(job, backend, {
      now: this.#now,
      settle: (member, result) => this.#settle(member, result),
      release: (outcome: RequestOutcome, latencyMs?: number) => {
        backend.release(outcome, latencyMs);
        // Both are best effort: a slot expires by itself and a circuit opens again by itself.
        lease?.release().catch(() => {});
        shared?.circuits.afterAttempt(backend, opensBefore, stateBefore).catch(() => {});
      },
      streamEnded: (outcome) => {
        this.#running.delete(job);
        // A client that leaves mid-stream cancelled its request, like one that left earlier.
        if (outcome === "cancelled") this.#cancelled++;
      },
    });
  }
}

/** Resolves true after `ms`, or false as soon as `signal` aborts. */
function sleepUnlessAborted(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const done = (slept: boolean) => {
      clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
      resolve(slept);
    };
    const onAbort = () => done(false);
    const timer = setTimeout(() => done(true), ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * A pool of backend instances with one bounded wait queue: hands out slots (`maxConcurrency` per
 * instance) to work in the order its scheduling policy says, refuses work early when the queue is
 * full (429) or, under `slo_aware`, when its deadline cannot be met (503), and merges waiting
 * embedding requests into one when the policy batches.
 *
 * @module
 */
import {
  CancelledError,
  NotFoundError,
  RateLimitError,
  ServiceUnavailableError,
} from "../core/errors.ts";
import type { Backend, BackendChange } from "./backend.ts";
import type { BackendKind } from "./backend_config.ts";
import type { SchedulingPolicy, WorkTicket } from "./scheduling.ts";

/** What the pool needs to know about one unit of work. */
export interface PoolTicket extends WorkTicket {
  readonly model: string;
  readonly kind: BackendKind;
  readonly userKey?: string | null;
  /** The head of the prompt, for prefix affinity. */
  readonly prefixKey?: string;
  /** Instances not to use (those that already failed this work). */
  readonly exclude: ReadonlySet<string>;
  /** Work with the same key may be merged into one upstream request (embeddings). */
  readonly batchKey?: string;
  /** Inputs carried, counted against `maxBatchInputs` when merging. */
  readonly batchSize: number;
}

/** A slot given to work: the instance, and other waiting work merged into it. */
export interface Grant<T extends PoolTicket> {
  backend: Backend;
  /** Tickets taken out of the queue to ride along (same `batchKey`). */
  merged: T[];
}

/** What a waiting ticket ends with when another ticket took it along. */
export interface MergedInto<T extends PoolTicket> {
  backend: null;
  into: T;
}

/** Options of {@link BackendPool}. */
export interface BackendPoolOptions {
  /** Most tickets waiting (default 256); more are refused with a 429. */
  maxQueue?: number;
  /** Most inputs in one merged embedding request (default 256). */
  maxBatchInputs?: number;
  /** Clock in ms (default `performance.now`). */
  now?: () => number;
}

interface Waiter<T extends PoolTicket> {
  ticket: T;
  /** In the queue still (not granted, merged, refused or gone). */
  queued: boolean;
  resolve: (grant: Grant<T> | MergedInto<T>) => void;
  reject: (err: unknown) => void;
  cleanup: () => void;
}

const DEFAULT_LATENCY_MS = 1000;

/**
 * One pool: instances plus a wait queue ordered by the policy.
 *
 * @example
 * ```ts
 * import { BackendPool } from "./backend_pool.ts";
 * import { createSchedulingPolicy } from "./scheduling.ts";
 * const pool = new BackendPool("all", createSchedulingPolicy("fifo"), { maxQueue: 64 });
 * // pool.add(backend); const grant = await pool.acquire(ticket); ... grant.backend.release("success");
 * ```
 */
export class BackendPool<T extends PoolTicket = PoolTicket> {
  readonly name: string;
  readonly maxQueue: number;
  readonly maxBatchInputs: number;
  #policy: SchedulingPolicy;
  #now: () => number;
  #backends = new Map<string, { backend: Backend; unsubscribe: () => void }>();
  #queue: Waiter<T>[] = [];
  #draining = false;
  #drainAgain = false;
  #rejected = 0;

  constructor(name: string, policy: SchedulingPolicy, options: BackendPoolOptions = {}) {
    this.name = name;
    this.#policy = policy;
    this.maxQueue = Math.max(0, options.maxQueue ?? 256);
    this.maxBatchInputs = Math.max(1, options.maxBatchInputs ?? 256);
    this.#now = options.now ?? (() => performance.now());
  }

  /** Tickets waiting now. */
  get queueLength(): number {
    return this.#queue.length;
  }

  /** Tickets refused at admission (queue full, deadline unmeetable) so far. */
  get rejected(): number {
    return this.#rejected;
  }

  /** The instances of the pool. */
  backends(): Backend[] {
    return [...this.#backends.values()].map((e) => e.backend);
  }

  /** Adds an instance; its freed slots and health changes move the queue. */
  add(backend: Backend): void {
    if (this.#backends.has(backend.id)) return;
    const unsubscribe = backend.subscribe((change) => this.drain(change));
    this.#backends.set(backend.id, { backend, unsubscribe });
    this.drain();
  }

  /** Removes an instance (its running work goes on; waiting work is re-examined). */
  remove(id: string): void {
    const entry = this.#backends.get(id);
    if (entry === undefined) return;
    entry.unsubscribe();
    this.#backends.delete(id);
    this.drain();
  }

  /**
   * Gets a slot for `ticket`: at once when an instance is free, else after waiting in the queue.
   * Rejects with NotFoundError (no instance serves the model), ServiceUnavailableError (none is
   * healthy; deadline cannot be met; waited past the deadline), RateLimitError (queue full) or
   * CancelledError (`signal` aborted).
   */
  acquire(ticket: T, signal?: AbortSignal): Promise<Grant<T> | MergedInto<T>> {
    if (signal?.aborted) return Promise.reject(new CancelledError());
    const hopeful = this.#hopeful(ticket);
    if (hopeful.length === 0) return Promise.reject(this.#noBackendError(ticket));
    this.drain("capacity"); // who waits goes first
    const grant = this.#tryGrant(ticket, hopeful);
    if (grant !== undefined) return Promise.resolve(grant);
    try {
      this.#admit(ticket, hopeful);
    } catch (err) {
      this.#rejected++;
      return Promise.reject(err);
    }
    return new Promise((resolve, reject) => {
      const waiter: Waiter<T> = { ticket, queued: true, resolve, reject, cleanup: () => {} };
      const timer = setTimeout(() => {
        this.#removeWaiter(waiter);
        reject(this.#deadlineError(ticket));
      }, Math.max(0, ticket.deadline - this.#now()));
      const onAbort = () => {
        this.#removeWaiter(waiter);
        reject(new CancelledError("the request was cancelled while waiting for a backend"));
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      waiter.cleanup = () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
      };
      this.#insert(waiter);
    });
  }

  /**
   * Hands free slots to waiting work, in policy order. Called on every change that frees one.
   * After a `capacity` change (a slot given back) it stops once no instance has a free slot, so
   * a long queue costs nothing per answered request; other changes examine every waiter, as
   * they can leave some with no instance at all (refused at once).
   */
  drain(change: BackendChange = "state"): void {
    if (this.#draining) {
      this.#drainAgain = true;
      return;
    }
    this.#draining = true;
    const untilFull = change === "capacity";
    try {
      do {
        this.#drainAgain = false;
        if (untilFull && !this.#anyFree()) break;
        for (const waiter of [...this.#queue]) {
          if (!waiter.queued) continue; // merged into an earlier one
          if (untilFull && !this.#canStartNow(waiter.ticket)) {
            if (!this.#anyFree()) break;
            continue;
          }
          const hopeful = this.#hopeful(waiter.ticket);
          if (hopeful.length === 0) {
            this.#removeWaiter(waiter);
            waiter.reject(this.#noBackendError(waiter.ticket));
            continue;
          }
          const grant = this.#tryGrant(waiter.ticket, hopeful);
          if (grant === undefined) continue;
          this.#removeWaiter(waiter);
          waiter.resolve(grant);
        }
      } while (this.#drainAgain);
    } finally {
      this.#draining = false;
    }
  }

  /** Rejects every waiting ticket (gateway shutdown). */
  close(reason: unknown): void {
    for (const waiter of [...this.#queue]) {
      this.#removeWaiter(waiter);
      waiter.reject(reason);
    }
    for (const { unsubscribe } of this.#backends.values()) unsubscribe();
    this.#backends.clear();
  }

  #anyFree(): boolean {
    for (const { backend } of this.#backends.values()) {
      if (backend.hasCapacity && backend.isEligible()) return true;
    }
    return false;
  }

  // A free instance could take the ticket now (cheap: no allocation, for long queues).
  #canStartNow(ticket: T): boolean {
    for (const { backend } of this.#backends.values()) {
      if (
        backend.hasCapacity && backend.isEligible() && backend.kind === ticket.kind &&
        !ticket.exclude.has(backend.id) && backend.upstreamModel(ticket.model) !== undefined
      ) return true;
    }
    return false;
  }

  /** Whether an instance other than `id` could take the ticket now or soon. */
  servesElsewhere(ticket: T, id: string): boolean {
    return this.#hopeful(ticket).some((b) => b.id !== id);
  }

  /** Instances that serve the model and could take it now or soon (not open/unhealthy/excluded). */
  #hopeful(ticket: T): Backend[] {
    const out: Backend[] = [];
    for (const { backend } of this.#backends.values()) {
      if (
        backend.kind === ticket.kind && backend.upstreamModel(ticket.model) !== undefined &&
        !ticket.exclude.has(backend.id) && !backend.draining && backend.health !== "unhealthy" &&
        backend.circuit.state !== "open"
      ) out.push(backend);
    }
    return out;
  }

  #tryGrant(ticket: T, hopeful: Backend[]): Grant<T> | undefined {
    const free = hopeful.filter((b) => b.hasCapacity && b.isEligible());
    if (free.length === 0) return undefined;
    let inFlight = 0;
    let capacity = 0;
    for (const b of hopeful) {
      inFlight += b.inFlight;
      capacity += b.config.maxConcurrency;
    }
    const backend = this.#policy.select(free, {
      userKey: ticket.userKey,
      prefixKey: ticket.prefixKey,
      utilization: inFlight / capacity,
    });
    if (!backend.tryAcquire()) return undefined;
    return { backend, merged: this.#merge(ticket, backend) };
  }

  // Takes waiting tickets with the same batch key that this instance can serve along with `lead`.
  #merge(lead: T, backend: Backend): T[] {
    if (!this.#policy.batchEmbeddings || lead.batchKey === undefined) return [];
    const merged: T[] = [];
    let size = lead.batchSize;
    const model = backend.upstreamModel(lead.model);
    for (const waiter of [...this.#queue]) {
      const t = waiter.ticket;
      if (
        t === lead || t.batchKey !== lead.batchKey || t.exclude.has(backend.id) ||
        backend.upstreamModel(t.model) !== model || size + t.batchSize > this.maxBatchInputs
      ) continue;
      size += t.batchSize;
      merged.push(t);
      this.#removeWaiter(waiter);
      waiter.resolve({ backend: null, into: lead });
    }
    return merged;
  }

  #admit(ticket: T, hopeful: Backend[]): void {
    if (this.#queue.length >= this.maxQueue) {
      const wait = this.#estimateWaitMs(this.#queue.length, hopeful);
      throw new RateLimitError(
        `The gateway's '${this.name}' queue is full (${this.maxQueue} requests waiting for a ` +
          `backend); retry after ${Math.ceil(wait / 1000)} s or add backend capacity.`,
        { retryAfterSeconds: clampSeconds(wait) },
      );
    }
    if (!this.#policy.checksDeadlines) return;
    const latency = meanLatency(hopeful);
    if (latency === undefined) return; // nothing measured yet: no basis to refuse
    const ahead = this.#queue.filter((w) =>
      this.#policy.compare(w.ticket, ticket) < 0 &&
      hopeful.some((b) => b.upstreamModel(w.ticket.model) !== undefined)
    ).length;
    const wait = this.#estimateWaitMs(ahead + 1, hopeful);
    const finish = this.#now() + wait + latency;
    if (finish > ticket.deadline) {
      throw new ServiceUnavailableError(
        `The request's deadline cannot be met: ${ahead} request(s) wait ahead of it and backends ` +
          `for '${ticket.model}' answer in about ${Math.round(latency)} ms, so it would finish ` +
          `about ${Math.round(finish - ticket.deadline)} ms late. Retry later or allow a longer ` +
          `deadline (x-deadline-ms).`,
        { code: "deadline_unmeetable", retryAfterSeconds: clampSeconds(wait) },
      );
    }
  }

  // Slots free at about capacity / latency per ms; position `n` in line gets one after n of them.
  #estimateWaitMs(position: number, hopeful: Backend[]): number {
    const capacity = hopeful.reduce((sum, b) => sum + b.config.maxConcurrency, 0);
    return (position * (meanLatency(hopeful) ?? DEFAULT_LATENCY_MS)) / Math.max(1, capacity);
  }

  #noBackendError(ticket: T): Error {
    const serving = this.backends().filter((b) =>
      b.kind === ticket.kind && b.upstreamModel(ticket.model) !== undefined
    );
    const shown = ticket.model.length > 200 ? `${ticket.model.slice(0, 200)}…` : ticket.model;
    if (serving.length === 0) {
      const models = [
        ...new Set(
          this.backends().filter((b) => b.kind === ticket.kind)
            .flatMap((b) => [...b.config.models, ...Object.keys(b.config.aliases)]),
        ),
      ];
      return new NotFoundError(
        `No backend serves the model '${shown}'.` +
          (models.length > 0 ? ` Models available: ${models.slice(0, 20).join(", ")}.` : "") +
          " GET /v1/models lists them.",
        { code: "model_not_found", param: "model" },
      );
    }
    const states = serving.map((b) =>
      `${b.id}: ${
        ticket.exclude.has(b.id)
          ? "failed this request"
          : b.draining
          ? "draining"
          : b.health === "unhealthy"
          ? "unhealthy"
          : `circuit ${b.circuit.state}`
      }`
    );
    const cooldowns = serving.map((b) => b.circuit.remainingCooldownMs).filter((ms) => ms > 0);
    return new ServiceUnavailableError(
      `No healthy backend is available for '${shown}' (${states.join("; ")}); retry shortly.`,
      {
        code: "no_backend_available",
        retryAfterSeconds: cooldowns.length > 0 ? clampSeconds(Math.min(...cooldowns)) : 5,
      },
    );
  }

  #deadlineError(ticket: T): Error {
    if (this.#policy.checksDeadlines) {
      return new ServiceUnavailableError(
        `The request's deadline passed while it waited for a backend for '${ticket.model}'; ` +
          "retry later or allow a longer deadline (x-deadline-ms).",
        { code: "deadline_unmeetable", retryAfterSeconds: 1 },
      );
    }
    return new ServiceUnavailableError(
      `Timed out waiting for a free backend for '${ticket.model}': every instance stayed busy. ` +
        "Retry later or add backend capacity.",
      { code: "queue_timeout", retryAfterSeconds: 5 },
    );
  }

  #insert(waiter: Waiter<T>): void {
    // Binary search for the first waiter that goes after this one (stable for equals).
    let lo = 0;
    let hi = this.#queue.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.#policy.compare(this.#queue[mid].ticket, waiter.ticket) <= 0) lo = mid + 1;
      else hi = mid;
    }
    this.#queue.splice(lo, 0, waiter);
  }

  #removeWaiter(waiter: Waiter<T>): void {
    waiter.queued = false;
    const i = this.#queue.indexOf(waiter);
    if (i >= 0) this.#queue.splice(i, 1);
    waiter.cleanup();
  }
}

function meanLatency(backends: readonly Backend[]): number | undefined {
  const measured = backends.filter((b) => b.latencyMs !== undefined);
  if (measured.length === 0) return undefined;
  return measured.reduce((sum, b) => sum + b.latencyMs!, 0) / measured.length;
}

function clampSeconds(ms: number): number {
  return Math.min(60, Math.max(1, Math.ceil(ms / 1000)));
}

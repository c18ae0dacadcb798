/**
 * A backend's concurrency across gateway replicas: before an attempt is sent, it takes one of the
 * backend's `maxConcurrency` slots on the shared coordinator (the local slot only bounds this
 * replica). When all are held by other replicas, the attempt waits, polling with a growing,
 * jittered pause, until one frees or the request's time is up.
 *
 * While the coordinator cannot be reached, the attempt goes on with this replica's local slot
 * alone (the backend then sees at most `maxConcurrency` per replica): a Redis outage degrades the
 * limit rather than failing every request, and is never blamed on the backend.
 *
 * @module
 */

import { CancelledError, ServiceUnavailableError } from "../core/errors.ts";
import { type Coordinator, isCoordinationUnavailable, type Lease } from "../coord/coordinator.ts";
import type { Backend } from "./backend.ts";
import type { Job } from "./_job.ts";

const FIRST_PAUSE_MS = 5;
const LONGEST_PAUSE_MS = 100;
/** The lease of an attempt that goes on without the shared slot. */
const ALONE: Lease = { release: () => Promise.resolve() };

/** One of `backend`'s shared slots for `job`; throws when the job's time runs out or it ends. */
export async function sharedSlot(
  coordinator: Coordinator,
  backend: Backend,
  job: Job,
  now: () => number,
): Promise<Lease> {
  const resource = `backend:${backend.id}`;
  let pause = FIRST_PAUSE_MS;
  while (true) {
    if (coordinator.unavailable() !== null) return ALONE;
    let lease: Lease | null;
    try {
      lease = await coordinator.acquire(resource, backend.config.maxConcurrency);
    } catch (err) {
      if (isCoordinationUnavailable(err)) return ALONE;
      throw err;
    }
    if (lease !== null) return lease;
    if (job.controller.signal.aborted || job.open().length === 0) {
      throw new CancelledError("the request ended while it waited for a backend slot");
    }
    const left = job.timeoutAt - now();
    if (left <= 0) {
      throw new ServiceUnavailableError(
        `The backend '${backend.id}' is at its concurrency limit (${backend.config.maxConcurrency}` +
          ` across all gateway replicas) for longer than this request may wait; retry later.`,
        { code: "backend_overloaded" },
      );
    }
    await new Promise((r) => setTimeout(r, Math.min(left, pause * (0.5 + Math.random()))));
    pause = Math.min(LONGEST_PAUSE_MS, pause * 2);
  }
}

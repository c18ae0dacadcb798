/**
 * Times every onnxruntime-node session run of the thread it is loaded in, into a counter array
 * (a `SharedArrayBuffer` when the runs happen in the engine's model worker, so the server's main
 * thread reads them without asking the worker). Used by `_serve.ts` on the main thread (the naive
 * server runs its session there) and by `_probe_worker.ts` inside our engine's model worker.
 *
 * Busy time is measured where the session runs: from the call of `InferenceSession.run` to its
 * result, in the thread that does nothing else. It is therefore the time the model was running,
 * not the time a batch spent travelling between the threads or waiting for the main thread.
 *
 * @module
 */

import * as ort from "onnxruntime-node";

/** Slots of the counter array. */
export const PROBE = {
  /** Session runs. */
  runs: 0,
  /** Wall ms with at least one run in progress (finished stretches). */
  busyMs: 1,
  /** Rows (batch size) summed over runs. */
  rows: 2,
  /** Decode steps of a causal LM (one new token per row, with a cache). */
  decodeRuns: 3,
  decodeMs: 4,
  decodeRows: 5,
  /** Cache length summed over decode steps (for the mean). */
  decodePast: 6,
  /** Epoch ms since when at least one run is in progress; 0 when none runs. */
  runningSince: 7,
} as const;

/** Length of the counter array. */
export const PROBE_SLOTS = 8;

/** Epoch ms, comparable across threads (each worker has its own `performance.timeOrigin`). */
export function epochMs(): number {
  return performance.timeOrigin + performance.now();
}

/**
 * Wraps `InferenceSession.prototype.run` of this thread's onnxruntime-node to count into `c`.
 *
 * @example
 * ```ts
 * const counters = new Float64Array(PROBE_SLOTS);
 * instrumentOrt(counters);
 * ```
 */
export function instrumentOrt(c: Float64Array): void {
  // deno-lint-ignore no-explicit-any
  const proto = (ort.InferenceSession as unknown as { prototype: any }).prototype;
  const run = proto.run;
  // Calls overlap where a server does not serialize them (the naive server's concurrent pipeline
  // calls queue inside onnxruntime-node): busy time is the union, not the sum, of the runs.
  let active = 0;
  // deno-lint-ignore no-explicit-any
  proto.run = async function (feeds: Record<string, any>, ...rest: unknown[]) {
    const ids = feeds.input_ids;
    const past = feeds["past_key_values.0.key"];
    const decode = ids?.dims?.[1] === 1 && past !== undefined;
    const start = epochMs();
    if (active++ === 0) c[PROBE.runningSince] = start;
    try {
      return await run.call(this, feeds, ...rest);
    } finally {
      const end = epochMs();
      const ms = end - start;
      if (--active === 0) {
        c[PROBE.busyMs] += end - c[PROBE.runningSince];
        c[PROBE.runningSince] = 0;
      }
      c[PROBE.runs]++;
      c[PROBE.rows] += Number(ids?.dims?.[0] ?? 0);
      if (decode) {
        c[PROBE.decodeRuns]++;
        c[PROBE.decodeMs] += ms;
        c[PROBE.decodeRows] += Number(ids.dims[0]);
        c[PROBE.decodePast] += Number(past.dims[2]);
      }
    }
  };
}

/** Busy ms so far of the counters `c`, the run in progress included up to now. */
export function busyMsNow(c: Float64Array): number {
  const since = c[PROBE.runningSince];
  return c[PROBE.busyMs] + (since > 0 ? Math.max(0, epochMs() - since) : 0);
}

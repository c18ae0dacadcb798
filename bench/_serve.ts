/**
 * Entry point of a benchmark server subprocess: starts our engine server or the naive server,
 * and opens a small control port the benchmark reads counters from. Prints one JSON line
 * `{baseUrl, controlUrl, pid}` when ready.
 *
 * What it counts (native CPU only):
 * - session runs and the time the model was running, measured in the thread that runs it: for
 *   our engine, inside its model worker (`_probe_worker.ts` replaces the engine's worker script);
 *   for the naive server, on its main thread;
 * - our engine's own statistics (`engine.stats()`: batch sizes, queue depth), the numbers its
 *   `/metrics` shows, sampled in process.
 *
 * Started by `_server_process.ts` with one argument, a JSON {@link ServeSpec}.
 *
 * @module
 */

import type { ModelKind } from "../src/core/inference_types.ts";
import type { Dtype } from "../src/engine/load_model.ts";
import type { SchedulerOptions } from "../src/engine/chat/decode_scheduler.ts";
import type { BatcherOptions } from "../src/engine/embedding/batcher.ts";
import { cpuSeconds, LoopLagSampler, rssMiB, RssSampler } from "./_proc.ts";
import { busyMsNow, instrumentOrt, PROBE, PROBE_SLOTS } from "./_ort_probe.ts";

/** What the subprocess serves. */
export interface ServeSpec {
  target: "engine" | "naive";
  /** Model id (engine) or folder (naive). */
  model: string;
  kind: ModelKind;
  cacheDir: string;
  device: "cpu" | "wasm" | "webgpu";
  dtype: Dtype;
  scheduler?: Partial<SchedulerOptions>;
  batching?: Partial<BatcherOptions>;
}

/** What the control port reports: counters and the process's CPU and memory. */
export interface ServerReport {
  /** When the report was made: epoch ms, sub-millisecond (comparable across processes). */
  at: number;
  counters: SessionCounters;
  /** CPU seconds of the whole process so far. */
  cpuSeconds: number;
  rssMiB: number;
  /** Peak resident memory since the last reset (sampled every 50 ms). */
  peakRssMiB: number;
  /** How late a 10 ms timer fired since the last reset: main-thread blocking, ms. */
  loopLag: { p50: number; p99: number; max: number };
}

/** Counters of the server process, cumulative since it started (diff two reports). */
export interface SessionCounters {
  /** Session runs. */
  runs: number;
  /** Wall time the session was running (in the thread that runs it), ms. */
  busyMs: number;
  /** Rows (batch size) summed over runs. */
  rows: number;
  /** Decode steps of a causal LM (one new token per row, with a cache). */
  decodeRuns: number;
  decodeMs: number;
  decodeRows: number;
  /** Cache length summed over decode steps (for the mean). */
  decodePast: number;
  /** Batches (embeddings) or decode steps (chat) our engine reports in `stats().batchSizes`. */
  engineBatches: number;
  /** Rows summed over those batches or steps. */
  engineRows: number;
  /** Engine queue depth (`stats().queueDepth`) summed over samples every 10 ms, and samples. */
  queueSum: number;
  queueSamples: number;
  /**
   * Model calls our engine made through its worker, and their time from submit to result as the
   * main thread sees it (model time plus the hand-off both ways and the wait for the main thread
   * to take the result).
   */
  workerCalls: number;
  workerCallMs: number;
}

/** `stats()` of our engines, as far as the benchmark reads it. */
interface EngineStats {
  queueDepth?: number;
  batchSizes?: [number, number][];
}

/** Counter arrays of every instrumented thread (main thread first, then model workers). */
const probes: Float64Array[] = [];
let engineStats: () => EngineStats = () => ({});
const queue = { sum: 0, samples: 0 };
const calls = { count: 0, ms: 0 };

/**
 * Times `WorkerSession.run` from the main thread: submit to result; and each step of a decode loop
 * (the worker's own steps, decode_loop.ts) as one call, from the previous step's tokens (or the
 * loop's start) to its own, so a loop that spans the measured window counts only its steps in it.
 */
async function timeWorkerCalls(): Promise<void> {
  const { WorkerSession } = await import("../src/engine/worker_session.ts");
  const run = WorkerSession.prototype.run;
  WorkerSession.prototype.run = function (this: typeof WorkerSession.prototype, feeds) {
    const start = performance.now();
    return run.call(this, feeds).finally(() => {
      calls.count++;
      calls.ms += performance.now() - start;
    });
  };
  const decodeLoop = WorkerSession.prototype.decodeLoop;
  WorkerSession.prototype.decodeLoop = function (this: typeof WorkerSession.prototype, spec) {
    const loop = decodeLoop.call(this, spec);
    let last = performance.now();
    return {
      ...loop,
      next: async () => {
        const tokens = await loop.next();
        if (tokens !== null) {
          const now = performance.now();
          calls.count++;
          calls.ms += now - last;
          last = now;
        }
        return tokens;
      },
    };
  };
}

/**
 * Makes our engine start `_probe_worker.ts` instead of its own model worker, and keeps the counter
 * array each such worker shares.
 */
function probeModelWorkers(): void {
  const original = globalThis.Worker;
  const probeUrl = new URL("./_probe_worker.ts", import.meta.url);
  class ProbedWorker extends original {
    constructor(url: string | URL, options?: WorkerOptions) {
      const engineWorker = String(url).endsWith("/src/engine/session_worker.ts");
      super(engineWorker ? probeUrl : url, options);
      if (!engineWorker) return;
      this.addEventListener("message", (event) => {
        const data = (event as MessageEvent).data;
        if (data?.type === "bench-probe") probes.push(new Float64Array(data.counters));
      });
    }
  }
  globalThis.Worker = ProbedWorker;
}

function readCounters(): SessionCounters {
  const sum = (slot: number) => probes.reduce((s, c) => s + c[slot], 0);
  let engineBatches = 0;
  let engineRows = 0;
  for (const [size, count] of engineStats().batchSizes ?? []) {
    engineBatches += count;
    engineRows += size * count;
  }
  return {
    runs: sum(PROBE.runs),
    busyMs: probes.reduce((s, c) => s + busyMsNow(c), 0),
    rows: sum(PROBE.rows),
    decodeRuns: sum(PROBE.decodeRuns),
    decodeMs: sum(PROBE.decodeMs),
    decodeRows: sum(PROBE.decodeRows),
    decodePast: sum(PROBE.decodePast),
    engineBatches,
    engineRows,
    queueSum: queue.sum,
    queueSamples: queue.samples,
    workerCalls: calls.count,
    workerCallMs: calls.ms,
  };
}

async function main(spec: ServeSpec): Promise<void> {
  const { setupLogger } = await import("../src/core/logging.ts");
  setupLogger("error");
  if (spec.device === "cpu") {
    const mainThread = new Float64Array(PROBE_SLOTS);
    instrumentOrt(mainThread);
    probes.push(mainThread);
    probeModelWorkers();
    await timeWorkerCalls();
  }
  let baseUrl: string;
  let stop: () => Promise<void>;
  if (spec.target === "naive") {
    const { startNaiveServer } = await import("./naive_server.ts");
    const server = await startNaiveServer(spec.model, {
      dtype: spec.dtype === "q8" ? "q8" : "fp32",
    });
    baseUrl = server.baseUrl;
    stop = server.stop;
  } else {
    const { startEngineServer } = await import("../src/server/engine_server.ts");
    const server = await startEngineServer({
      model: spec.model,
      kind: spec.kind,
      hostname: "127.0.0.1",
      port: 0,
      cacheDir: spec.cacheDir,
      device: spec.device,
      dtype: spec.dtype,
      scheduler: spec.scheduler,
      batching: spec.batching,
    });
    await server.ready;
    baseUrl = server.baseUrl;
    stop = server.stop;
    engineStats = () => server.engine.stats() as EngineStats;
  }
  const sampler = new RssSampler(50);
  const lag = new LoopLagSampler(10);
  const queueTimer = setInterval(() => {
    queue.sum += engineStats().queueDepth ?? 0;
    queue.samples++;
  }, 10);
  const control = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req) => {
    if (new URL(req.url).pathname === "/reset") {
      sampler.reset();
      lag.reset();
    }
    const report: ServerReport = {
      at: performance.timeOrigin + performance.now(),
      counters: readCounters(),
      cpuSeconds: cpuSeconds(),
      rssMiB: rssMiB(),
      peakRssMiB: sampler.peakMiB,
      loopLag: lag.summary(),
    };
    return Response.json(report);
  });
  let stopping = false;
  Deno.addSignalListener("SIGTERM", async () => {
    if (stopping) return;
    stopping = true;
    sampler.stop();
    lag.stop();
    clearInterval(queueTimer);
    await Promise.allSettled([stop(), control.shutdown()]);
    Deno.exit(0);
  });
  const controlUrl = `http://127.0.0.1:${control.addr.port}`;
  console.log(JSON.stringify({ baseUrl, controlUrl, pid: Deno.pid, rssMiB: rssMiB() }));
}

if (import.meta.main) {
  await main(JSON.parse(Deno.args[0]) as ServeSpec);
}

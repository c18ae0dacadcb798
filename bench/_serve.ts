/**
 * Entry point of a benchmark server subprocess: starts our engine server or the naive server,
 * counts ONNX Runtime session runs (native CPU only), and opens a small control port the
 * benchmark reads counters from. Prints one JSON line `{baseUrl, controlUrl, pid}` when ready.
 *
 * Started by `_server_process.ts` with one argument, a JSON {@link ServeSpec}.
 *
 * @module
 */

import type { ModelKind } from "../src/engine/types.ts";
import type { Dtype } from "../src/engine/load_model.ts";
import type { SchedulerOptions } from "../src/engine/chat/decode_scheduler.ts";
import type { BatcherOptions } from "../src/engine/embedding/batcher.ts";
import { cpuSeconds, LoopLagSampler, rssMiB, RssSampler } from "./_proc.ts";

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

/** What the control port reports: session counters and the process's CPU and memory. */
export interface ServerReport {
  /** When the report was made: epoch ms, sub-millisecond (comparable across processes). */
  at: number;
  counters: SessionCounters;
  /** CPU seconds of the whole process so far. */
  cpuSeconds: number;
  rssMiB: number;
  /** Peak resident memory since the last reset (sampled every 50 ms). */
  peakRssMiB: number;
  /** How late a 10 ms timer fired since the last reset: event-loop blocking, ms. */
  loopLag: { p50: number; p99: number; max: number };
}

/** Session counters of the server process. */
export interface SessionCounters {
  /** Session runs. */
  runs: number;
  /** Wall time with at least one run in progress. */
  busyMs: number;
  /** Rows (batch size) summed over runs. */
  rows: number;
  /** Decode steps of a causal LM (one new token per row, with a cache). */
  decodeRuns: number;
  decodeMs: number;
  decodeRows: number;
  /** Cache length summed over decode steps (for the mean). */
  decodePast: number;
}

function emptyCounters(): SessionCounters {
  return {
    runs: 0,
    busyMs: 0,
    rows: 0,
    decodeRuns: 0,
    decodeMs: 0,
    decodeRows: 0,
    decodePast: 0,
  };
}

let counters = emptyCounters();

/** Wraps `InferenceSession.prototype.run` of onnxruntime-node to time every run. */
async function instrumentOrt(): Promise<void> {
  const ort = await import("onnxruntime-node");
  // deno-lint-ignore no-explicit-any
  const proto = (ort.InferenceSession as unknown as { prototype: any }).prototype;
  const run = proto.run;
  let active = 0;
  let busySince = 0;
  // deno-lint-ignore no-explicit-any
  proto.run = async function (feeds: Record<string, any>, ...rest: unknown[]) {
    const ids = feeds.input_ids;
    const past = feeds["past_key_values.0.key"];
    const decode = ids?.dims?.[1] === 1 && past !== undefined;
    const start = performance.now();
    if (active++ === 0) busySince = start;
    try {
      return await run.call(this, feeds, ...rest);
    } finally {
      const end = performance.now();
      if (--active === 0) counters.busyMs += end - busySince;
      counters.runs++;
      counters.rows += Number(ids?.dims?.[0] ?? 0);
      if (decode) {
        counters.decodeRuns++;
        counters.decodeMs += end - start;
        counters.decodeRows += Number(ids.dims[0]);
        counters.decodePast += Number(past.dims[2]);
      }
    }
  };
}

async function main(spec: ServeSpec): Promise<void> {
  const { setupLogger } = await import("../src/core/logging.ts");
  setupLogger("error");
  if (spec.device === "cpu") await instrumentOrt();
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
  }
  const sampler = new RssSampler(50);
  const lag = new LoopLagSampler(10);
  const control = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req) => {
    if (new URL(req.url).pathname === "/reset") {
      counters = emptyCounters();
      sampler.reset();
      lag.reset();
    }
    const report: ServerReport = {
      at: performance.timeOrigin + performance.now(),
      counters,
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
    await Promise.allSettled([stop(), control.shutdown()]);
    Deno.exit(0);
  });
  const controlUrl = `http://127.0.0.1:${control.addr.port}`;
  console.log(JSON.stringify({ baseUrl, controlUrl, pid: Deno.pid, rssMiB: rssMiB() }));
}

if (import.meta.main) {
  await main(JSON.parse(Deno.args[0]) as ServeSpec);
}

/**
 * Snapshots of a load phase: the server's session counters, CPU time and memory, the client's
 * CPU time and the whole machine's, and the rates between two snapshots.
 *
 * @module
 */

import { cpuSeconds, processCpuSeconds, systemBusySeconds } from "./_proc.ts";
import type { SessionCounters } from "./_serve.ts";
import type { ServerProcess } from "./_server_process.ts";

/**
 * Counters, CPU times and memory at one moment of a phase. The server answers when its event
 * loop is free (maybe after a long session run), so its numbers carry their own time stamp.
 */
export interface Snapshot {
  /** Epoch ms when the client and system numbers were read. */
  clientAt: number;
  /** Epoch ms when the server made its report. */
  serverAt: number;
  counters: SessionCounters;
  serverCpu: number;
  clientCpu: number;
  /** Busy CPU seconds of the whole machine. */
  systemBusy: number;
  /** Server's peak memory since its last reset. */
  peakRssMiB: number;
  loopLag: { p50: number; p99: number; max: number };
}

/** Reads the server's session counters and both processes' CPU time. */
export async function snapshot(server: ServerProcess): Promise<Snapshot> {
  // Client-side numbers are read now, when asked; the server's when it gets to answer.
  const clientAt = performance.timeOrigin + performance.now();
  const clientCpu = cpuSeconds();
  const [report, systemBusy] = await Promise.all([server.report(), systemBusySeconds()]);
  return {
    clientAt,
    serverAt: report.at,
    counters: report.counters,
    serverCpu: report.cpuSeconds,
    clientCpu,
    systemBusy,
    peakRssMiB: report.peakRssMiB,
    loopLag: report.loopLag,
  };
}

const NO_COUNTERS: SessionCounters = {
  runs: NaN,
  busyMs: NaN,
  rows: NaN,
  decodeRuns: NaN,
  decodeMs: NaN,
  decodeRows: NaN,
  decodePast: NaN,
  engineBatches: NaN,
  engineRows: NaN,
  queueSum: NaN,
  queueSamples: NaN,
  workerCalls: NaN,
  workerCallMs: NaN,
};

/**
 * A snapshot of a server that is not ours (llama.cpp): its CPU time from /proc; it has no session
 * counters, memory peak or loop lag, so those are NaN (and every rate derived from them).
 */
export async function llamaSnapshot(pid: number): Promise<Snapshot> {
  const clientAt = performance.timeOrigin + performance.now();
  const clientCpu = cpuSeconds();
  const [serverCpu, systemBusy] = await Promise.all([processCpuSeconds(pid), systemBusySeconds()]);
  return {
    clientAt,
    serverAt: clientAt,
    counters: NO_COUNTERS,
    serverCpu,
    clientCpu,
    systemBusy,
    peakRssMiB: NaN,
    loopLag: { p50: NaN, p99: NaN, max: NaN },
  };
}

/** Rates between two snapshots: each process's cores over its own interval, and the session's. */
export function rates(before: Snapshot, after: Snapshot): {
  serverSeconds: number;
  serverCores: number;
  clientCores: number;
  otherCores: number;
  session: SessionCounters;
} {
  const serverSeconds = (after.serverAt - before.serverAt) / 1000;
  const clientSeconds = (after.clientAt - before.clientAt) / 1000;
  const serverCores = (after.serverCpu - before.serverCpu) / serverSeconds;
  const clientCores = (after.clientCpu - before.clientCpu) / clientSeconds;
  const systemCores = (after.systemBusy - before.systemBusy) / clientSeconds;
  return {
    serverSeconds,
    serverCores,
    clientCores,
    otherCores: Math.max(0, systemCores - serverCores - clientCores),
    session: diffCounters(before.counters, after.counters),
  };
}

/** `after - before`, field by field. */
export function diffCounters(before: SessionCounters, after: SessionCounters): SessionCounters {
  const out = { ...after };
  for (const key of Object.keys(after) as (keyof SessionCounters)[]) out[key] -= before[key];
  return out;
}

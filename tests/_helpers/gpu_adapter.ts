// The machine's WebGPU adapter, asked for in a Deno process of its own. The test process never
// requests an adapter itself: with Mesa's software adapter, adapters requested from several test
// modules (each an isolate on its own thread) corrupted the heap, and the test process aborted at
// exit after every test had passed (glibc "double free or corruption"; reproduced 1 run in 15
// with 30 such modules; ~1 suite run in 10 with 4). One request in one process exits cleanly.
import type { GpuInfo } from "../../src/core/system.ts";
import { runProbe } from "./run_probe.ts";

/** What getGpuInfo() and checkGpuAvailable() answer on this machine. */
export interface GpuProbeResult {
  info: GpuInfo | null;
  available: boolean;
}

/** Asks a fresh Deno process for this machine's WebGPU adapter. */
export async function probeGpu(): Promise<GpuProbeResult> {
  const [result] = await runProbe<GpuProbeResult>(new URL("./_gpu_probe.ts", import.meta.url), []);
  return result;
}

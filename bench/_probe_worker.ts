/**
 * The engine's model worker (`src/engine/session_worker.ts`) with its session runs timed: the
 * benchmark server (`_serve.ts`) starts this file in place of the engine's worker. It shares a
 * counter array with the main thread (one `{type: "bench-probe"}` message, which the engine's
 * `WorkerSession` ignores) and otherwise is the engine's worker, unchanged.
 *
 * The engine's worker only installs its message handler when evaluated; the code below runs
 * before the worker handles its first message (`load`), so the session is created, and every run
 * made, with onnxruntime already patched.
 *
 * @module
 */

import { instrumentOrt, PROBE_SLOTS } from "./_ort_probe.ts";
import "../src/engine/session_worker.ts";

const counters = new Float64Array(new SharedArrayBuffer(PROBE_SLOTS * 8));
instrumentOrt(counters);
(self as unknown as { postMessage(message: unknown): void }).postMessage({
  type: "bench-probe",
  counters: counters.buffer,
});

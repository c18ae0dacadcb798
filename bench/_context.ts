/**
 * Settings every benchmark part reads, resolved once by `run.ts` from its flags.
 *
 * @module
 */

import type { Dtype } from "../src/engine/load_model.ts";

/** What a benchmark part needs to know about the run. */
export interface BenchContext {
  /** Where the demo models are generated (once) and loaded from. */
  cacheDir: string;
  device: "cpu" | "wasm" | "webgpu";
  dtype: Dtype;
  /** Short runs for development. */
  quick: boolean;
  /** Repeats of every measurement; tables show the median. */
  repeats: number;
  /** Seconds of each embedding load phase (after its warm-up). */
  embedSeconds: number;
  /** Seconds of each steady-state chat phase (after its warm-up). */
  chatSeconds: number;
  /** `max_tokens` of every chat request. */
  maxTokens: number;
  /** Requests timed per variant in the HTTP overhead part. */
  httpRequests: number;
  /** File the server subprocesses' stderr is appended to. */
  serverLog?: string;
  /** Progress lines go here (stderr). */
  log(message: string): void;
}

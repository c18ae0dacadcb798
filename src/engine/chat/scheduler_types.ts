/**
 * What the decode scheduler (decode_scheduler.ts) takes and reports: the sequences it runs, its
 * limits and its counters.
 *
 * @module
 */

import type { LoopSampler } from "../decode_loop.ts";
import type { SamplerState } from "../decoding/sampler.ts";
import type { PrefixCacheStats } from "./prefix_cache.ts";

/** A sequence as the scheduler sees it. */
export interface ScheduledSequence {
  readonly promptIds: readonly number[];
  readonly signal?: AbortSignal;
  /**
   * Takes the logits of the sequence's next position (a view, valid only during the call) and
   * returns the token to feed next, or `null` when the sequence is finished.
   */
  accept(logits: Float32Array): number | null;
  /** Ends the sequence with an error (cancellation included). */
  fail(err: unknown): void;
  /** Prompt tokens found in the prefix cache (set by the scheduler before its first token). */
  cachedTokens?: number;
  /**
   * Its sampler for the model worker to choose its tokens with (decode_loop.ts), or null when
   * only {@link accept} can; then {@link acceptToken}, {@link restoreSampler} and
   * {@link remainingTokens} are there too.
   */
  loopSampler?(): LoopSampler | null;
  /** Tokens it may still generate. */
  readonly remainingTokens?: number;
  /** As {@link accept}, for a token the worker chose with its {@link loopSampler}. */
  acceptToken?(id: number): number | null;
  /** Continues its sampler from the worker's copy at the end of a loop. */
  restoreSampler?(state: SamplerState): void;
}

/** Limits of the scheduler. */
export interface SchedulerOptions {
  /** Most sequences decoding at once; 1 switches batching off. */
  maxSequences: number;
  /** Most prompt tokens (padded) prefilled in one model call. */
  maxBatchTokens: number;
  /** Most sequences waiting for a place; more are refused with a 429. */
  maxQueue: number;
  /**
   * Most logits one prefill call may return, for models that compute them for every prompt
   * position (no `num_logits_to_keep`): longer prompts are prefilled in chunks through the cache.
   */
  maxPrefillLogits?: number;
  /**
   * Most prompt tokens (padded, all rows of the call together) prefilled between two decode steps
   * while other sequences decode; longer prompts are prefilled through the cache in chunks this
   * size, interleaved with the running batch's steps. Unset: every prefill runs whole. Applies to
   * `padded` batching only (an `aligned` batch cannot take a row whose length moved on).
   */
  prefillChunk?: number;
  /**
   * Let the model worker decode batches by itself, step after step, sampling each row with a copy
   * of its sampler and posting only token ids (decode_loop.ts), when no row needs this thread to
   * choose (constraints) or logprobs. Default true. A WebGPU session (in this thread) runs the same
   * loop in this thread, keeping the cache on the GPU between steps.
   */
  decodeInWorker?: boolean;
  /**
   * Bytes of key/value cache kept across requests for prompts that start the same way
   * (prefix_cache.ts); 0 switches the prefix cache off. Default {@link DEFAULT_PREFIX_CACHE_BYTES}.
   * Off for models batched `single` (their activations' scale depends on every token of a call).
   */
  prefixCacheBytes?: number;
}

/** 16M floats (64 MB) of prefill logits per model call unless told otherwise. */
export const DEFAULT_MAX_PREFILL_LOGITS = 1 << 24;

/** Counters for metrics (the shape the server's engine metrics read). */
export interface SchedulerStats {
  /** Sequences decoding now. */
  running: number;
  /** Sequences waiting for a place. */
  queueDepth: number;
  /** Decode steps run so far. */
  steps: number;
  /** Every decode step so far as (batch size, number of steps of that size). */
  batchSizes: [number, number][];
  /** The prefix cache's counters, when it is on. */
  prefixCache?: PrefixCacheStats;
}

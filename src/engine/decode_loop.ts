/**
 * Decoding next to the session: the model worker runs decode step after decode step, choosing
 * each row's next token with the engine's own sampler (greedy, temperature, top-k, top-p,
 * penalties; a copy of the row's sampler, continued from its state, so seeds give the same
 * tokens) and feeding it straight into the next step, and posts only the token ids. The cache never leaves
 * the worker between steps, and the main thread's work on a step's tokens (detokenizing, stop
 * strings, streaming) overlaps the next step instead of delaying it. The loop ends by itself at a
 * row's end-of-sequence token or token limit; the main thread ends it (a stop string, a
 * cancellation, a sequence waiting to join) through a shared flag, checked after every step: a
 * step already running finishes first, so the loop may run one step more than needed (rows that
 * finished ignore their token).
 *
 * Only for batches where no row needs the main thread to choose (constraints) or to see more than
 * the token (logprobs); the scheduler runs those one step at a time. At the end the worker hands
 * back the cache and each sampler's state, and the main thread's samplers continue from there.
 *
 * @module
 */

import { type SamplerState, SequenceSampler } from "./decoding/sampler.ts";
import { floatValues, type PlainTensor } from "./onnx_session.ts";
import type { SamplingParams } from "../core/inference_types.ts";

/** One row's sampler, as the worker rebuilds it: parameters, options and state. */
export interface LoopSampler {
  params: SamplingParams;
  /** For the repetition penalty only (when it is on). */
  promptTokens?: number[];
  /** The RNG stream of the seed. */
  stream: number;
  state: SamplerState;
  /** Tokens that end the sequence (EOS): the loop ends at the step that chooses one. */
  endIds?: number[];
}

/** Each row's sampler state at the end of a loop. */
export type SamplerStates = SamplerState[];

/** What a loop leaves: the cache after its last step and each row's sampler state. */
export interface LoopEnd {
  cache: Record<string, PlainTensor>;
  samplers: SamplerState[];
}

/** How to run a loop: the first step's feeds and how outputs feed the next step. */
export interface DecodeLoopSpec {
  /** Feeds of the first step (one new token per row, with the cache as `past` inputs). */
  feeds: Record<string, PlainTensor>;
  /** Cache inputs, and the output that feeds each at the next step. */
  pastNames: readonly string[];
  presentNames: readonly string[];
  /** Most steps to run (the fewest tokens any row may still generate). */
  maxSteps: number;
  /** Row by row. */
  samplers: LoopSampler[];
}

/** The main thread's side of a running loop. */
export interface DecodeLoop {
  /** Each row's token of the next step, or null once the loop has ended. */
  next(): Promise<Int32Array | null>;
  /** Asks the loop to end after the step under way. */
  stop(): void;
  /** The cache and samplers after the last step run, once the loop has ended. */
  readonly end: Promise<LoopEnd>;
}

/**
 * The main thread's side of a loop that `start` runs (in a worker or in this thread): `start`
 * calls `onTokens` after each step and resolves with the loop's end; setting `control[0]` asks
 * the loop to end after the step under way.
 */
export function decodeLoopOf(
  control: Int32Array,
  start: (onTokens: (tokens: Int32Array) => void) => Promise<LoopEnd>,
): DecodeLoop {
  const steps: Int32Array[] = [];
  let ended = false;
  let failure: unknown;
  let wake: (() => void) | undefined;
  const notify = () => {
    wake?.();
    wake = undefined;
  };
  const onTokens = (tokens: Int32Array) => {
    steps.push(tokens);
    notify();
  };
  const end = new Promise<LoopEnd>((resolve) => resolve(start(onTokens))).then(
    (result) => {
      ended = true;
      notify();
      return result;
    },
    (err) => {
      failure = err;
      ended = true;
      notify();
      throw err;
    },
  );
  end.catch(() => {}); // read through next(); a caller that stops reading has stopped the loop
  return {
    next: async () => {
      while (steps.length === 0 && !ended) await new Promise<void>((r) => (wake = r));
      if (steps.length > 0) return steps.shift()!;
      if (failure !== undefined) throw failure;
      return null;
    },
    stop: () => Atomics.store(control, 0, 1),
    end,
  };
}

/** The part of a session a loop runs on. */
interface Runner {
  run(feeds: Record<string, PlainTensor>): Promise<Record<string, PlainTensor>>;
}

/**
 * Runs the loop of `spec` on `session` in this thread until `control[0]` is set or `maxSteps`
 * steps ran, calling `onTokens` after each step; returns the last step's `present` outputs and
 * the samplers' states.
 */
export async function runSamplingLoop(
  session: Runner,
  spec: DecodeLoopSpec,
  control: Int32Array,
  onTokens: (tokens: Int32Array) => void,
): Promise<LoopEnd> {
  let feeds = spec.feeds;
  const batch = feeds.input_ids.dims[0];
  const ends = spec.samplers.map((s) => new Set(s.endIds ?? []));
  const samplers = spec.samplers.map(({ params, promptTokens, stream, state, endIds }) => {
    const sampler = new SequenceSampler(params, { promptTokens, stream, endIds });
    sampler.restore(state);
    return sampler;
  });
  for (let step = 1;; step++) {
    const out = await session.run(feeds);
    const [, positions, vocab] = out.logits.dims;
    const logits = floatValues(out.logits);
    const tokens = new Int32Array(batch);
    for (let row = 0; row < batch; row++) {
      const from = (row * positions + positions - 1) * vocab;
      tokens[row] = samplers[row].sample(logits.subarray(from, from + vocab)).tokenId;
    }
    onTokens(tokens);
    // A sequence that ends leaves the batch: stop now rather than after one more step.
    const ended = ends.some((ids, row) => ids.has(tokens[row]));
    if (ended || step >= spec.maxSteps || Atomics.load(control, 0) !== 0) {
      const cache: Record<string, PlainTensor> = {};
      for (const name of spec.presentNames) cache[name] = out[name];
      return { cache, samplers: samplers.map((s) => s.snapshot()) };
    }
    feeds = nextFeeds(feeds, tokens, out, spec);
  }
}

/** The next step's feeds: the chosen tokens, one more mask column and position, the new cache. */
function nextFeeds(
  feeds: Record<string, PlainTensor>,
  tokens: Int32Array,
  out: Record<string, PlainTensor>,
  spec: DecodeLoopSpec,
): Record<string, PlainTensor> {
  const batch = tokens.length;
  const width = feeds.attention_mask.dims[1];
  const previous = feeds.attention_mask.data as BigInt64Array;
  const mask = new BigInt64Array(batch * (width + 1));
  for (let row = 0; row < batch; row++) {
    mask.set(previous.subarray(row * width, (row + 1) * width), row * (width + 1));
    mask[row * (width + 1) + width] = 1n;
  }
  const next: Record<string, PlainTensor> = {
    ...feeds,
    input_ids: { type: "int64", data: BigInt64Array.from(tokens, BigInt), dims: [batch, 1] },
    attention_mask: { type: "int64", data: mask, dims: [batch, width + 1] },
  };
  const positions = feeds.position_ids;
  if (positions !== undefined) {
    const data = (positions.data as BigInt64Array).map((p) => p + 1n);
    next.position_ids = { type: "int64", data, dims: positions.dims };
  }
  spec.pastNames.forEach((name, i) => {
    // Kept on the device (a WebGPU buffer) when the session left it there.
    next[name] = { ...out[spec.presentNames[i]], type: feeds[name].type };
  });
  return next;
}

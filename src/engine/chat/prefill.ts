/**
 * Prefilling prompts through the key/value cache, whole or a chunk at a time: the scheduler's
 * model calls for prompts (left-padded rows of one batch), kept apart from its batching decisions.
 *
 * @module
 */

import { floatValues, type ModelSession, type PlainTensor } from "../onnx_session.ts";
import { decoderFeeds, type DecoderPlan } from "../families/decoder_family.ts";
import { type CacheTensor, leftPaddedMask } from "./kv_cache.ts";

/** The prompts of a prefill (row `i` is `prompts[i]`). */
export interface PrefillRows {
  readonly promptIds: readonly number[];
}

/** A prefill under way: `from` prompt positions (padded) are in `cache`. */
export interface PrefillJob<S extends PrefillRows = PrefillRows> {
  seqs: S[];
  longest: number;
  /** Left padding of each row. */
  pads: number[];
  from: number;
  cache: CacheTensor[];
}

/** A prefill of `seqs` (left-padded to `longest`) with nothing run yet. */
export function startPrefill<S extends PrefillRows>(
  plan: DecoderPlan,
  seqs: S[],
  longest: number,
): PrefillJob<S> {
  const { kvHeads, headDim, half, pastNames } = plan.cache;
  return {
    seqs,
    longest,
    pads: seqs.map((seq) => longest - seq.promptIds.length),
    from: 0,
    cache: pastNames.map(() => ({
      data: half ? new Uint16Array(0) : new Float32Array(0),
      dims: [seqs.length, kvHeads, 0, headDim] as const,
    })),
  };
}

/**
 * Runs up to `most` more prompt positions of `job` through the cache; returns the logits of each
 * row's last prompt token (`[batch, vocab]`) once the prompt is done, else null. A model that
 * returns logits for every position (no `num_logits_to_keep`) gets calls of at most
 * `maxLogits` logits.
 */
export async function runPrefill(
  session: ModelSession,
  plan: DecoderPlan,
  job: PrefillJob,
  options: { most: number; maxLogits: number },
): Promise<{ logits: Float32Array; vocab: number } | null> {
  const { seqs, longest, pads } = job;
  const batch = seqs.length;
  const chunk = plan.hasLogitsToKeep || plan.vocabSize === 0
    ? longest
    : Math.max(1, Math.floor(options.maxLogits / (batch * plan.vocabSize)));
  const end = Math.min(longest, job.from + options.most);
  while (job.from < end) {
    const from = job.from;
    const to = Math.min(end, from + chunk);
    const width = to - from;
    const ids = new BigInt64Array(batch * width);
    const positions = new BigInt64Array(batch * width);
    // Each row's real tokens among the first `to` positions, right-aligned behind its padding.
    const seen = pads.map((pad) => Math.max(0, to - pad));
    const mask = leftPaddedMask(seen, to, 0).data;
    seqs.forEach((seq, row) => {
      for (let i = Math.max(from, pads[row]); i < to; i++) {
        ids[row * width + i - from] = BigInt(seq.promptIds[i - pads[row]]);
        positions[row * width + i - from] = BigInt(i - pads[row] + plan.positionStart);
      }
    });
    const out = await session.run(decoderFeeds(plan, {
      ids,
      mask,
      positions,
      batch,
      length: width,
      pastLength: from,
      past: job.cache,
    }));
    job.cache = plan.cache.presentNames.map((n) => toCache(out[n]));
    job.from = to;
    if (to === longest) return lastPositions(out.logits);
  }
  return null;
}

/** The float32 logits of each row's last position, `[batch, vocab]` flattened. */
export function lastPositions(t: PlainTensor): { logits: Float32Array; vocab: number } {
  const [batch, positions, vocab] = t.dims;
  const all = floatValues(t);
  if (positions === 1) return { logits: all, vocab };
  const logits = new Float32Array(batch * vocab);
  for (let row = 0; row < batch; row++) {
    const from = (row * positions + positions - 1) * vocab;
    logits.set(all.subarray(from, from + vocab), row * vocab);
  }
  return { logits, vocab };
}

/** A `present` output as a cache tensor. */
export function toCache(t: PlainTensor): CacheTensor {
  return { data: t.data, dims: t.dims as unknown as CacheTensor["dims"] };
}

/**
 * The log-probability of every token of a prompt given those before it (legacy completions'
 * `echo` with `logprobs`). Kept apart from prefill, which keeps only the last position's logits
 * and skips positions the prefix cache holds: here the prompt runs through a fresh cache, a chunk
 * of positions at a time, so a long prompt never holds positions × vocabulary logits at once.
 *
 * @module
 */

import { CancelledError, SvcException } from "../../core/errors.ts";
import type { PromptTokenLogprob } from "../../core/inference_types.ts";
import type { PlainTensor, ScoredRun } from "../onnx_session.ts";
import { decoderFeeds, type DecoderPlan } from "../families/decoder_family.ts";
import { startPrefill, toCache } from "./prefill.ts";
import type { CacheTensor } from "./kv_cache.ts";
import {
  type LogitsScoring,
  type PositionLogprobs,
  positionLogprobs,
} from "../decoding/log_softmax.ts";

/**
 * One model call whose logits are scored as asked (the scheduler's: it runs between decode
 * steps, like a prefill).
 */
export type ScoredSessionRun = (
  feeds: Record<string, PlainTensor>,
  scoring: LogitsScoring,
) => Promise<ScoredRun>;

/**
 * Runs `ids` through the model and returns, for each token after the first, its log-probability
 * given the tokens before it (`rows[i]` is token `i + 1`'s) and the `top` most likely tokens at
 * its position; and the cache of the tokens run (all but the last; null when none was). Calls
 * return at most `maxLogits` logits.
 *
 * @example
 * ```ts ignore
 * const { rows } = await promptLogprobsOf(run, plan, [1, 5, 9], { top: 2, maxLogits: 1 << 24 });
 * rows.length; // 2
 * ```
 */
export async function promptLogprobsOf(
  run: ScoredSessionRun,
  plan: DecoderPlan,
  ids: readonly number[],
  options: PromptLogprobsOptions,
): Promise<{ rows: PositionLogprobs[]; cache: CacheTensor[] | null }> {
  const out: PositionLogprobs[] = [];
  const { top } = options;
  // The last token's logits predict nothing of the prompt: it is not run.
  const fed = ids.length - 1;
  if (fed <= 0) return { rows: out, cache: null };
  const byLogits = plan.vocabSize > 0 ? Math.floor(options.maxLogits / plan.vocabSize) : 256;
  const most = Math.max(1, Math.min(byLogits, options.maxChunk ?? Infinity));
  let cache = startPrefill(plan, [{ promptIds: ids }], fed).cache;
  for (let from = 0, to = 0; from < fed; from = to) {
    if (options.signal?.aborted) {
      const reason = options.signal.reason;
      throw reason instanceof SvcException ? reason : new CancelledError();
    }
    to = Math.min(fed, from + most);
    const width = to - from;
    const feeds = decoderFeeds(plan, {
      ids: BigInt64Array.from(ids.slice(from, to), (id) => BigInt(id)),
      mask: new BigInt64Array(to).fill(1n),
      positions: BigInt64Array.from(
        { length: width },
        (_, i) => BigInt(from + i + plan.positionStart),
      ),
      batch: 1,
      length: width,
      pastLength: from,
      past: cache,
    });
    // Every position's logits (0 keeps them all), not the last one's as a prefill asks.
    if (plan.hasLogitsToKeep) {
      feeds.num_logits_to_keep = { type: "int64", data: BigInt64Array.of(0n), dims: [] };
    }
    const targets = Int32Array.from(ids.slice(from + 1, to + 1));
    const { outputs, scores } = await run(feeds, { targets, top });
    cache = plan.cache.presentNames.map((n) => toCache(outputs[n]));
    for (let i = 0; i < width; i++) out.push(positionLogprobs(scores, i, top));
  }
  return { rows: out, cache };
}

/** Options of {@link promptLogprobsOf}. */
export interface PromptLogprobsOptions {
  /** Alternatives per position. */
  top: number;
  /** Most logits one call may return. */
  maxLogits: number;
  /** Most positions one call may run. */
  maxChunk?: number;
  signal?: AbortSignal;
}

/**
 * A prompt's tokens with their log-probabilities, as the engine answers them: `rows` from
 * {@link promptLogprobsOf}, `entry` the text and bytes of a token id.
 *
 * @example
 * ```ts
 * import { toPromptTokenLogprobs } from "./prompt_logprobs.ts";
 * const entry = (id: number) => ({ token: String(id), bytes: [48 + id] });
 * toPromptTokenLogprobs([1, 2], [{ logprob: -1, top: [] }], entry)[0].logprob; // null
 * ```
 */
export function toPromptTokenLogprobs(
  ids: readonly number[],
  rows: readonly PositionLogprobs[],
  entry: (id: number) => { token: string; bytes: number[] },
): PromptTokenLogprob[] {
  return ids.map((id, i) => {
    if (i === 0) return { ...entry(id), logprob: null, topLogprobs: null };
    const { logprob, top } = rows[i - 1];
    return {
      ...entry(id),
      logprob,
      topLogprobs: top.map((t) => ({ ...entry(t.tokenId), logprob: t.logprob })),
    };
  });
}

/**
 * The log-probability of one token in a row of logits, and the best alternatives there (a
 * prompt's own log-probabilities, src/engine/chat/prompt_logprobs.ts).
 *
 * @module
 */

import { selectTop } from "./_select.ts";

/** The log-probabilities at one position: of the actual token and of the best alternatives. */
export interface PositionLogprobs {
  /** The actual token's. */
  logprob: number;
  /** Up to `top` alternatives, best first. */
  top: { tokenId: number; logprob: number }[];
}

/** The log-softmax of `row` at `token`, and the `top` largest entries, best first. */
export function logSoftmaxAt(row: Float32Array, token: number, top: number): PositionLogprobs {
  let max = -Infinity;
  for (let i = 0; i < row.length; i++) if (row[i] > max) max = row[i];
  let sum = 0;
  for (let i = 0; i < row.length; i++) sum += Math.exp(row[i] - max);
  const lse = max + Math.log(sum);
  // The best `top` ids, best first (ties: the lower id first), as the sampler picks them.
  const best = new Int32Array(Math.max(0, top));
  const count = selectTop(row, top, best);
  return {
    logprob: row[token] - lse,
    top: [...best.subarray(0, count)].map((tokenId) => ({ tokenId, logprob: row[tokenId] - lse })),
  };
}

/** What to score in a model call's logits: the token after each position, and how many alternatives. */
export interface LogitsScoring {
  /** The token whose log-probability is asked at each of the last `targets.length` positions. */
  targets: Int32Array;
  /** Alternatives per position. */
  top: number;
}

/**
 * The log-probabilities a {@link LogitsScoring} asks for, packed in typed arrays: they cross from
 * the model's worker without a copy, where the logits (positions × vocabulary) would be tens of MB.
 */
export interface PackedLogprobs {
  /** The target token's log-probability at each position. */
  logprob: Float64Array;
  /** `top` alternative ids per position, best first; -1 past the last. */
  topIds: Int32Array;
  /** Their log-probabilities, laid out as `topIds`. */
  topLogprobs: Float64Array;
}

/**
 * Scores `logits` (`[1, positions, vocab]`, float32 or float16 bits) as `scoring` asks: its last
 * `targets.length` positions (a model may return more than asked for).
 *
 * @example
 * ```ts
 * import { packedLogprobs, positionLogprobs } from "./log_softmax.ts";
 * const logits = new Float32Array([0, 0, 1, 2]);
 * const packed = packedLogprobs(logits, [1, 2, 2], { targets: Int32Array.of(1, 0), top: 1 });
 * positionLogprobs(packed, 1, 1).top[0].tokenId; // 1
 * ```
 */
export function packedLogprobs(
  logits: Float32Array,
  dims: readonly number[],
  scoring: LogitsScoring,
): PackedLogprobs {
  const [, positions, vocab] = dims;
  const { targets, top } = scoring;
  const width = targets.length;
  const skip = positions - width;
  const packed: PackedLogprobs = {
    logprob: new Float64Array(width),
    topIds: new Int32Array(width * top).fill(-1),
    topLogprobs: new Float64Array(width * top),
  };
  for (let i = 0; i < width; i++) {
    const row = logits.subarray((skip + i) * vocab, (skip + i + 1) * vocab);
    const { logprob, top: best } = logSoftmaxAt(row, targets[i], top);
    packed.logprob[i] = logprob;
    best.forEach((t, k) => {
      packed.topIds[i * top + k] = t.tokenId;
      packed.topLogprobs[i * top + k] = t.logprob;
    });
  }
  return packed;
}

/**
 * Position `index` of `packed` (made with `top` alternatives per position).
 *
 * @example
 * ```ts
 * import { positionLogprobs } from "./log_softmax.ts";
 * const packed = { logprob: Float64Array.of(-1), topIds: Int32Array.of(3), topLogprobs: Float64Array.of(-0.5) };
 * positionLogprobs(packed, 0, 1); // { logprob: -1, top: [{ tokenId: 3, logprob: -0.5 }] }
 * ```
 */
export function positionLogprobs(
  packed: PackedLogprobs,
  index: number,
  top: number,
): PositionLogprobs {
  const alternatives: { tokenId: number; logprob: number }[] = [];
  for (let k = index * top; k < (index + 1) * top && packed.topIds[k] >= 0; k++) {
    alternatives.push({ tokenId: packed.topIds[k], logprob: packed.topLogprobs[k] });
  }
  return { logprob: packed.logprob[index], top: alternatives };
}

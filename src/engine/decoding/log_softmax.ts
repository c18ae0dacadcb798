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

/**
 * "Did you mean …?": the closest known word by edit distance, for mistyped commands, flags, model
 * ids and request fields.
 *
 * @module
 */

/**
 * The candidate closest to `typed` by edit distance, when it is close enough to be a typo (at
 * most one edit per three characters, at least one); undefined otherwise or on a tie.
 *
 * @example
 * ```ts
 * import { closestMatch } from "./suggest.ts";
 * closestMatch("serv", ["serve", "status", "stop"]); // "serve"
 * ```
 */
export function closestMatch(typed: string, candidates: readonly string[]): string | undefined {
  const limit = Math.max(1, Math.floor(typed.length / 3));
  let best: string | undefined;
  let bestDistance = Infinity;
  let tie = false;
  for (const candidate of new Set(candidates)) {
    const d = editDistance(typed, candidate);
    if (d < bestDistance) [best, bestDistance, tie] = [candidate, d, false];
    else if (d === bestDistance) tie = true;
  }
  return bestDistance <= limit && !tie ? best : undefined;
}

// Edit distance counting an insertion, a deletion, a substitution or a swap of two neighbours as
// one edit (optimal string alignment), so "modle" is one edit from "model".
function editDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...new Array(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.length][b.length];
}

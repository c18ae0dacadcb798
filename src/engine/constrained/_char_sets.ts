/**
 * Sets of code points as sorted, disjoint, non-touching ranges, flattened to
 * `[lo0, hi0, lo1, hi1, …]`: what a regular expression's character classes are. As ranges, the
 * pattern automaton can tell exactly (and without walking a million code points) whether a class
 * takes anything in a span, and pick one code point per stretch where its moves do not change.
 *
 * @module
 */

/** A set of code points: `[lo0, hi0, lo1, hi1, …]`, sorted, disjoint, not touching. */
export type CharSet = readonly number[];

export const MAX_CODE_POINT = 0x10ffff;

/** Code points text can hold: every one but the surrogates (UTF-8 cannot encode them alone). */
export const TEXT_CHARS: CharSet = [0, 0xd7ff, 0xe000, MAX_CODE_POINT];

/** The set of `lo` to `hi` (empty when `lo > hi`). */
export function charRange(lo: number, hi: number): CharSet {
  return lo > hi ? [] : [lo, hi];
}

/** Every code point in `a` or `b`. */
export function charUnion(...sets: CharSet[]): CharSet {
  const ranges: [number, number][] = [];
  for (const s of sets) for (let i = 0; i < s.length; i += 2) ranges.push([s[i], s[i + 1]]);
  ranges.sort((x, y) => x[0] - y[0]);
  const out: number[] = [];
  for (const [lo, hi] of ranges) {
    const last = out.length - 1;
    if (last > 0 && lo <= out[last] + 1) out[last] = Math.max(out[last], hi);
    else out.push(lo, hi);
  }
  return out;
}

/** Every code point not in `s`. */
export function charComplement(s: CharSet): CharSet {
  const out: number[] = [];
  let next = 0;
  for (let i = 0; i < s.length; i += 2) {
    if (s[i] > next) out.push(next, s[i] - 1);
    next = s[i + 1] + 1;
  }
  if (next <= MAX_CODE_POINT) out.push(next, MAX_CODE_POINT);
  return out;
}

/** Every code point in both. */
export function charIntersection(a: CharSet, b: CharSet): CharSet {
  return charComplement(charUnion(charComplement(a), charComplement(b)));
}

/** True when `cp` is in `s` (binary search). */
export function charHas(s: CharSet, cp: number): boolean {
  let lo = 0, hi = s.length / 2 - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (cp < s[2 * mid]) hi = mid - 1;
    else if (cp > s[2 * mid + 1]) lo = mid + 1;
    else return true;
  }
  return false;
}

/** True when `s` has a code point in `lo` to `hi`. */
export function charMeets(s: CharSet, lo: number, hi: number): boolean {
  for (let i = 0; i < s.length && s[i] <= hi; i += 2) if (s[i + 1] >= lo) return true;
  return false;
}

/**
 * Cutting an encoder's input to a number of tokens, as Hugging Face tokenizers truncate: the
 * opening and closing special tokens ([CLS], [SEP]) stay, and the text between them loses its end
 * (`right`, the default) or its start (`left`).
 *
 * @module
 */

/** Which end of the text a cut removes: `right` keeps the first tokens, `left` the last. */
export type TruncationSide = "left" | "right";

/**
 * `xs` (ids, or a parallel row such as token types) cut to `n` items. `keepFirst`/`keepLast`:
 * the first/last item is a special token that stays.
 *
 * @example
 * ```ts
 * import { truncateIds } from "./truncate_ids.ts";
 * truncateIds([101, 1, 2, 3, 102], 4, { keepFirst: true, keepLast: true }); // [101, 1, 2, 102]
 * truncateIds([101, 1, 2, 3, 102], 4, { keepFirst: true, keepLast: true, side: "left" });
 * // [101, 2, 3, 102]
 * ```
 */
export function truncateIds<T>(
  xs: readonly T[],
  n: number,
  options: { keepFirst: boolean; keepLast: boolean; side?: TruncationSide },
): T[] {
  if (xs.length <= n) return [...xs];
  const head = options.keepFirst ? 1 : 0;
  const tail = options.keepLast ? 1 : 0;
  const body = xs.slice(head, xs.length - tail);
  const room = Math.max(0, n - head - tail);
  const kept = options.side === "left" ? body.slice(body.length - room) : body.slice(0, room);
  return [...xs.slice(0, head), ...kept, ...xs.slice(xs.length - tail)];
}

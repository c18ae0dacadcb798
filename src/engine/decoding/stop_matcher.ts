/**
 * Incremental stop-string matching over streamed text. Text is released as soon as it can no longer
 * be part of a stop string; a suffix that could still grow into one is held back. A stop string is
 * never emitted, and the result does not depend on how the text was cut into pieces.
 *
 * @module
 */

/** What {@link StopMatcher.push} returns. */
export interface StopMatch {
  /** Text that is safe to emit now (may be empty). */
  text: string;
  /** True once a stop string has been seen; nothing follows it. */
  stopped: boolean;
  /** The stop string that matched, when `stopped`. */
  stop?: string;
}

/**
 * Holds back streamed text that could be the start of a stop string and reports the first complete
 * one. When several could match, the one that ends first wins (as if the text arrived one character
 * at a time); among those ending at the same place, the longest. Empty stop strings are ignored.
 *
 * @example
 * ```ts
 * import { StopMatcher } from "./stop_matcher.ts";
 * const matcher = new StopMatcher(["\nUser:"]);
 * matcher.push("Hel"); // { text: "Hel", stopped: false }
 * matcher.push("lo\nUs"); // { text: "lo", stopped: false } ("\nUs" is held back)
 * matcher.push("er: hi"); // { text: "", stopped: true, stop: "\nUser:" }
 * ```
 */
export class StopMatcher {
  readonly #stops: string[];
  #held = "";
  #stopped = false;
  #stop: string | undefined;

  constructor(stops: readonly string[] = []) {
    this.#stops = [...new Set(stops.filter((s) => s.length > 0))];
  }

  /** True once a stop string matched. */
  get stopped(): boolean {
    return this.#stopped;
  }

  /** The stop string that matched, if any. */
  get matchedStop(): string | undefined {
    return this.#stop;
  }

  /** Text currently held back because it may begin a stop string. */
  get heldText(): string {
    return this.#held;
  }

  /** Feeds the next piece of generated text. After a stop, returns empty text. */
  push(piece: string): StopMatch {
    if (this.#stopped) return { text: "", stopped: true, stop: this.#stop };
    if (this.#stops.length === 0) return { text: piece, stopped: false };
    const buffer = this.#held + piece;
    // Held text contains no complete stop, so any match ends inside the new piece.
    let bestStart = -1;
    let bestEnd = Infinity;
    let best: string | undefined;
    for (const stop of this.#stops) {
      const at = buffer.indexOf(stop, Math.max(0, this.#held.length - stop.length + 1));
      if (at < 0) continue;
      const end = at + stop.length;
      if (end < bestEnd || (end === bestEnd && at < bestStart)) {
        bestStart = at;
        bestEnd = end;
        best = stop;
      }
    }
    if (best !== undefined) {
      this.#stopped = true;
      this.#stop = best;
      this.#held = "";
      return { text: buffer.slice(0, bestStart), stopped: true, stop: best };
    }
    const keep = this.#partialSuffixLength(buffer);
    this.#held = buffer.slice(buffer.length - keep);
    return { text: buffer.slice(0, buffer.length - keep), stopped: false };
  }

  /** Ends the stream for another reason (length, EOS): returns the held-back text. */
  flush(): string {
    const rest = this.#held;
    this.#held = "";
    return rest;
  }

  // Length of the longest suffix of `buffer` that is a proper prefix of some stop string.
  #partialSuffixLength(buffer: string): number {
    let longest = 0;
    for (const stop of this.#stops) {
      const max = Math.min(stop.length - 1, buffer.length);
      for (let len = max; len > longest; len--) {
        if (buffer.endsWith(stop.slice(0, len))) {
          longest = len;
          break;
        }
      }
    }
    return longest;
  }
}

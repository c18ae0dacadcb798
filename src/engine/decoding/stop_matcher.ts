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
  // Per stop: its KMP prefix function, and how much of it the text so far ends with (the longest
  // suffix of the text that is a proper prefix of it). Each new character then costs O(1) per stop
  // (amortized), however long the stops or the held-back text; re-testing the held text's suffixes
  // cost up to a stop's length per stop and token, in copies of the stop's prefixes.
  readonly #prefix: Int32Array[];
  readonly #matched: Int32Array;
  #held = "";
  #stopped = false;
  #stop: string | undefined;

  constructor(stops: readonly string[] = []) {
    this.#stops = [...new Set(stops.filter((s) => s.length > 0))];
    this.#prefix = this.#stops.map(prefixFunction);
    this.#matched = new Int32Array(this.#stops.length);
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
    for (let i = 0; i < piece.length; i++) {
      const done = this.#advance(piece.charCodeAt(i));
      if (done !== undefined) {
        this.#stopped = true;
        this.#stop = done;
        this.#held = "";
        const end = buffer.length - piece.length + i + 1; // where the stop ends in the buffer
        return { text: buffer.slice(0, end - done.length), stopped: true, stop: done };
      }
    }
    // Everything before the longest partial match can no longer be part of a stop.
    const keep = Math.max(...this.#matched);
    this.#held = buffer.slice(buffer.length - keep);
    return { text: buffer.slice(0, buffer.length - keep), stopped: false };
  }

  /** Ends the stream for another reason (length, EOS): returns the held-back text. */
  flush(): string {
    const rest = this.#held;
    this.#held = "";
    return rest;
  }

  // Moves every stop's match on by one UTF-16 unit; the longest stop it completes, if any.
  #advance(unit: number): string | undefined {
    let done: string | undefined;
    for (let s = 0; s < this.#stops.length; s++) {
      const stop = this.#stops[s];
      const prefix = this.#prefix[s];
      let k = this.#matched[s];
      while (k > 0 && stop.charCodeAt(k) !== unit) k = prefix[k - 1];
      if (stop.charCodeAt(k) === unit) k++;
      if (k === stop.length) {
        if (done === undefined || stop.length > done.length) done = stop;
        k = prefix[k - 1];
      }
      this.#matched[s] = k;
    }
    return done;
  }
}

// prefix[i]: length of the longest proper prefix of text[0..i] that is also a suffix of it.
function prefixFunction(text: string): Int32Array {
  const prefix = new Int32Array(text.length);
  for (let i = 1, k = 0; i < text.length; i++) {
    while (k > 0 && text.charCodeAt(i) !== text.charCodeAt(k)) k = prefix[k - 1];
    if (text.charCodeAt(i) === text.charCodeAt(k)) k++;
    prefix[i] = k;
  }
  return prefix;
}

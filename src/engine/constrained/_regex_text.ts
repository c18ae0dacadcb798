// The byte-level state of a regex node (vLLM's `guided_regex`): plain UTF-8 text whose characters
// run through the pattern's automaton. Unlike a JSON string it has no quotes and no escapes, and
// it ends where the pattern accepts.
import { MAX_CODE_POINT } from "./_char_sets.ts";
import type { RegexNode } from "./grammar.ts";
import type { Terminal } from "./_terminals.ts";
import { wellFormedSecondByte } from "./_utf8.ts";

/** A position in text held to a pattern. */
export class RegexTerm implements Terminal {
  readonly tag = 0;
  readonly key: string;
  readonly canEnd: boolean;
  readonly exhausted: boolean;
  /**
   * @param re the pattern's state
   * @param pending UTF-8 continuation bytes still expected (0: between characters)
   * @param cp the code point read so far of a character begun
   * @param second the next byte is the second of a 3- or 4-byte character
   */
  constructor(
    readonly node: RegexNode,
    readonly re: number,
    readonly pending: number,
    readonly cp: number,
    readonly second: boolean,
  ) {
    const { pattern } = node;
    this.key = `X${node.id}:${re}:${pending}:${cp}:${second}`;
    this.canEnd = pending === 0 && pattern.accepting(re);
    this.exhausted = pending === 0 && !pattern.allowsRange(re, 0, MAX_CODE_POINT);
  }

  feed(b: number): Terminal | null {
    if (this.pending === 0) {
      if (b < 0x80) return this.#char(b);
      if (b >= 0xc2 && b <= 0xdf) return this.#partial(1, b & 0x1f, 0x80, false);
      if (b >= 0xe0 && b <= 0xef) return this.#partial(2, b & 0x0f, 0x800, true);
      if (b >= 0xf0 && b <= 0xf4) return this.#partial(3, b & 0x07, 0x10000, true);
      return null;
    }
    if (b < 0x80 || b > 0xbf) return null;
    if (this.second && !wellFormedSecondByte(this.pending, this.cp, b)) return null;
    const cp = (this.cp << 6) | (b & 0x3f);
    const left = this.pending - 1;
    return left === 0 ? this.#char(cp) : this.#partial(left, cp, 0, false);
  }

  // Part of a character: begun only if the pattern takes one of the code points it may become.
  #partial(pending: number, cp: number, floor: number, second: boolean): RegexTerm | null {
    const span = 2 ** (6 * pending);
    const lo = Math.max(cp * span, floor);
    const hi = Math.min(cp * span + span - 1, MAX_CODE_POINT);
    if (!this.node.pattern.allowsRange(this.re, lo, hi)) return null;
    return new RegexTerm(this.node, this.re, pending, cp, second);
  }

  #char(cp: number): RegexTerm | null {
    const { pattern } = this.node;
    const re = pattern.step(this.re, cp);
    // A character after which the pattern cannot end leads nowhere.
    if (re < 0 || !pattern.live(re, 0, Infinity)) return null;
    return new RegexTerm(this.node, re, 0, 0, false);
  }
}

/** A regex node's state before its first byte. */
export function startRegexText(node: RegexNode): RegexTerm {
  return new RegexTerm(node, node.pattern.start, 0, 0, false);
}

// The byte-level states of the grammar's terminals (literals, JSON strings, JSON numbers, free
// text; numbers in _number_terminal.ts). Each state is immutable: `feed` returns a new one, so the
// matcher can try a byte on many threads and keep the states it shares.
import type { LitNode, StringNode, TextNode } from "./grammar.ts";
import { wellFormedSecondByte } from "./_utf8.ts";

// The number terminal lives in its own file; these keep it importable from here.
export {
  MAX_FRACTION_DIGITS,
  MAX_INT_DIGITS,
  numberCanStart,
  type NumberStep,
  numberStep,
  NumTerm,
  startNumber,
} from "./_number_terminal.ts";

/** A terminal's position. */
export interface Terminal {
  /** Equal keys mean equal states (for deduplication and the mask cache). */
  readonly key: string;
  /** True when the terminal may end before the next byte. */
  readonly canEnd: boolean;
  /** True when no byte can follow: the terminal must end. */
  readonly exhausted: boolean;
  /** Which option a literal matched (its parent may branch on it); 0 otherwise. */
  readonly tag: number;
  /** The state after `byte`, or null when the terminal cannot take it. */
  feed(byte: number): Terminal | null;
}

export class LitTerm implements Terminal {
  readonly key: string;
  readonly canEnd: boolean;
  readonly exhausted: boolean;
  readonly tag: number;
  constructor(readonly node: LitNode, readonly alive: readonly number[], readonly pos: number) {
    this.key = `L${node.id}:${pos}:${alive.join(",")}`;
    const done = alive.find((i) => node.options[i].length === pos);
    this.canEnd = done !== undefined;
    this.tag = done === undefined ? 0 : node.tags[done] ?? done;
    this.exhausted = alive.every((i) => node.options[i].length === pos);
  }

  feed(byte: number): Terminal | null {
    const { options } = this.node;
    const pos = this.pos;
    const next = this.alive.filter((i) => options[i].length > pos && options[i][pos] === byte);
    return next.length === 0 ? null : new LitTerm(this.node, next, pos + 1);
  }
}

// JSON string phases.
const OPEN = 0, BODY = 1, ESCAPE = 2, HEX = 3, UTF8 = 7, CLOSED = 8, UTF8_SECOND = 9;
const SIMPLE_ESCAPES: Record<number, number> = {
  0x22: 0x22,
  0x5c: 0x5c,
  0x2f: 0x2f,
  0x62: 8,
  0x66: 12,
  0x6e: 10,
  0x72: 13,
  0x74: 9,
};

/**
 * Inside a JSON string: counts characters (code points, escapes as one), checks UTF-8 and escapes,
 * and runs the pattern, if any, over the decoded characters. `\u` escapes of surrogates are not
 * produced (a lone surrogate is not valid text).
 */
export class StrTerm implements Terminal {
  readonly tag = 0;
  #key: string | undefined;
  constructor(
    readonly node: StringNode,
    readonly phase: number,
    readonly chars: number,
    /** UTF-8 continuation bytes still expected, or hex digits read in a `\u` escape. */
    readonly pending: number,
    /** The code point being assembled (UTF-8 or `\u`). */
    readonly cp: number,
    /** Pattern state, or -1 without a pattern. */
    readonly re: number,
  ) {}

  get key(): string {
    return this.#key ??= `S${this.node.id}:${this.phase}:${this.chars}:${this.pending}:` +
      `${this.node.pattern || this.phase === UTF8_SECOND ? `${this.cp}:${this.re}` : ""}`;
  }

  get canEnd(): boolean {
    return this.phase === CLOSED;
  }

  get exhausted(): boolean {
    return this.phase === CLOSED;
  }

  /** True in the body with nothing half read: a token of plain characters may follow. */
  get plain(): boolean {
    return this.phase === BODY && this.node.pattern === null;
  }

  /** Characters the string may still take. */
  get room(): number {
    return this.node.maxLength - this.chars;
  }

  feed(b: number): Terminal | null {
    const { node } = this;
    switch (this.phase) {
      case OPEN:
        return b === 0x22 ? this.#to(BODY, 0, 0) : null;
      case BODY:
        if (b === 0x22) {
          if (this.chars < node.minLength) return null;
          if (node.pattern !== null && !node.pattern.accepting(this.re)) return null;
          return this.#to(CLOSED, 0, 0);
        }
        if (this.chars >= node.maxLength || b < 0x20) return null;
        if (b === 0x5c) {
          // Every escape ends in a character of 0-cfff or e000-ffff (see HEX below).
          const p = node.pattern;
          const [need, room] = this.#after();
          const open = p === null || p.allowsRange(this.re, 0, 0xcfff, need, room) ||
            p.allowsRange(this.re, 0xe000, 0xffff, need, room);
          return open ? this.#to(ESCAPE, 0, 0) : null;
        }
        if (b < 0x80) return this.#char(b);
        if (b >= 0xc2 && b <= 0xdf) return this.#partial(UTF8_SECOND, 1, b & 0x1f, 6, 0x80);
        if (b >= 0xe0 && b <= 0xef) return this.#partial(UTF8_SECOND, 2, b & 0x0f, 12, 0x800);
        if (b >= 0xf0 && b <= 0xf4) return this.#partial(UTF8_SECOND, 3, b & 0x07, 18, 0x10000);
        return null;
      case UTF8_SECOND:
      case UTF8: {
        if (b < 0x80 || b > 0xbf) return null;
        if (this.phase === UTF8_SECOND && !wellFormedSecondByte(this.pending, this.cp, b)) {
          return null;
        }
        const cp = (this.cp << 6) | (b & 0x3f);
        const left = this.pending - 1;
        return left === 0 ? this.#char(cp) : this.#partial(UTF8, left, cp, 6 * left);
      }
      case ESCAPE:
        if (b === 0x75) return this.#partial(HEX, 0, 0, 16);
        return b in SIMPLE_ESCAPES ? this.#char(SIMPLE_ESCAPES[b]) : null;
      case HEX: {
        const h = hexValue(b);
        // No d800-dfff: a surrogate escape would need its pair, and alone it is not text.
        if (h < 0 || (this.pending === 0 && h === 0xd)) return null;
        const cp = this.cp * 16 + h;
        const read = this.pending + 1;
        return read === 4 ? this.#char(cp) : this.#partial(HEX, read, cp, 4 * (4 - read));
      }
      default:
        return null;
    }
  }

  #to(phase: number, pending: number, cp: number): StrTerm {
    return new StrTerm(this.node, phase, this.chars, pending, cp, this.re);
  }

  // Part of a character: code points `cp << shift` to `((cp + 1) << shift) - 1` may still come
  // of it; with a pattern, only if it takes one of them.
  #partial(phase: number, pending: number, cp: number, shift: number, floor = 0): StrTerm | null {
    const pattern = this.node.pattern;
    if (pattern !== null) {
      const lo = cp * 2 ** shift;
      const hi = Math.min(lo + 2 ** shift - 1, 0x10ffff);
      const [need, room] = this.#after();
      if (!pattern.allowsRange(this.re, Math.max(lo, floor), hi, need, room)) return null;
    }
    return this.#to(phase, pending, cp);
  }

  // How many more characters the string needs, and may take, after the next one.
  #after(): [number, number] {
    return [
      Math.max(this.node.minLength - this.chars - 1, 0),
      this.node.maxLength - this.chars - 1,
    ];
  }

  #char(cp: number): StrTerm | null {
    let re = this.re;
    const pattern = this.node.pattern;
    if (pattern !== null) {
      re = pattern.step(re, cp);
      // A character after which the pattern cannot end within the length bounds leads nowhere.
      if (re < 0 || !pattern.live(re, ...this.#after())) return null;
    }
    // Past minLength without a maxLength the exact count no longer matters: states merge.
    const chars = this.node.maxLength === Infinity && this.chars >= this.node.minLength
      ? this.chars
      : this.chars + 1;
    return new StrTerm(this.node, BODY, chars, 0, 0, re);
  }

  /** The state after `count` plain characters (the caller checked they fit). */
  afterPlain(count: number): StrTerm {
    const chars = this.node.maxLength === Infinity
      ? Math.min(this.chars + count, Math.max(this.chars, this.node.minLength))
      : this.chars + count;
    return new StrTerm(this.node, BODY, chars, 0, 0, -1);
  }
}

/** A string's state before its opening quote. */
export function startString(node: StringNode): StrTerm {
  return new StrTerm(node, OPEN, 0, 0, 0, node.pattern?.start ?? -1);
}

function hexValue(b: number): number {
  if (b >= 0x30 && b <= 0x39) return b - 0x30;
  if (b >= 0x61 && b <= 0x66) return b - 0x61 + 10;
  if (b >= 0x41 && b <= 0x46) return b - 0x41 + 10;
  return -1;
}

/** Free text that watches for its trigger and forbidden strings (KMP over bytes, one per string). */
export class TextTerm implements Terminal {
  readonly tag = 0;
  readonly key: string;
  /** No watched string is partly matched. */
  readonly idle: boolean;
  /**
   * @param matched bytes matched so far of each of the node's watched strings (empty: none yet)
   * @param done the trigger has just been read (`untilTrigger`)
   * @param fresh no byte read yet
   */
  constructor(
    readonly node: TextNode,
    readonly matched: readonly number[],
    readonly done: boolean,
    readonly fresh = false,
  ) {
    this.idle = matched.every((k) => k === 0);
    this.key = `T${node.id}:${this.idle ? "" : matched.join(",")}:${done}:${fresh}`;
  }

  get canEnd(): boolean {
    return this.done || !this.node.untilTrigger;
  }

  get exhausted(): boolean {
    return this.done;
  }

  feed(b: number): Terminal | null {
    if (this.done) return null;
    if (this.fresh && this.node.notFirst.includes(b)) return null;
    const { watched, hasTrigger, untilTrigger, starts } = this.node;
    // Nothing under way, and no watched string starts here (most bytes of most text).
    if (this.idle && starts[b] === 0) return this.fresh ? new TextTerm(this.node, [], false) : this;
    const matched = watched.map((w, i) => {
      let k = this.matched[i] ?? 0;
      while (k > 0 && w[k] !== b) k = failure(w, k);
      return w[k] === b ? k + 1 : k;
    });
    const whole = watched.findIndex((w, i) => matched[i] === w.length);
    if (whole === -1) return new TextTerm(this.node, matched, false);
    // The trigger (always first when there is one) ends the text or kills it; the others kill it.
    return whole === 0 && hasTrigger && untilTrigger
      ? new TextTerm(this.node, matched, true)
      : null;
  }
}

// KMP fallback for a mismatch after k matched bytes: the longest proper border of t[0..k).
function failure(t: Uint8Array, k: number): number {
  for (let len = k - 1; len > 0; len--) {
    let ok = true;
    for (let i = 0; i < len && ok; i++) ok = t[i] === t[k - len + i];
    if (ok) return len;
  }
  return 0;
}

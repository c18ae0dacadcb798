// The byte-level states of the grammar's terminals (literals, JSON strings, JSON numbers, free
// text). Each state is immutable: `feed` returns a new one, so the matcher can try a byte on many
// threads and keep the states it shares.
import type { LitNode, NumberNode, StringNode, TextNode } from "./grammar.ts";
import { wellFormedSecondByte } from "./_utf8.ts";

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

/** Most digits before and after the point (15 keeps integers exact in a double). */
export const MAX_INT_DIGITS = 15;
/** Most digits after the point. */
export const MAX_FRACTION_DIGITS = 6;
const MAX_EXPONENT_DIGITS = 2;

// Number phases.
const N_START = 0, N_MINUS = 1, N_ZERO = 2, N_INT = 3, N_DOT = 4, N_FRAC = 5, N_E = 6;
const N_ESIGN = 7, N_EXP = 8;

/**
 * Inside a JSON number. Digits are capped (see the constants) so a number always ends; with
 * bounds, exponents are left out and each digit is allowed only if some completion of the text so
 * far lies within them.
 */
export class NumTerm implements Terminal {
  readonly tag = 0;
  readonly exhausted = false;
  readonly key: string;
  constructor(
    readonly node: NumberNode,
    readonly text: string,
    readonly phase: number,
    readonly digits: number,
  ) {
    this.key = checked(node)
      ? `N${node.id}:${text}:${phase}`
      : `N${node.id}:${phase}:${digits}:${text.startsWith("-")}`;
  }

  get canEnd(): boolean {
    const p = this.phase;
    if (p !== N_ZERO && p !== N_INT && p !== N_FRAC && p !== N_EXP) return false;
    const { node, text } = this;
    if (node.step !== null) return onStep(node.step, millionthsOf(text), millionthsOf(text));
    return !bounded(node) || withinBounds(node, Number(text));
  }

  feed(b: number): Terminal | null {
    const { node, phase } = this;
    const digit = b >= 0x30 && b <= 0x39;
    const exponent = (b === 0x65 || b === 0x45) && !node.integer && !checked(node);
    const point = b === 0x2e && !node.integer;
    switch (phase) {
      case N_START:
      case N_MINUS:
        if (phase === N_START && b === 0x2d) return this.#to(N_MINUS, 0, b);
        if (b === 0x30) return this.#to(N_ZERO, 1, b);
        return digit ? this.#to(N_INT, 1, b) : null;
      case N_ZERO:
        return point ? this.#to(N_DOT, 0, b) : exponent ? this.#to(N_E, 0, b) : null;
      case N_INT:
        if (digit) return this.digits < MAX_INT_DIGITS ? this.#to(N_INT, this.digits + 1, b) : null;
        return point ? this.#to(N_DOT, 0, b) : exponent ? this.#to(N_E, 0, b) : null;
      case N_DOT:
        return digit ? this.#to(N_FRAC, 1, b) : null;
      case N_FRAC:
        if (digit) {
          return this.digits < MAX_FRACTION_DIGITS ? this.#to(N_FRAC, this.digits + 1, b) : null;
        }
        return exponent ? this.#to(N_E, 0, b) : null;
      case N_E:
      case N_ESIGN:
        if (phase === N_E && (b === 0x2b || b === 0x2d)) return this.#to(N_ESIGN, 0, b);
        return digit ? this.#to(N_EXP, 1, b) : null;
      case N_EXP:
        return digit && this.digits < MAX_EXPONENT_DIGITS
          ? this.#to(N_EXP, this.digits + 1, b)
          : null;
      default:
        return null;
    }
  }

  #to(phase: number, digits: number, b: number): NumTerm | null {
    const text = this.text + String.fromCharCode(b);
    if (checked(this.node) && !reachable(this.node, text, phase, digits)) return null;
    return new NumTerm(this.node, text, phase, digits);
  }
}

/** A number's state before its first byte. */
export function startNumber(node: NumberNode): NumTerm {
  return new NumTerm(node, "", N_START, 0);
}

/** True when some number within the node's bounds can be written (its digits are capped). */
export function numberCanStart(node: NumberNode): boolean {
  // A first digit is taken only when some completion of it lies within the bounds.
  const start = startNumber(node);
  return [start, start.feed(0x2d)].some((t) => {
    for (let digit = 0x30; digit <= 0x39; digit++) if (t?.feed(digit)) return true;
    return false;
  });
}

// Bounded or stepped numbers check each digit against what can follow, so they have no exponent.
function checked(node: NumberNode): boolean {
  return node.step !== null || bounded(node);
}

function bounded(node: NumberNode): boolean {
  return node.minimum !== -Infinity || node.maximum !== Infinity;
}

function withinBounds(node: NumberNode, v: number): boolean {
  const { minimum, maximum } = node;
  return (node.exclusiveMinimum ? v > minimum : v >= minimum) &&
    (node.exclusiveMaximum ? v < maximum : v <= maximum);
}

// Can some number that starts with `text` lie within the node's bounds? The completions of a
// prefix form a few intervals of magnitudes: [p, p+1) for the integer part p (stop now, or add a
// fraction), [p·10^j, (p+1)·10^j) for j more integer digits, [x, x+10^-k) for a fraction of k
// digits (a point once no digit may follow). A minus sign mirrors them.
function reachable(node: NumberNode, text: string, phase: number, digits: number): boolean {
  if (node.step !== null) return reachableStep(node.step, text, phase, digits);
  const negative = text.startsWith("-");
  const body = negative ? text.slice(1) : text;
  // [lo, hi) magnitudes; hi === lo means the single value lo.
  const spans: [number, number][] = [];
  if (body === "") {
    spans.push([0, Infinity]);
  } else if (phase === N_ZERO || phase === N_INT) {
    const p = Number(body);
    spans.push(node.integer ? [p, p] : [p, p + 1]);
    if (phase === N_INT) {
      // (Integer nodes have whole bounds, so these intersect them only where an integer lies.)
      for (let j = 1; j <= MAX_INT_DIGITS - digits; j++) {
        const scale = 10 ** j;
        spans.push([p * scale, (p + 1) * scale]);
      }
    }
  } else {
    const x = Number(body.endsWith(".") ? body.slice(0, -1) : body);
    spans.push([x, digits >= MAX_FRACTION_DIGITS ? x : x + 10 ** -digits]);
  }
  return spans.some(([lo, hi]) => {
    const point = lo === hi;
    // Mirrored, the open end moves to the bottom.
    const [a, b, openA, openB] = negative ? [-hi, -lo, !point, false] : [lo, hi, false, !point];
    const low = Math.max(a, node.minimum);
    const high = Math.min(b, node.maximum);
    if (low < high) return true;
    if (low > high) return false;
    if ((low === a && openA) || (low === b && openB)) return false;
    return withinBounds(node, low);
  });
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

/**
 * `multipleOf` in exact arithmetic. Numbers are written with at most {@link MAX_FRACTION_DIGITS}
 * decimals, so every value is a whole number of millionths: `unit` is the least number of them
 * that is a multiple of the step (and of a whole one for integers), `min` / `max` the bounds
 * rounded inward to millionths (null: none).
 */
export interface NumberStep {
  readonly unit: bigint;
  readonly min: bigint | null;
  readonly max: bigint | null;
}

const SCALE = 10n ** BigInt(MAX_FRACTION_DIGITS);

/** The exact form of `multipleOf` (a finite number > 0) and the bounds it goes with. */
export function numberStep(
  multipleOf: number,
  bounds: Omit<NumberNode, "kind" | "id" | "step">,
): NumberStep {
  // multipleOf = digits·10^-decimals; a value of u millionths is a multiple of it when
  // u·10^(decimals-6) / digits is whole.
  const { digits, decimals } = decimal(multipleOf);
  const shift = decimals - MAX_FRACTION_DIGITS;
  let unit = shift <= 0
    ? digits * 10n ** BigInt(-shift)
    : digits / gcd(digits, 10n ** BigInt(shift));
  if (bounds.integer) unit = unit / gcd(unit, SCALE) * SCALE;
  const bound = (v: number, exclusive: boolean, up: boolean): bigint | null => {
    if (!Number.isFinite(v)) return null;
    const { digits, decimals } = decimal(Math.abs(v));
    const signed = v < 0 ? -digits : digits;
    const shift = decimals - MAX_FRACTION_DIGITS;
    if (shift <= 0) {
      const exact = signed * 10n ** BigInt(-shift);
      return exclusive ? exact + (up ? 1n : -1n) : exact;
    }
    // More decimals than a value can have: the nearest millionth inside the bound.
    const d = 10n ** BigInt(shift);
    const floor = signed / d - (signed < 0n && signed % d !== 0n ? 1n : 0n);
    return up ? floor + 1n : floor;
  };
  return {
    unit,
    min: bound(bounds.minimum, bounds.exclusiveMinimum, true),
    max: bound(bounds.maximum, bounds.exclusiveMaximum, false),
  };
}

// A finite number >= 0 as digits·10^-decimals, from its shortest decimal form.
function decimal(v: number): { digits: bigint; decimals: number } {
  const [mantissa, exponent = "0"] = String(v).split("e");
  const [whole, fraction = ""] = mantissa.split(".");
  const decimals = fraction.length - Number(exponent);
  const digits = BigInt(whole + fraction);
  return decimals >= 0
    ? { digits, decimals }
    : { digits: digits * 10n ** BigInt(-decimals), decimals: 0 };
}

function gcd(a: bigint, b: bigint): bigint {
  while (b !== 0n) [a, b] = [b, a % b];
  return a;
}

// A number's text (a prefix of one, point included) in millionths.
function millionthsOf(text: string): bigint {
  const negative = text.startsWith("-");
  const [whole, fraction = ""] = (negative ? text.slice(1) : text).split(".");
  const magnitude = BigInt(whole || "0") * SCALE +
    BigInt(fraction.padEnd(MAX_FRACTION_DIGITS, "0"));
  return negative ? -magnitude : magnitude;
}

// Does a multiple of the step within its bounds lie in [lo, hi] (millionths)?
function onStep(step: NumberStep, lo: bigint, hi: bigint): boolean {
  if (step.min !== null && lo < step.min) lo = step.min;
  if (step.max !== null && hi > step.max) hi = step.max;
  if (lo > hi) return false;
  // The first multiple at or above lo (BigInt division rounds toward zero).
  const q = lo / step.unit;
  const first = q * step.unit >= lo ? q * step.unit : (q + 1n) * step.unit;
  return first <= hi;
}

// reachable() for stepped numbers: the same spans of completions, in millionths (closed).
function reachableStep(step: NumberStep, text: string, phase: number, digits: number): boolean {
  const negative = text.startsWith("-");
  const body = negative ? text.slice(1) : text;
  const spans: [bigint, bigint][] = [];
  if (body === "") {
    spans.push([0n, 10n ** BigInt(MAX_INT_DIGITS) * SCALE - 1n]);
  } else {
    const x = millionthsOf(body);
    if (phase === N_ZERO || phase === N_INT) {
      spans.push([x, x + SCALE - 1n]);
      if (phase === N_INT) {
        for (let j = 1n; j <= BigInt(MAX_INT_DIGITS - digits); j++) {
          spans.push([x * 10n ** j, (x + SCALE) * 10n ** j - 1n]);
        }
      }
    } else {
      spans.push([x, x + 10n ** BigInt(MAX_FRACTION_DIGITS - digits) - 1n]);
    }
  }
  return spans.some(([lo, hi]) => negative ? onStep(step, -hi, -lo) : onStep(step, lo, hi));
}

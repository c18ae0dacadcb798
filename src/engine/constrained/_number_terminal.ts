// JSON numbers' terminal: digits capped so a number always ends, and with bounds or `multipleOf`
// each digit checked against what can still follow it (exact arithmetic for steps).
import type { NumberNode } from "./grammar.ts";
import type { Terminal } from "./_terminals.ts";

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

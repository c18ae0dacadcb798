/**
 * The automaton behind a pattern (regex.ts parses it): a Thompson NFA whose state sets become DFA
 * states on demand, and the product of two (a `pattern` with a `format`). States from which no
 * match can follow are dead, and every step is checked for a way to end: constrained decoding must
 * never take a character after which the string cannot end within its length bounds.
 *
 * @module
 */

import { ValidationError } from "../../core/errors.ts";
import { charHas, charIntersection, charMeets, type CharSet, TEXT_CHARS } from "./_char_sets.ts";
import { type NfaLengths, nfaLengths } from "./_nfa_lengths.ts";

/** A deterministic automaton over code points; states are numbers, -1 is dead. */
export interface CharMatcher {
  readonly start: number;
  /** The state after `codePoint`; -1 when no match can follow it. */
  step(state: number, codePoint: number): number;
  accepting(state: number): boolean;
  /**
   * True when some code point in [lo, hi] may come next, after which `need` to `room` more
   * characters can end a match: a UTF-8 sequence or `\u` escape is begun only if it can end in a
   * character the pattern takes, and the string can end after it.
   */
  allowsRange(state: number, lo: number, hi: number, need?: number, room?: number): boolean;
  /** True when `need` to `room` more characters can end a match from `state`. */
  live(state: number, need: number, room: number): boolean;
  /** Where the state's moves change: from each of these code points to the next they are one. */
  cuts(state: number): readonly number[];
}

export type Ast =
  | { t: "char"; set: CharSet }
  | { t: "cat"; items: Ast[] }
  | { t: "alt"; options: Ast[] }
  | { t: "rep"; item: Ast; min: number; max: number };

/** Most NFA states a pattern may expand to (`{n,m}` copies its item). */
const MAX_STATES = 20_000;

/**
 * Most work one pattern's DFA may do (NFA states read and kept, over every state it builds and
 * move it computes, each once): it bounds the DFA's memory (about 10 MB) and the time it may
 * hold the engine's thread (under a second in all); every pattern of our tests needs under 20%.
 */
const MAX_WORK = 1_000_000;

// The index of the stretch of `cuts` (sorted, from 0) that holds `cp`.
function stretchOf(cuts: readonly number[], cp: number): number {
  let lo = 0, hi = cuts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1;
    if (cuts[mid] <= cp) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

// Thompson NFA: states that read a set of code points, or up to two epsilon edges, or the match.
interface NfaState {
  set: CharSet | null;
  out: number[];
}

export class Nfa {
  states: NfaState[] = [];
  constructor(readonly param: string) {}

  add(set: CharSet | null): number {
    if (this.states.length >= MAX_STATES) {
      throw new ValidationError(`the pattern is too large (over ${MAX_STATES} automaton states)`, {
        param: this.param,
      });
    }
    this.states.push({ set, out: [] });
    return this.states.length - 1;
  }

  // Builds `ast` from state `from`; returns the state where it ends.
  build(ast: Ast, from: number): number {
    switch (ast.t) {
      case "char": {
        // Text holds no lone surrogate: a class of only those reads nothing.
        const s = this.add(charIntersection(ast.set, TEXT_CHARS));
        this.states[from].out.push(s);
        const end = this.add(null);
        this.states[s].out.push(end);
        return end;
      }
      case "cat":
        return ast.items.reduce((at, item) => this.build(item, at), from);
      case "alt": {
        const end = this.add(null);
        for (const o of ast.options) this.states[this.build(o, from)].out.push(end);
        return end;
      }
      case "rep": {
        let at = from;
        for (let i = 0; i < ast.min; i++) at = this.build(ast.item, at);
        if (ast.max === Infinity) {
          const loop = this.add(null);
          this.states[at].out.push(loop);
          this.states[this.build(ast.item, loop)].out.push(loop);
          return loop;
        }
        const end = this.add(null);
        this.states[at].out.push(end);
        for (let i = ast.min; i < ast.max; i++) {
          at = this.build(ast.item, at);
          this.states[at].out.push(end);
        }
        return end;
      }
    }
  }
}

export class Dfa implements CharMatcher {
  readonly start: number;
  readonly #lengths: NfaLengths;
  #sets: number[][] = [];
  #ids = new Map<string, number>();
  /** Per DFA state, the next state by stretch of its cuts (undefined: not computed yet). */
  #moves: number[][] = [];
  /** NFA states visited building this automaton so far, against {@link MAX_WORK}. */
  #work = 0;
  #accept: boolean[] = [];
  /** Per DFA state: the fewest and most characters to a match, over its NFA states. */
  #min: number[] = [];
  #max: number[] = [];
  #cuts: (number[] | undefined)[] = [];

  constructor(readonly nfa: Nfa, begin: number, readonly match: number) {
    this.#lengths = nfaLengths(nfa.states, match);
    this.start = this.#intern(this.#closure([begin]));
  }

  step(state: number, cp: number): number {
    if (state < 0) return -1;
    // Moves are kept per stretch of code points between two cuts, where every NFA state of the
    // set reads alike: one closure per stretch, not per code point (`(.?){4000}` computed a
    // 4000-state closure for every character a vocabulary walk tried).
    const cuts = this.cuts(state);
    const stretch = stretchOf(cuts, cp);
    const moves = this.#moves[state];
    const known = moves[stretch];
    if (known !== undefined) return known;
    const next: number[] = [];
    for (const s of this.#sets[state]) {
      const st = this.nfa.states[s];
      if (st.set !== null && charHas(st.set, cp)) next.push(...st.out);
    }
    const set = this.#closure(next);
    this.#spend(next.length + set.length);
    const id = set.length === 0 ? -1 : this.#intern(set);
    moves[stretch] = id;
    return id;
  }

  accepting(state: number): boolean {
    return state >= 0 && this.#accept[state];
  }

  allowsRange(state: number, lo: number, hi: number, need = 0, room = Infinity): boolean {
    if (state < 0) return false;
    const { min, max } = this.#lengths;
    // Reading q's character leaves min[q] - 1 to max[q] - 1 more to the match.
    return this.#sets[state].some((q) => {
      const set = this.nfa.states[q].set;
      return set !== null && min[q] - 1 <= room && max[q] - 1 >= need && charMeets(set, lo, hi);
    });
  }

  live(state: number, need: number, room: number): boolean {
    const min = state < 0 ? Infinity : this.#min[state];
    return min !== Infinity && min <= room && this.#max[state] >= need;
  }

  cuts(state: number): readonly number[] {
    if (state < 0) return [0];
    let cuts = this.#cuts[state];
    if (cuts === undefined) {
      const at = new Set([0]);
      for (const q of this.#sets[state]) {
        const set = this.nfa.states[q].set ?? [];
        for (let i = 0; i < set.length; i += 2) at.add(set[i]).add(set[i + 1] + 1);
      }
      cuts = this.#cuts[state] = [...at].sort((a, b) => a - b);
    }
    return cuts;
  }

  // A pattern whose automaton keeps growing (`.*[a-m][a-m ]{3000}` has a state for every mix of
  // its last 3000 characters) would take memory and this thread's time without end: past the
  // budget it is refused, which fails the one request that follows it.
  #spend(work: number): void {
    this.#work += work;
    if (this.#work > MAX_WORK) {
      throw new ValidationError(
        `the pattern is too complex to follow (its automaton grew past ${MAX_WORK} NFA ` +
          "states in all); use a simpler pattern, e.g. with fewer nested or counted repetitions",
        { param: this.nfa.param },
      );
    }
  }

  #closure(seeds: number[]): number[] {
    const seen = new Set<number>();
    const stack = [...seeds];
    while (stack.length > 0) {
      const s = stack.pop()!;
      if (seen.has(s)) continue;
      seen.add(s);
      if (this.nfa.states[s].set === null) stack.push(...this.nfa.states[s].out);
    }
    // Only states that read and the match tell sets apart; one that cannot reach the match is
    // left out, so a set with none left is dead.
    const kept = [...seen].filter((s) =>
      (this.nfa.states[s].set !== null || s === this.match) && this.#lengths.min[s] !== Infinity
    );
    return kept.sort((a, b) => a - b);
  }

  #intern(set: number[]): number {
    const key = set.join(",");
    let id = this.#ids.get(key);
    if (id === undefined) {
      this.#spend(set.length); // before anything is kept, so a refusal leaves the DFA whole
      id = this.#sets.length;
      this.#ids.set(key, id);
      this.#sets.push(set);
      this.#moves.push([]);
      this.#accept.push(set.includes(this.match));
      const { min, max } = this.#lengths;
      this.#min.push(set.reduce((m, q) => Math.min(m, min[q]), Infinity));
      this.#max.push(set.reduce((m, q) => Math.max(m, max[q]), -Infinity));
    }
    return id;
  }
}

/** Product states a liveness search may visit before it gives up and assumes a way on. */
const MAX_SEARCH = 2048;

/**
 * A matcher that accepts what both `a` and `b` accept (a `pattern` together with a `format`).
 * Whether a product state can still end is searched for (breadth first, one code point per
 * stretch where both automata's moves are the same), within MAX_SEARCH states.
 */
export function intersectMatchers(a: CharMatcher, b: CharMatcher): CharMatcher {
  const pairs: [number, number][] = [];
  const ids = new Map<string, number>();
  const intern = (x: number, y: number): number => {
    if (x < 0 || y < 0) return -1;
    const key = `${x},${y}`;
    let id = ids.get(key);
    if (id === undefined) {
      id = pairs.length;
      pairs.push([x, y]);
      ids.set(key, id);
    }
    return id;
  };
  const step = (s: number, cp: number) =>
    s < 0 ? -1 : intern(a.step(pairs[s][0], cp), b.step(pairs[s][1], cp));
  const accepting = (s: number) => s >= 0 && a.accepting(pairs[s][0]) && b.accepting(pairs[s][1]);
  const cuts = (s: number): number[] => {
    const [x, y] = pairs[s];
    return [...new Set([...a.cuts(x), ...b.cuts(y)])].sort((p, q) => p - q);
  };
  // The fewest characters, at least `need`, that end a match from s (-1: not found in time).
  const shortest = new Map<string, number>();
  const fewest = (s: number, need: number): number => {
    const key = `${s}:${need}`;
    let known = shortest.get(key);
    if (known !== undefined) return known;
    known = Infinity;
    const seen = new Set([key]);
    let layer: [number, number][] = [[s, need]];
    search: for (let depth = 0; layer.length > 0; depth++) {
      const next: [number, number][] = [];
      for (const [p, k] of layer) {
        if (k === 0 && accepting(p)) {
          known = depth;
          break search;
        }
        for (const cp of cuts(p)) {
          const q = step(p, cp);
          const node = `${q}:${Math.max(k - 1, 0)}`;
          if (q < 0 || seen.has(node)) continue;
          if (seen.size >= MAX_SEARCH) {
            known = -1;
            break search;
          }
          seen.add(node);
          next.push([q, Math.max(k - 1, 0)]);
        }
      }
      layer = next;
    }
    shortest.set(key, known);
    return known;
  };
  const live = (s: number, need: number, room: number): boolean => {
    if (s < 0 || !a.live(pairs[s][0], need, room) || !b.live(pairs[s][1], need, room)) {
      return false;
    }
    const d = fewest(s, need);
    return d === -1 || (d !== Infinity && d <= room);
  };
  return {
    start: intern(a.start, b.start),
    step,
    accepting,
    live,
    cuts: (s) => s < 0 ? [0] : cuts(s),
    allowsRange(s, lo, hi, need = 0, room = Infinity) {
      if (s < 0) return false;
      const points = [lo, ...cuts(s).filter((c) => c > lo && c <= hi)];
      return points.some((cp) => live(step(s, cp), need, room));
    },
  };
}

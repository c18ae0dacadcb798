/**
 * JSON Schema `pattern` (and the regular languages behind `format`) as a character automaton for
 * constrained decoding: the pattern is parsed into a Thompson NFA whose state sets become DFA states
 * on demand.
 *
 * Supported: literals, escapes (`\d \w \s` and their negations, `\n \t \r \f \v`, `\xHH`,
 * `\uHHHH`, escaped punctuation), `.`, classes (`[a-z]`, `[^...]`), groups (`(...)`, `(?:...)`,
 * `(?<name>...)`), alternation, quantifiers (`* + ? {n} {n,} {n,m}`, lazy forms), `^` at the start
 * and `$` at the end of the pattern or of a top-level alternative (`^a$|^b$`). A pattern without
 * `^`/`$` matches anywhere in the string, as JSON Schema says.
 * Anything else (backreferences, lookaround, `\b`, `\p{...}`, anchors inside) is refused.
 *
 * @module
 */

import { ValidationError } from "../../core/errors.ts";

/** A deterministic automaton over code points; states are numbers, -1 is dead. */
export interface CharMatcher {
  readonly start: number;
  step(state: number, codePoint: number): number;
  accepting(state: number): boolean;
  /**
   * True when some code point in [lo, hi] may come next: a UTF-8 sequence or `\u` escape is
   * begun only if it can end in a character the pattern takes.
   */
  allowsRange(state: number, lo: number, hi: number): boolean;
}

type Pred = (cp: number) => boolean;
type Ast =
  | { t: "char"; pred: Pred }
  | { t: "cat"; items: Ast[] }
  | { t: "alt"; options: Ast[] }
  | { t: "rep"; item: Ast; min: number; max: number };

/** Most NFA states a pattern may expand to (`{n,m}` copies its item). */
const MAX_STATES = 20_000;

const isDigit: Pred = (c) => c >= 0x30 && c <= 0x39;
const isWord: Pred = (c) =>
  isDigit(c) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x5f;
const isSpace: Pred = (c) =>
  c === 0x20 || (c >= 0x09 && c <= 0x0d) || c === 0xa0 || c === 0x1680 ||
  (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x202f ||
  c === 0x205f || c === 0x3000 || c === 0xfeff;
const isLineEnd: Pred = (c) => c === 0x0a || c === 0x0d || c === 0x2028 || c === 0x2029;
const anyChar: Pred = () => true;

class Parser {
  pos = 0;
  /** Groups open at `pos`. */
  depth = 0;
  constructor(readonly src: string, readonly param: string) {}

  fail(what: string): never {
    throw new ValidationError(
      `pattern ${JSON.stringify(this.src)} uses ${what}, which constrained decoding does not ` +
        "support (supported: literals, classes, groups, alternation, quantifiers, ^ and $ at " +
        "the ends of the pattern or of a top-level alternative)",
      { param: this.param },
    );
  }

  peek(): string | undefined {
    return this.src[this.pos];
  }

  alternation(): Ast {
    const options = [this.concat()];
    while (this.peek() === "|") {
      this.pos++;
      options.push(this.concat());
    }
    return options.length === 1 ? options[0] : { t: "alt", options };
  }

  concat(): Ast {
    const items: Ast[] = [];
    for (let c = this.peek(); c !== undefined && c !== "|" && c !== ")"; c = this.peek()) {
      if (c === "^" || c === "$") {
        // `$` may end a top-level alternative (`^a$|^b$`); the caller takes it.
        const next = this.src[this.pos + 1];
        if (c === "$" && this.depth === 0 && (next === undefined || next === "|")) break;
        this.fail(`an anchor (${c}) inside the pattern`);
      }
      items.push(this.quantified(this.atom()));
    }
    return { t: "cat", items };
  }

  /** The top-level alternatives, each anchored at its start (`^`) and end (`$`) or not. */
  alternatives(): { ast: Ast; start: boolean; end: boolean }[] {
    const options = [];
    do {
      if (options.length > 0) this.pos++; // the `|`
      const start = this.peek() === "^";
      if (start) this.pos++;
      const ast = this.concat();
      const end = this.peek() === "$";
      if (end) this.pos++;
      options.push({ ast, start, end });
    } while (this.peek() === "|");
    return options;
  }

  quantified(item: Ast): Ast {
    for (;;) {
      const c = this.peek();
      let min: number, max: number;
      if (c === "*") [min, max] = [0, Infinity];
      else if (c === "+") [min, max] = [1, Infinity];
      else if (c === "?") [min, max] = [0, 1];
      else if (c === "{" && /^\{\d+(,\d*)?\}/.test(this.src.slice(this.pos))) {
        const m = /^\{(\d+)(,(\d*))?\}/.exec(this.src.slice(this.pos))!;
        min = Number(m[1]);
        max = m[2] === undefined ? min : m[3] === "" ? Infinity : Number(m[3]);
        this.pos += m[0].length - 1;
      } else return item;
      this.pos++;
      if (this.peek() === "?") this.pos++; // lazy: same language
      item = { t: "rep", item, min, max };
    }
  }

  atom(): Ast {
    const c = this.src[this.pos++];
    if (c === "(") {
      this.depth++;
      if (this.src.startsWith("?:", this.pos)) this.pos += 2;
      else if (/^\?<[A-Za-z_]\w*>/.test(this.src.slice(this.pos))) {
        this.pos = this.src.indexOf(">", this.pos) + 1;
      } else if (this.peek() === "?") this.fail("a lookaround or group flag");
      const inner = this.alternation();
      if (this.src[this.pos++] !== ")") this.fail("an unclosed group");
      this.depth--;
      return inner;
    }
    if (c === "[") return { t: "char", pred: this.charClass() };
    if (c === ".") return { t: "char", pred: (cp) => !isLineEnd(cp) };
    if (c === "\\") return { t: "char", pred: this.escape(false) };
    if (c === ")" || c === "*" || c === "+" || c === "?") {
      this.fail(`a misplaced '${c}'`);
    }
    const cp = c.codePointAt(0)!;
    if (cp > 0xffff) this.pos++;
    return { t: "char", pred: (x) => x === cp };
  }

  charClass(): Pred {
    const negate = this.peek() === "^";
    if (negate) this.pos++;
    const parts: Pred[] = [];
    let first = true;
    while (this.peek() !== "]" || first) {
      first = false;
      if (this.peek() === undefined) this.fail("an unclosed character class");
      const lo = this.classAtom();
      if (this.peek() === "-" && this.src[this.pos + 1] !== "]" && this.src[this.pos + 1]) {
        this.pos++;
        const hi = this.classAtom();
        if (typeof lo !== "number" || typeof hi !== "number") this.fail("a range of classes");
        parts.push((x) => x >= lo && x <= hi);
      } else {
        parts.push(typeof lo === "number" ? (x) => x === lo : lo);
      }
    }
    this.pos++;
    return negate ? (x) => !parts.some((p) => p(x)) : (x) => parts.some((p) => p(x));
  }

  classAtom(): number | Pred {
    const c = this.src[this.pos++];
    if (c === "\\") {
      const single = this.singleEscape();
      return single ?? this.escape(true);
    }
    const cp = c.codePointAt(0)!;
    if (cp > 0xffff) this.pos++;
    return cp;
  }

  // `\n`-like escapes that stand for one code point; undefined for class escapes (\d...).
  singleEscape(): number | undefined {
    const c = this.src[this.pos];
    const simple: Record<string, number> = { n: 10, r: 13, t: 9, f: 12, v: 11, "0": 0 };
    if (c in simple) {
      this.pos++;
      return simple[c];
    }
    const hex = c === "x" ? /^x([0-9a-fA-F]{2})/ : c === "u" ? /^u([0-9a-fA-F]{4})/ : null;
    if (hex) {
      const m = hex.exec(this.src.slice(this.pos));
      if (!m) this.fail(`a malformed \\${c} escape`);
      this.pos += m[0].length;
      return parseInt(m[1], 16);
    }
    if (/[dDwWsS]/.test(c)) return undefined;
    if (/[\^$\\.*+?()[\]{}|\/\-]/.test(c)) {
      this.pos++;
      return c.charCodeAt(0);
    }
    this.fail(`the escape \\${c}`);
  }

  // After a backslash: a class escape or a single code point.
  escape(inClass: boolean): Pred {
    if (!inClass) {
      const single = this.singleEscape();
      if (single !== undefined) return (x) => x === single;
    }
    const c = this.src[this.pos++];
    const preds: Record<string, Pred> = {
      d: isDigit,
      D: (x) => !isDigit(x),
      w: isWord,
      W: (x) => !isWord(x),
      s: isSpace,
      S: (x) => !isSpace(x),
    };
    return preds[c] ?? this.fail(`the escape \\${c}`);
  }
}

// Thompson NFA: states with one predicate edge, or up to two epsilon edges, or the match state.
interface NfaState {
  pred: Pred | null;
  out: number[];
}

class Nfa {
  states: NfaState[] = [];
  add(pred: Pred | null): number {
    if (this.states.length >= MAX_STATES) {
      throw new ValidationError(`the pattern is too large (over ${MAX_STATES} automaton states)`, {
        param: "response_format",
      });
    }
    this.states.push({ pred, out: [] });
    return this.states.length - 1;
  }

  // Builds `ast` from state `from`; returns the state where it ends.
  build(ast: Ast, from: number): number {
    switch (ast.t) {
      case "char": {
        const s = this.add(ast.pred);
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

class Dfa implements CharMatcher {
  readonly start: number;
  #sets: number[][] = [];
  #ids = new Map<string, number>();
  #moves: Map<number, number>[] = [];
  #accept: boolean[] = [];

  constructor(readonly nfa: Nfa, begin: number, readonly match: number) {
    this.start = this.#intern(this.#closure([begin]));
  }

  step(state: number, cp: number): number {
    if (state < 0) return -1;
    const moves = this.#moves[state];
    const known = moves.get(cp);
    if (known !== undefined) return known;
    const next: number[] = [];
    for (const s of this.#sets[state]) {
      const st = this.nfa.states[s];
      if (st.pred !== null && st.pred(cp)) next.push(...st.out);
    }
    const id = next.length === 0 ? -1 : this.#intern(this.#closure(next));
    if (moves.size < 4096) moves.set(cp, id);
    return id;
  }

  accepting(state: number): boolean {
    return state >= 0 && this.#accept[state];
  }

  #ranges = new Map<string, boolean>();

  allowsRange(state: number, lo: number, hi: number): boolean {
    if (state < 0) return false;
    const key = `${state}:${lo}:${hi}`;
    let known = this.#ranges.get(key);
    if (known === undefined) {
      const preds = this.#sets[state].map((s) => this.nfa.states[s].pred).filter((p) => p !== null);
      known = false;
      for (let cp = lo; cp <= hi && !known; cp++) known = preds.some((p) => p!(cp));
      this.#ranges.set(key, known);
    }
    return known;
  }

  /** True when the state takes `cp` (without computing where it leads). */
  takes(state: number, cp: number): boolean {
    return state >= 0 && this.#sets[state].some((s) => this.nfa.states[s].pred?.(cp) === true);
  }

  #closure(seeds: number[]): number[] {
    const seen = new Set<number>();
    const stack = [...seeds];
    while (stack.length > 0) {
      const s = stack.pop()!;
      if (seen.has(s)) continue;
      seen.add(s);
      if (this.nfa.states[s].pred === null) stack.push(...this.nfa.states[s].out);
    }
    // Only predicate states and the match state tell sets apart.
    const kept = [...seen].filter((s) => this.nfa.states[s].pred !== null || s === this.match);
    return kept.sort((a, b) => a - b);
  }

  #intern(set: number[]): number {
    const key = set.join(",");
    let id = this.#ids.get(key);
    if (id === undefined) {
      id = this.#sets.length;
      this.#ids.set(key, id);
      this.#sets.push(set);
      this.#moves.push(new Map());
      this.#accept.push(set.includes(this.match));
    }
    return id;
  }
}

/**
 * Compiles a JSON Schema `pattern` (ECMA-262 syntax, unanchored unless it says `^`/`$`).
 * Throws a `ValidationError` naming what is not supported; `param` is put on it.
 *
 * @example
 * ```ts
 * import { compilePattern } from "./regex.ts";
 * const m = compilePattern("^[a-c]+$");
 * const s = m.step(m.start, "b".codePointAt(0)!);
 * m.accepting(s); // true
 * ```
 */
export function compilePattern(source: string, param = "response_format"): CharMatcher {
  const parser = new Parser(source, param);
  const alternatives = parser.alternatives();
  if (parser.pos < source.length) parser.fail(`an unmatched '${source[parser.pos]}'`);
  const anything: Ast = { t: "rep", item: { t: "char", pred: anyChar }, min: 0, max: Infinity };
  const options = alternatives.map(({ ast, start, end }): Ast => ({
    t: "cat",
    items: [...(start ? [] : [anything]), ast, ...(end ? [] : [anything])],
  }));
  const nfa = new Nfa();
  const begin = nfa.add(null);
  const end = nfa.build(options.length === 1 ? options[0] : { t: "alt", options }, begin);
  return new Dfa(nfa, begin, end);
}

/**
 * A matcher that accepts what both `a` and `b` accept (a `pattern` together with a `format`).
 *
 * @example
 * ```ts
 * import { compilePattern, intersectMatchers } from "./regex.ts";
 * const both = intersectMatchers(compilePattern("^a+$"), compilePattern("^.{2}$"));
 * ```
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
  const ranges = new Map<string, boolean>();
  return {
    start: intern(a.start, b.start),
    step: (s, cp) => s < 0 ? -1 : intern(a.step(pairs[s][0], cp), b.step(pairs[s][1], cp)),
    accepting: (s) => s >= 0 && a.accepting(pairs[s][0]) && b.accepting(pairs[s][1]),
    allowsRange(s, lo, hi) {
      if (s < 0) return false;
      const key = `${s}:${lo}:${hi}`;
      let known = ranges.get(key);
      if (known === undefined) {
        const [x, y] = pairs[s];
        known = false;
        for (let cp = lo; cp <= hi && !known; cp++) {
          known = a.step(x, cp) >= 0 && b.step(y, cp) >= 0;
        }
        ranges.set(key, known);
      }
      return known;
    },
  };
}

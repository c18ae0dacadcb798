/**
 * JSON Schema `pattern` (and the regular languages behind `format`) as a character automaton for
 * constrained decoding: the pattern is parsed here into the automaton of _pattern_automaton.ts.
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
import {
  charComplement,
  charRange,
  type CharSet,
  charUnion,
  MAX_CODE_POINT,
} from "./_char_sets.ts";
import { type Ast, type CharMatcher, Dfa, Nfa } from "./_pattern_automaton.ts";

export { type CharMatcher, intersectMatchers } from "./_pattern_automaton.ts";

const one = (cp: number): CharSet => [cp, cp];
const DIGIT = charRange(0x30, 0x39);
const WORD = charUnion(DIGIT, charRange(0x41, 0x5a), charRange(0x61, 0x7a), one(0x5f));
const SPACE = charUnion(
  one(0x20),
  charRange(0x09, 0x0d),
  one(0xa0),
  one(0x1680),
  charRange(0x2000, 0x200a),
  charRange(0x2028, 0x2029),
  one(0x202f),
  one(0x205f),
  one(0x3000),
  one(0xfeff),
);
const LINE_END = charUnion(one(0x0a), one(0x0d), charRange(0x2028, 0x2029));
const ANY = charRange(0, MAX_CODE_POINT);

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

  // What RegExp refuses too, so no validator could check the output against it.
  invalid(what: string): never {
    throw new ValidationError(
      `pattern ${JSON.stringify(this.src)} is not a valid regular expression: ${what}`,
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
        // RegExp refuses it too ("numbers out of order in {} quantifier").
        if (min > max) this.invalid(`the numbers of ${m[0]} are out of order`);
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
    if (c === "[") return { t: "char", set: this.charClass() };
    if (c === ".") return { t: "char", set: charComplement(LINE_END) };
    if (c === "\\") return { t: "char", set: this.escape(false) };
    if (c === ")" || c === "*" || c === "+" || c === "?") {
      this.fail(`a misplaced '${c}'`);
    }
    return { t: "char", set: one(this.literal()) };
  }

  // The code point that starts at the previous position: a character beyond U+FFFF is two code
  // units in the source, and one character of text.
  literal(): number {
    const cp = this.src.codePointAt(this.pos - 1)!;
    if (cp > 0xffff) this.pos++;
    return cp;
  }

  charClass(): CharSet {
    const negate = this.peek() === "^";
    if (negate) this.pos++;
    const parts: CharSet[] = [];
    let first = true;
    while (this.peek() !== "]" || first) {
      first = false;
      if (this.peek() === undefined) this.fail("an unclosed character class");
      const lo = this.classAtom();
      if (this.peek() === "-" && this.src[this.pos + 1] !== "]" && this.src[this.pos + 1]) {
        this.pos++;
        const hi = this.classAtom();
        if (typeof lo !== "number" || typeof hi !== "number") this.fail("a range of classes");
        // RegExp refuses it too ("range out of order in character class").
        if (lo > hi) this.invalid("a character class range is out of order");
        parts.push(charRange(lo, hi));
      } else {
        parts.push(typeof lo === "number" ? one(lo) : lo);
      }
    }
    this.pos++;
    const set = charUnion(...parts);
    return negate ? charComplement(set) : set;
  }

  classAtom(): number | CharSet {
    const c = this.src[this.pos++];
    if (c === "\\") {
      const single = this.singleEscape();
      return single ?? this.escape(true);
    }
    return this.literal();
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
      const unit = parseInt(m[1], 16);
      // A surrogate pair written as two escapes is one character (as Ajv's \`u\` flag reads it).
      const low = /^\\u(d[c-f][0-9a-f]{2})/i.exec(this.src.slice(this.pos));
      if (unit >= 0xd800 && unit <= 0xdbff && low) {
        this.pos += low[0].length;
        return 0x10000 + ((unit - 0xd800) << 10) + (parseInt(low[1], 16) - 0xdc00);
      }
      return unit;
    }
    if (/[dDwWsS]/.test(c)) return undefined;
    if (/[\^$\\.*+?()[\]{}|\/\-]/.test(c)) {
      this.pos++;
      return c.charCodeAt(0);
    }
    this.fail(`the escape \\${c}`);
  }

  // After a backslash: a class escape or a single code point.
  escape(inClass: boolean): CharSet {
    if (!inClass) {
      const single = this.singleEscape();
      if (single !== undefined) return one(single);
    }
    const c = this.src[this.pos++];
    const sets: Record<string, CharSet> = {
      d: DIGIT,
      D: charComplement(DIGIT),
      w: WORD,
      W: charComplement(WORD),
      s: SPACE,
      S: charComplement(SPACE),
    };
    return sets[c] ?? this.fail(`the escape \\${c}`);
  }
}

/**
 * Compiles a JSON Schema `pattern` (ECMA-262 syntax, unanchored unless it says `^`/`$`). With
 * `whole`, the pattern must match the whole text, anchored or not (vLLM's `guided_regex`).
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
export function compilePattern(
  source: string,
  param = "response_format",
  options: { whole?: boolean } = {},
): CharMatcher {
  const parser = new Parser(source, param);
  const alternatives = parser.alternatives();
  if (parser.pos < source.length) parser.fail(`an unmatched '${source[parser.pos]}'`);
  const anything: Ast = { t: "rep", item: { t: "char", set: ANY }, min: 0, max: Infinity };
  const whole = options.whole === true;
  const branches = alternatives.map(({ ast, start, end }): Ast => ({
    t: "cat",
    items: [...(start || whole ? [] : [anything]), ast, ...(end || whole ? [] : [anything])],
  }));
  const nfa = new Nfa(param);
  const begin = nfa.add(null);
  const root: Ast = branches.length === 1 ? branches[0] : { t: "alt", options: branches };
  const end = nfa.build(root, begin);
  return new Dfa(nfa, begin, end);
}

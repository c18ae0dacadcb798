// JSON Schema strings to grammar: `minLength` / `maxLength`, and `pattern` and `format` as one
// character matcher.
import { type GrammarNode, stringNode } from "./grammar.ts";
import { type CharMatcher, compilePattern, intersectMatchers } from "./regex.ts";
import { FORMATS } from "./_schema_keywords.ts";
import type { Schema, SchemaScope } from "./_schema_scope.ts";

/** The grammar of the strings `s` allows. */
export function compileString(c: SchemaScope, s: Schema, path: string): GrammarNode {
  const min = c.count(s, "minLength", path) ?? 0;
  const max = c.count(s, "maxLength", path) ?? Infinity;
  if (min > max) c.fail("minLength is larger than maxLength", path);
  const matcher = pattern(c, s, path);
  if (matcher !== null && !matcher.live(matcher.start, min, max)) {
    const what = s.pattern === undefined
      ? "format"
      : s.format === undefined
      ? "pattern"
      : "pattern and format";
    c.fail(`no string matches the ${what} within the length bounds`, path);
  }
  return stringNode({ minLength: min, maxLength: max, pattern: matcher });
}

// What `pattern` and `format` together allow; null when neither is given.
function pattern(c: SchemaScope, s: Schema, path: string): CharMatcher | null {
  const matchers: CharMatcher[] = [];
  if (s.pattern !== undefined) {
    if (typeof s.pattern !== "string") c.fail("pattern must be a string", `${path}.pattern`);
    matchers.push(compilePattern(s.pattern, `${path}.pattern`));
  }
  if (s.format !== undefined) {
    const source = typeof s.format === "string" ? FORMATS[s.format] : undefined;
    // A format we do not know beside a pattern names what the pattern checks, as zod writes
    // its string checks (`hex`, `lowercase`, `starts_with`, `cuid`, ...): the pattern decides.
    if (source === undefined && typeof s.pattern === "string") return matchers[0];
    if (source === undefined) {
      c.fail(
        `format ${JSON.stringify(s.format)} is not supported by constrained decoding (supported: ${
          Object.keys(FORMATS).join(", ")
        })`,
        `${path}.format`,
      );
    }
    matchers.push(compilePattern(source, `${path}.format`));
  }
  return matchers.length === 0 ? null : matchers.reduce(intersectMatchers);
}

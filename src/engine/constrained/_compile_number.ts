// JSON Schema numbers and integers to grammar: bounds (inclusive or exclusive, draft 4's flags
// too) and `multipleOf`.
import { type GrammarNode, type NumberNode, numberNode } from "./grammar.ts";
import { MAX_FRACTION_DIGITS, MAX_INT_DIGITS, numberCanStart } from "./_terminals.ts";
import type { Schema, SchemaScope } from "./_schema_scope.ts";

/** The grammar of the numbers (whole ones when `integer`) `s` allows. */
export function compileNumber(
  c: SchemaScope,
  s: Schema,
  path: string,
  integer: boolean,
): GrammarNode {
  const multipleOf = s.multipleOf;
  if (
    multipleOf !== undefined &&
    (typeof multipleOf !== "number" || !Number.isFinite(multipleOf) || multipleOf <= 0)
  ) {
    c.fail("multipleOf must be a number greater than 0", `${path}.multipleOf`);
  }
  const bound = (key: string): number | undefined => {
    const v = s[key];
    if (v === undefined || typeof v === "boolean") return undefined;
    if (typeof v !== "number" || !Number.isFinite(v)) {
      c.fail(`${key} must be a number`, `${path}.${key}`);
    }
    return v;
  };
  // exclusiveMinimum is a number (draft 6+) or a flag on minimum (draft 4).
  const exMin = bound("exclusiveMinimum");
  const exMax = bound("exclusiveMaximum");
  const min = exMin ?? bound("minimum");
  const max = exMax ?? bound("maximum");
  const exclusiveMinimum = exMin !== undefined || s.exclusiveMinimum === true;
  const exclusiveMaximum = exMax !== undefined || s.exclusiveMaximum === true;
  if (integer) {
    // Whole bounds, inclusive: the number automaton's interval checks are then exact.
    const lo = min === undefined
      ? -Infinity
      : exclusiveMinimum
      ? Math.floor(min) + 1
      : Math.ceil(min);
    const hi = max === undefined
      ? Infinity
      : exclusiveMaximum
      ? Math.ceil(max) - 1
      : Math.floor(max);
    if (lo > hi) c.fail("no integer lies within the bounds", path);
    const node = numberNode({ integer, minimum: lo, maximum: hi, multipleOf });
    return writable(c, node, multipleOf, path);
  }
  const empty = min !== undefined && max !== undefined &&
    (min > max || (min === max && (exclusiveMinimum || exclusiveMaximum)));
  if (empty) c.fail("no number lies within the bounds", path);
  const node = numberNode({
    minimum: min,
    maximum: max,
    exclusiveMinimum,
    exclusiveMaximum,
    multipleOf,
  });
  return writable(c, node, multipleOf, path);
}

// Numbers are written with at most MAX_INT_DIGITS digits before the point and
// MAX_FRACTION_DIGITS after it.
function writable(
  c: SchemaScope,
  node: NumberNode,
  multipleOf: number | undefined,
  path: string,
): NumberNode {
  if (numberCanStart(node)) return node;
  const what = multipleOf === undefined ? "number" : `multiple of ${multipleOf}`;
  c.fail(
    `no ${what} of at most ${MAX_INT_DIGITS} digits before the point and ` +
      `${MAX_FRACTION_DIGITS} after it lies within the bounds`,
    path,
  );
}

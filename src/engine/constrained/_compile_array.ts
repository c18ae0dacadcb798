// JSON Schema arrays to grammar: lists (`items`) and tuples (`prefixItems`, or `items` as an
// array), with `minItems` / `maxItems`.
import { anyJsonValue, arrayNode, type GrammarNode, tupleNode } from "./grammar.ts";
import type { Schema, SchemaScope } from "./_schema_scope.ts";

/**
 * Most tuple items that may be left out (between minItems and the tuple's length): each nests
 * the grammar one level deeper.
 */
const MAX_OPTIONAL_TUPLE_ITEMS = 16;

/** The grammar of the arrays `s` allows. */
export function compileArray(c: SchemaScope, s: Schema, path: string): GrammarNode {
  if (s.uniqueItems === true) {
    c.fail("uniqueItems: true is not supported", `${path}.uniqueItems`);
  }
  const min = c.count(s, "minItems", path) ?? 0;
  const max = c.count(s, "maxItems", path) ?? Infinity;
  if (min > max) c.fail("minItems is larger than maxItems", path);
  if (s.prefixItems !== undefined || Array.isArray(s.items)) {
    return tuple(c, s, { min, max }, path);
  }
  if (s.additionalItems !== undefined) {
    c.fail("additionalItems goes with tuple items (an array)", `${path}.additionalItems`);
  }
  const item = s.items === undefined
    ? anyJsonValue(c.spacing)
    : c.compile(s.items, `${path}.items`);
  return arrayNode(item, { min, max, spacing: c.spacing });
}

// A tuple: `prefixItems` then `items` (draft 2020-12), or `items` as an array then
// `additionalItems` (drafts 4 to 7). Items after the tuple's own are any value unless refused
// (`false`) or given a schema.
function tuple(
  c: SchemaScope,
  s: Schema,
  bounds: { min: number; max: number },
  path: string,
): GrammarNode {
  const modern = s.prefixItems !== undefined;
  const [prefixKey, restKey] = modern ? ["prefixItems", "items"] : ["items", "additionalItems"];
  if (modern && Array.isArray(s.items)) {
    c.fail("items cannot be an array beside prefixItems", `${path}.items`);
  }
  if (modern && s.additionalItems !== undefined) {
    c.fail(
      "additionalItems goes with items as an array, not prefixItems",
      `${path}.additionalItems`,
    );
  }
  const schemas = s[prefixKey];
  if (!Array.isArray(schemas) || schemas.length === 0) {
    c.fail(`${prefixKey} must be a non-empty array of schemas`, `${path}.${prefixKey}`);
  }
  const optional = Math.min(bounds.max, schemas.length) - bounds.min;
  if (optional > MAX_OPTIONAL_TUPLE_ITEMS) {
    c.fail(
      `a tuple may have at most ${MAX_OPTIONAL_TUPLE_ITEMS} optional items (raise minItems)`,
      `${path}.${prefixKey}`,
    );
  }
  const prefix = schemas.map((item, i) => c.compile(item, `${path}.${prefixKey}.${i}`));
  const restSchema = s[restKey];
  const rest = restSchema === false
    ? null
    : restSchema === undefined
    ? anyJsonValue(c.spacing)
    : c.compile(restSchema, `${path}.${restKey}`);
  if (rest === null && bounds.min > prefix.length) {
    c.fail(
      `minItems is larger than the ${prefix.length} items the tuple allows`,
      `${path}.minItems`,
    );
  }
  return tupleNode(prefix, rest, { ...bounds, spacing: c.spacing });
}

// oneOf is generated as anyOf, which is exact only when no value matches two branches: its
// branches must be provably exclusive, else the schema is refused.
import { jsonType } from "./_schema_keywords.ts";
import type { Schema, SchemaScope } from "./_schema_scope.ts";

/** Refuses oneOf `branches` (at `path`) unless no value can match two of them. */
export function checkExclusive(c: SchemaScope, branches: unknown[], path: string): void {
  const shapes = branches.map((b, i) => shape(c, b, `${path}.oneOf.${i}`));
  for (let i = 0; i < shapes.length; i++) {
    for (let j = i + 1; j < shapes.length; j++) {
      if (exclusiveShapes(shapes[i], shapes[j])) continue;
      c.fail(
        `oneOf branches ${i} and ${j} can match the same value, so oneOf cannot be enforced; ` +
          "give the branches distinct types, distinct const/enum values or a required " +
          "property with distinct const values, or use anyOf",
        `${path}.oneOf`,
      );
    }
  }
}

/** What a oneOf branch can match, as far as exclusivity needs to know. */
interface Shape {
  /** The JSON types it allows; null for any. */
  types: Set<string> | null;
  /** Its const/enum values, serialized; null when not a literal. */
  literals: string[] | null;
  /** Required properties of an object-only branch that hold const/enum values (discriminators). */
  tags: Map<string, string[]>;
}

function shape(c: SchemaScope, branch: unknown, path: string): Shape {
  let s = c.deref(branch, path);
  if (typeof s !== "object" || s === null) {
    return { types: null, literals: null, tags: new Map() };
  }
  if (s.allOf !== undefined) s = c.mergeAllOf(s, path);
  const nullable = s.nullable === true;
  const values = s.const !== undefined ? [s.const] : Array.isArray(s.enum) ? s.enum : null;
  const literals = values === null ? null : values.map((v) => JSON.stringify(v));
  let types = values !== null
    ? values.map(jsonType)
    : s.anyOf !== undefined || s.oneOf !== undefined
    ? null
    : c.types(s, path);
  if (nullable) {
    types = types === null ? null : [...types, "null"];
    literals?.push("null");
  }
  const tags = new Map<string, string[]>();
  const props = (s.properties ?? {}) as Record<string, Schema>;
  const required = Array.isArray(s.required) ? s.required as string[] : [];
  if (types !== null && types.every((t) => t === "object")) {
    for (const key of required) {
      const p = props[key];
      const v = p?.const !== undefined ? [p.const] : Array.isArray(p?.enum) ? p.enum : null;
      if (v !== null) tags.set(key, v.map((x) => JSON.stringify(x)));
    }
  }
  return { types: types === null ? null : new Set(types), literals, tags };
}

/**
 * True when no value can match both shapes: their types are disjoint (integer lies within number),
 * their literal values are, or a discriminator both require has disjoint values.
 */
function exclusiveShapes(a: Shape, b: Shape): boolean {
  const disjoint = (x: Iterable<string>, y: string[]) => ![...x].some((v) => y.includes(v));
  if (a.types !== null && b.types !== null) {
    const widen = (t: Set<string>) => t.has("number") ? [...t, "integer"] : [...t];
    const bt = widen(b.types);
    if (disjoint(widen(a.types), bt)) return true;
  }
  if (a.literals !== null && b.literals !== null && disjoint(a.literals, b.literals)) return true;
  for (const [key, values] of a.tags) {
    const other = b.tags.get(key);
    if (other !== undefined && disjoint(values, other)) return true;
  }
  return false;
}

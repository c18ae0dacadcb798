// JSON Schema objects to grammar: `properties` in their declared order, `required`,
// `additionalProperties` and `propertyNames`.
import { canFinish, feedBytes, startThreads } from "./matcher.ts";
import { anyJsonValue, type GrammarNode, objectNode, type PropertyRule } from "./grammar.ts";
import type { Schema, SchemaScope } from "./_schema_scope.ts";

const utf8 = new TextEncoder();

/** The grammar of the objects `s` allows. */
export function compileObject(c: SchemaScope, s: Schema, path: string): GrammarNode {
  const props = s.properties ?? {};
  if (typeof props !== "object" || props === null || Array.isArray(props)) {
    c.fail("properties must be an object", `${path}.properties`);
  }
  const required = s.required ?? [];
  if (!Array.isArray(required) || required.some((r) => typeof r !== "string")) {
    c.fail("required must be an array of names", `${path}.required`);
  }
  // Closing objects treats a missing additionalProperties as false where properties are listed.
  const implied = c.options.closedObjects === true && s.additionalProperties === undefined &&
    s.properties !== undefined;
  const extra = implied ? false : s.additionalProperties;
  let additional: GrammarNode | null | undefined; // compiled when some member needs it
  const extraNode = () =>
    additional ??= extra === false
      ? null
      : extra === undefined || extra === true
      ? anyJsonValue(c.spacing)
      : c.compile(extra, `${path}.additionalProperties`);
  const names = propertyNames(c, s, path);
  const rules: PropertyRule[] = [];
  for (const [key, value] of Object.entries(props as Schema)) {
    const rule = {
      key,
      value: c.compile(value, `${path}.properties.${key}`),
      required: required.includes(key),
    };
    if (names === undefined || isName(names, key)) rules.push(rule);
    else if (rule.required) {
      c.fail(`required property "${key}" does not match propertyNames`, `${path}.required`);
    }
  }
  // Required names without a schema of their own: additionalProperties is theirs (zod writes
  // records with enum keys so).
  for (const key of new Set(required as string[])) {
    if (key in (props as Schema)) continue;
    const value = extraNode();
    if (value === null || (names !== undefined && !isName(names, key))) {
      c.fail(
        `required property "${key}" is refused by ` +
          (value === null
            ? implied
              ? "disable_additional_properties (additionalProperties: false)"
              : "additionalProperties: false"
            : "propertyNames"),
        `${path}.required`,
      );
    }
    rules.push({ key, value, required: true });
  }
  return objectNode(rules, rules.length > 0 ? null : extraNode(), {
    names,
    spacing: c.spacing,
  });
}

function isName(names: GrammarNode, key: string): boolean {
  return canFinish(feedBytes(startThreads(names), utf8.encode(JSON.stringify(key))));
}

// The keys an object's members may have (zod's records): a string schema.
function propertyNames(c: SchemaScope, s: Schema, path: string): GrammarNode | undefined {
  if (s.propertyNames === undefined || s.propertyNames === true) return undefined;
  const where = `${path}.propertyNames`;
  const names = c.deref(s.propertyNames, where);
  const types = typeof names === "object" && names !== null ? c.types(names, where) : [];
  const values = names?.enum ?? (names?.const !== undefined ? [names.const] : null);
  const strings = types === null
    ? Array.isArray(values) && values.every((v) => typeof v === "string")
    : types.length === 1 && types[0] === "string";
  if (!strings) {
    c.fail("propertyNames must be a schema of strings (type string, or string enum)", where);
  }
  return c.compile(names, where);
}

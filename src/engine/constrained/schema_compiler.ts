/**
 * JSON Schema to {@link GrammarNode}: the subset that OpenAI's strict mode and zod's JSON Schema
 * output use, so every output of the grammar validates against the schema.
 *
 * Supported: `type` (one or a list), `properties` / `required` / `additionalProperties` /
 * `propertyNames`, `items` / `minItems` / `maxItems`, tuples (`prefixItems`, or `items` as an array
 * with `additionalItems`), `enum` / `const`, `minLength` / `maxLength` / `pattern` / `format`
 * (date-time, date, time, email, uuid, ipv4, hostname, uri), `minimum` / `maximum` /
 * `exclusiveMinimum` / `exclusiveMaximum` / `multipleOf`, `anyOf` / `oneOf`, `allOf` (merged),
 * `nullable`, `$ref` into the document (`$defs`, `definitions`, `#`) including recursion, and
 * annotations (`title`, `description`, `default`, `examples`, ...). Any other keyword is a
 * `ValidationError` that names it and where it is: never silently ignored.
 *
 * Objects are written with their properties in the declared order; properties that are not
 * required may be left out; an object with declared properties gets no other keys (those
 * `additionalProperties` allows are optional). {@link SchemaOptions} can leave out all whitespace
 * and close objects that list `properties` without saying `additionalProperties`. `oneOf` is
 * generated as `anyOf`, which is exact only when no value matches two branches, so its branches
 * must be provably exclusive (see {@link exclusiveShapes}).
 *
 * @module
 */

import { ValidationError } from "../../core/errors.ts";
import { canFinish, feedBytes, startThreads } from "./matcher.ts";
import {
  alt,
  anyJsonValue,
  arrayNode,
  COMPACT,
  type GrammarNode,
  type JsonSpacing,
  lit,
  type NumberNode,
  numberNode,
  objectNode,
  type PropertyRule,
  ref,
  type RefNode,
  SPACED,
  stringNode,
  tupleNode,
} from "./grammar.ts";
import { type CharMatcher, compilePattern, intersectMatchers } from "./regex.ts";
import { MAX_FRACTION_DIGITS, MAX_INT_DIGITS, numberCanStart } from "./_terminals.ts";

type Schema = Record<string, unknown>;

const utf8 = new TextEncoder();

const ANNOTATIONS = new Set([
  "$schema",
  "$id",
  "$comment",
  "$defs",
  "definitions",
  "title",
  "description",
  "default",
  "examples",
  "deprecated",
  "readOnly",
  "writeOnly",
  // Annotations since draft 2019-09 (zod writes contentEncoding beside base64 patterns).
  "contentEncoding",
  "contentMediaType",
  "contentSchema",
]);
const BY_TYPE: Record<string, readonly string[]> = {
  object: ["properties", "required", "additionalProperties", "propertyNames"],
  array: ["items", "prefixItems", "additionalItems", "minItems", "maxItems", "uniqueItems"],
  string: ["minLength", "maxLength", "pattern", "format"],
  number: ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"],
  integer: ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"],
  boolean: [],
  null: [],
};
const GENERAL = new Set(["type", "enum", "const", "anyOf", "oneOf", "allOf", "$ref", "nullable"]);
const KNOWN = new Set([...ANNOTATIONS, ...GENERAL, ...Object.values(BY_TYPE).flat()]);

/**
 * Most tuple items that may be left out (between minItems and the tuple's length): each nests
 * the grammar one level deeper.
 */
const MAX_OPTIONAL_TUPLE_ITEMS = 16;

/** The formats we can generate, as patterns (a subset of each format, all of it valid). */
const FORMATS: Record<string, string> = {
  "date": "^DATE$",
  "time": "^TIME$",
  "date-time": "^DATETTIME$",
  "email": "^[a-z0-9]{1,20}(\\.[a-z0-9]{1,20}){0,2}@([a-z0-9]{1,20}\\.){1,3}[a-z]{2,10}$",
  "uuid": "^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$",
  "ipv4": "^((25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)\\.){3}(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)$",
  "ipv6": "^([0-9a-f]{1,4}:){7}[0-9a-f]{1,4}$",
  "duration": "^P(\\d{1,4}D(T\\d{1,2}H)?|T\\d{1,2}H(\\d{1,2}M)?|\\d{1,3}W)$",
  "hostname": "^[a-z0-9]{1,20}(\\.[a-z0-9]{1,20}){0,3}$",
  "uri": "^https?://[a-z0-9]{1,20}(\\.[a-z0-9]{1,20}){0,3}(/[A-Za-z0-9._~-]{1,20}){0,4}$",
};
// Days that exist in every year (no 29 February), so no calendar check is needed.
const DATE = "\\d{4}-((0[13578]|1[02])-(0[1-9]|[12]\\d|3[01])|(0[469]|11)-(0[1-9]|[12]\\d|30)|" +
  "02-(0[1-9]|1\\d|2[0-8]))";
const TIME = "([01]\\d|2[0-3]):[0-5]\\d:[0-5]\\d(\\.\\d{1,6})?Z";
for (const [name, p] of Object.entries(FORMATS)) {
  FORMATS[name] = p.replace("DATE", DATE).replace("TIME", TIME);
}

/**
 * Bounds on a schema, so that compiling it and running its grammar take bounded time and memory
 * (each refused with a 400 naming it). OpenAI's strict mode has similar ones.
 */
export const SCHEMA_LIMITS = {
  /** Most schemas nested in one another (allOf and $ref chains included). */
  depth: 64,
  /** Most schemas in all (properties, items, branches, definitions). */
  subschemas: 10_000,
  /** Most enum and const values in all. */
  enumValues: 1_000,
} as const;

/** How {@link compileSchema} writes JSON (vLLM's `structured_outputs` options). */
export interface SchemaOptions {
  /** No whitespace outside strings (`disable_any_whitespace`), else a space may follow `:` `,`. */
  compact?: boolean;
  /**
   * An object schema with `properties` and no `additionalProperties` is taken as
   * `additionalProperties: false` (`disable_additional_properties`, as vLLM's guidance backend
   * does it): `properties: {}` then allows only `{}`, and a required name without a property
   * schema is refused. Objects without `properties` stay open.
   */
  closedObjects?: boolean;
}

/**
 * Compiles `schema` to a grammar. `param` is the request field it came from, used in errors
 * (e.g. `response_format.json_schema.schema`).
 *
 * @example
 * ```ts
 * import { compileSchema } from "./schema_compiler.ts";
 * const grammar = compileSchema({ type: "object", properties: { a: { type: "integer" } } });
 * const compact = compileSchema({ type: "array" }, "guided_json", { compact: true });
 * ```
 */
export function compileSchema(
  schema: unknown,
  param = "response_format",
  options: SchemaOptions = {},
): GrammarNode {
  return new Compiler(schema, param, options).root();
}

class Compiler {
  #refs = new Map<string, RefNode>();
  #pending: [RefNode, unknown, string][] = [];
  #depth = 0;
  #subschemas = 0;
  #enumValues = 0;
  readonly spacing: JsonSpacing;

  constructor(
    readonly document: unknown,
    readonly param: string,
    readonly options: SchemaOptions,
  ) {
    this.spacing = options.compact ? COMPACT : SPACED;
  }

  root(): GrammarNode {
    const node = this.compile(this.document, this.param);
    while (this.#pending.length > 0) {
      const [r, target, path] = this.#pending.pop()!;
      r.target = this.compile(target, path);
    }
    for (const r of this.#refs.values()) checkCycle(r, this.param);
    if (!allowsSomeValue(node)) {
      this.fail(
        "the schema allows no value of finite size (a required property or item refers back " +
          "to its own schema at every level)",
        this.param,
      );
    }
    return node;
  }

  fail(message: string, path: string): never {
    throw new ValidationError(`${message} (at ${path})`, { param: path, code: "invalid_schema" });
  }

  compile(schema: unknown, path: string): GrammarNode {
    if (++this.#subschemas > SCHEMA_LIMITS.subschemas) {
      this.fail(`the schema has more than ${SCHEMA_LIMITS.subschemas} subschemas`, path);
    }
    return this.nested(path, () => this.compileOne(schema, path));
  }

  // Runs `f` one level deeper, refusing schemas nested beyond the limit.
  nested<T>(path: string, f: () => T): T {
    if (this.#depth >= SCHEMA_LIMITS.depth) {
      this.fail(`the schema nests more than ${SCHEMA_LIMITS.depth} levels deep`, path);
    }
    this.#depth++;
    try {
      return f();
    } finally {
      this.#depth--;
    }
  }

  compileOne(schema: unknown, path: string): GrammarNode {
    if (schema === true) return anyJsonValue(this.spacing);
    if (schema === false) this.fail("the schema `false` allows no value", path);
    if (typeof schema !== "object" || schema === null || Array.isArray(schema)) {
      this.fail("a schema must be an object or a boolean", path);
    }
    let s = schema as Schema;
    for (const key of Object.keys(s)) {
      if (!KNOWN.has(key)) {
        this.fail(
          `the JSON Schema keyword '${key}' is not supported by constrained decoding`,
          `${path}.${key}`,
        );
      }
    }
    if (s.allOf !== undefined) s = this.mergeAllOf(s, path);
    if (typeof s.$ref === "string") {
      if (Object.keys(s).every((k) => k === "$ref" || ANNOTATIONS.has(k))) {
        return this.ref(s.$ref, path);
      }
      s = this.mergeAllOf({ ...s, $ref: undefined, allOf: [{ $ref: s.$ref }] }, path);
    }
    const node = this.compileInner(s, path);
    return s.nullable === true ? alt(node, lit("null")) : node;
  }

  compileInner(s: Schema, path: string): GrammarNode {
    const branches = s.anyOf ?? s.oneOf;
    if (branches !== undefined) {
      const keyword = s.anyOf !== undefined ? "anyOf" : "oneOf";
      if (s.anyOf !== undefined && s.oneOf !== undefined) {
        this.fail("anyOf and oneOf together are not supported", path);
      }
      if (!Array.isArray(branches) || branches.length === 0) {
        this.fail(`${keyword} must be a non-empty array`, `${path}.${keyword}`);
      }
      const rest = Object.keys(s).filter((k) =>
        k !== keyword && k !== "nullable" && !ANNOTATIONS.has(k)
      );
      if (rest.length > 0) {
        this.fail(
          `'${rest[0]}' beside ${keyword} is not supported; move it into each branch`,
          `${path}.${rest[0]}`,
        );
      }
      if (keyword === "oneOf") this.checkExclusive(branches, path);
      return alt(...branches.map((b, i) => this.compile(b, `${path}.${keyword}.${i}`)));
    }
    const types = this.types(s, path);
    if (s.const !== undefined || s.enum !== undefined) {
      const values = s.const !== undefined ? [s.const] : s.enum;
      if (!Array.isArray(values) || values.length === 0) {
        this.fail("enum must be a non-empty array", `${path}.enum`);
      }
      this.#enumValues += values.length;
      if (this.#enumValues > SCHEMA_LIMITS.enumValues) {
        this.fail(
          `the schema has more than ${SCHEMA_LIMITS.enumValues} enum and const values in all`,
          `${path}.${s.const !== undefined ? "const" : "enum"}`,
        );
      }
      const fitting = values.filter((v) =>
        types === null || types.includes(jsonType(v)) ||
        (types.includes("number") && jsonType(v) === "integer")
      );
      if (fitting.length === 0) this.fail("no value of enum/const has the schema's type", path);
      return lit(...new Set(fitting.map((v) => JSON.stringify(v))));
    }
    if (types === null) return anyJsonValue(this.spacing);
    return alt(...types.map((t) => this.typed(t, s, path)));
  }

  // The types a schema allows, inferred from its keywords when `type` is absent; null for any.
  types(s: Schema, path: string): string[] | null {
    const t = s.type;
    if (t !== undefined) {
      const list = Array.isArray(t) ? t : [t];
      for (const name of list) {
        if (typeof name !== "string" || !(name in BY_TYPE)) {
          this.fail(`unknown type ${JSON.stringify(name)}`, `${path}.type`);
        }
      }
      if (list.length === 0) this.fail("type must name at least one type", `${path}.type`);
      return list as string[];
    }
    const implied = Object.keys(BY_TYPE).filter((type) => BY_TYPE[type].some((k) => k in s));
    if (implied.includes("number")) implied.splice(implied.indexOf("integer"), 1);
    return implied.length === 0 ? null : implied;
  }

  typed(type: string, s: Schema, path: string): GrammarNode {
    switch (type) {
      case "object":
        return this.object(s, path);
      case "array": {
        if (s.uniqueItems === true) {
          this.fail("uniqueItems: true is not supported", `${path}.uniqueItems`);
        }
        const min = this.count(s, "minItems", path) ?? 0;
        const max = this.count(s, "maxItems", path) ?? Infinity;
        if (min > max) this.fail("minItems is larger than maxItems", path);
        if (s.prefixItems !== undefined || Array.isArray(s.items)) {
          return this.tuple(s, { min, max }, path);
        }
        if (s.additionalItems !== undefined) {
          this.fail("additionalItems goes with tuple items (an array)", `${path}.additionalItems`);
        }
        const item = s.items === undefined
          ? anyJsonValue(this.spacing)
          : this.compile(s.items, `${path}.items`);
        return arrayNode(item, { min, max, spacing: this.spacing });
      }
      case "string": {
        const min = this.count(s, "minLength", path) ?? 0;
        const max = this.count(s, "maxLength", path) ?? Infinity;
        if (min > max) this.fail("minLength is larger than maxLength", path);
        const pattern = this.pattern(s, path);
        if (pattern !== null && !pattern.live(pattern.start, min, max)) {
          const what = s.pattern === undefined
            ? "format"
            : s.format === undefined
            ? "pattern"
            : "pattern and format";
          this.fail(`no string matches the ${what} within the length bounds`, path);
        }
        return stringNode({ minLength: min, maxLength: max, pattern });
      }
      case "number":
      case "integer":
        return this.number(type === "integer", s, path);
      case "boolean":
        return lit("true", "false");
      default:
        return lit("null");
    }
  }

  // A tuple: `prefixItems` then `items` (draft 2020-12), or `items` as an array then
  // `additionalItems` (drafts 4 to 7). Items after the tuple's own are any value unless refused
  // (`false`) or given a schema.
  tuple(s: Schema, bounds: { min: number; max: number }, path: string): GrammarNode {
    const modern = s.prefixItems !== undefined;
    const [prefixKey, restKey] = modern ? ["prefixItems", "items"] : ["items", "additionalItems"];
    if (modern && Array.isArray(s.items)) {
      this.fail("items cannot be an array beside prefixItems", `${path}.items`);
    }
    if (modern && s.additionalItems !== undefined) {
      this.fail(
        "additionalItems goes with items as an array, not prefixItems",
        `${path}.additionalItems`,
      );
    }
    const schemas = s[prefixKey];
    if (!Array.isArray(schemas) || schemas.length === 0) {
      this.fail(`${prefixKey} must be a non-empty array of schemas`, `${path}.${prefixKey}`);
    }
    const optional = Math.min(bounds.max, schemas.length) - bounds.min;
    if (optional > MAX_OPTIONAL_TUPLE_ITEMS) {
      this.fail(
        `a tuple may have at most ${MAX_OPTIONAL_TUPLE_ITEMS} optional items (raise minItems)`,
        `${path}.${prefixKey}`,
      );
    }
    const prefix = schemas.map((item, i) => this.compile(item, `${path}.${prefixKey}.${i}`));
    const restSchema = s[restKey];
    const rest = restSchema === false
      ? null
      : restSchema === undefined
      ? anyJsonValue(this.spacing)
      : this.compile(restSchema, `${path}.${restKey}`);
    if (rest === null && bounds.min > prefix.length) {
      this.fail(
        `minItems is larger than the ${prefix.length} items the tuple allows`,
        `${path}.minItems`,
      );
    }
    return tupleNode(prefix, rest, { ...bounds, spacing: this.spacing });
  }

  object(s: Schema, path: string): GrammarNode {
    const props = s.properties ?? {};
    if (typeof props !== "object" || props === null || Array.isArray(props)) {
      this.fail("properties must be an object", `${path}.properties`);
    }
    const required = s.required ?? [];
    if (!Array.isArray(required) || required.some((r) => typeof r !== "string")) {
      this.fail("required must be an array of names", `${path}.required`);
    }
    // Closing objects treats a missing additionalProperties as false where properties are listed.
    const implied = this.options.closedObjects === true && s.additionalProperties === undefined &&
      s.properties !== undefined;
    const extra = implied ? false : s.additionalProperties;
    let additional: GrammarNode | null | undefined; // compiled when some member needs it
    const extraNode = () =>
      additional ??= extra === false
        ? null
        : extra === undefined || extra === true
        ? anyJsonValue(this.spacing)
        : this.compile(extra, `${path}.additionalProperties`);
    const names = this.propertyNames(s, path);
    const rules: PropertyRule[] = [];
    for (const [key, value] of Object.entries(props as Schema)) {
      const rule = {
        key,
        value: this.compile(value, `${path}.properties.${key}`),
        required: required.includes(key),
      };
      if (names === undefined || this.isName(names, key)) rules.push(rule);
      else if (rule.required) {
        this.fail(`required property "${key}" does not match propertyNames`, `${path}.required`);
      }
    }
    // Required names without a schema of their own: additionalProperties is theirs (zod writes
    // records with enum keys so).
    for (const key of new Set(required as string[])) {
      if (key in (props as Schema)) continue;
      const value = extraNode();
      if (value === null || (names !== undefined && !this.isName(names, key))) {
        this.fail(
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
      spacing: this.spacing,
    });
  }

  isName(names: GrammarNode, key: string): boolean {
    return canFinish(feedBytes(startThreads(names), utf8.encode(JSON.stringify(key))));
  }

  // The keys an object's members may have (zod's records): a string schema.
  propertyNames(s: Schema, path: string): GrammarNode | undefined {
    if (s.propertyNames === undefined || s.propertyNames === true) return undefined;
    const where = `${path}.propertyNames`;
    const names = this.deref(s.propertyNames, where);
    const types = typeof names === "object" && names !== null ? this.types(names, where) : [];
    const values = names?.enum ?? (names?.const !== undefined ? [names.const] : null);
    const strings = types === null
      ? Array.isArray(values) && values.every((v) => typeof v === "string")
      : types.length === 1 && types[0] === "string";
    if (!strings) {
      this.fail("propertyNames must be a schema of strings (type string, or string enum)", where);
    }
    return this.compile(names, where);
  }

  number(integer: boolean, s: Schema, path: string): GrammarNode {
    const multipleOf = s.multipleOf;
    if (
      multipleOf !== undefined &&
      (typeof multipleOf !== "number" || !Number.isFinite(multipleOf) || multipleOf <= 0)
    ) {
      this.fail("multipleOf must be a number greater than 0", `${path}.multipleOf`);
    }
    const bound = (key: string): number | undefined => {
      const v = s[key];
      if (v === undefined || typeof v === "boolean") return undefined;
      if (typeof v !== "number" || !Number.isFinite(v)) {
        this.fail(`${key} must be a number`, `${path}.${key}`);
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
      if (lo > hi) this.fail("no integer lies within the bounds", path);
      const node = numberNode({ integer, minimum: lo, maximum: hi, multipleOf });
      return this.writable(node, multipleOf, path);
    }
    const empty = min !== undefined && max !== undefined &&
      (min > max || (min === max && (exclusiveMinimum || exclusiveMaximum)));
    if (empty) this.fail("no number lies within the bounds", path);
    const node = numberNode({
      minimum: min,
      maximum: max,
      exclusiveMinimum,
      exclusiveMaximum,
      multipleOf,
    });
    return this.writable(node, multipleOf, path);
  }

  // Numbers are written with at most MAX_INT_DIGITS digits before the point and
  // MAX_FRACTION_DIGITS after it.
  writable(node: NumberNode, multipleOf: number | undefined, path: string): NumberNode {
    if (numberCanStart(node)) return node;
    const what = multipleOf === undefined ? "number" : `multiple of ${multipleOf}`;
    this.fail(
      `no ${what} of at most ${MAX_INT_DIGITS} digits before the point and ` +
        `${MAX_FRACTION_DIGITS} after it lies within the bounds`,
      path,
    );
  }

  pattern(s: Schema, path: string): CharMatcher | null {
    const matchers: CharMatcher[] = [];
    if (s.pattern !== undefined) {
      if (typeof s.pattern !== "string") this.fail("pattern must be a string", `${path}.pattern`);
      matchers.push(compilePattern(s.pattern, `${path}.pattern`));
    }
    if (s.format !== undefined) {
      const source = typeof s.format === "string" ? FORMATS[s.format] : undefined;
      // A format we do not know beside a pattern names what the pattern checks, as zod writes
      // its string checks (`hex`, `lowercase`, `starts_with`, `cuid`, ...): the pattern decides.
      if (source === undefined && typeof s.pattern === "string") return matchers[0];
      if (source === undefined) {
        this.fail(
          `format ${
            JSON.stringify(s.format)
          } is not supported by constrained decoding (supported: ${
            Object.keys(FORMATS).join(", ")
          })`,
          `${path}.format`,
        );
      }
      matchers.push(compilePattern(source, `${path}.format`));
    }
    return matchers.length === 0 ? null : matchers.reduce(intersectMatchers);
  }

  count(s: Schema, key: string, path: string): number | undefined {
    const v = s[key];
    if (v === undefined) return undefined;
    if (typeof v !== "number" || !Number.isInteger(v) || v < 0) {
      this.fail(`${key} must be a whole number >= 0`, `${path}.${key}`);
    }
    return v;
  }

  // oneOf generated as anyOf could write a value two branches match, which oneOf refuses.
  checkExclusive(branches: unknown[], path: string): void {
    const shapes = branches.map((b, i) => this.shape(b, `${path}.oneOf.${i}`));
    for (let i = 0; i < shapes.length; i++) {
      for (let j = i + 1; j < shapes.length; j++) {
        if (exclusiveShapes(shapes[i], shapes[j])) continue;
        this.fail(
          `oneOf branches ${i} and ${j} can match the same value, so oneOf cannot be enforced; ` +
            "give the branches distinct types, distinct const/enum values or a required " +
            "property with distinct const values, or use anyOf",
          `${path}.oneOf`,
        );
      }
    }
  }

  shape(branch: unknown, path: string): Shape {
    let s = this.deref(branch, path);
    if (typeof s !== "object" || s === null) {
      return { types: null, literals: null, tags: new Map() };
    }
    if (s.allOf !== undefined) s = this.mergeAllOf(s, path);
    const nullable = s.nullable === true;
    const values = s.const !== undefined ? [s.const] : Array.isArray(s.enum) ? s.enum : null;
    const literals = values === null ? null : values.map((v) => JSON.stringify(v));
    let types = values !== null
      ? values.map(jsonType)
      : s.anyOf !== undefined || s.oneOf !== undefined
      ? null
      : this.types(s, path);
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

  // The schema a chain of $refs leads to (the referring schema's own keywords kept over it).
  deref(schema: unknown, path: string): Schema {
    let s = schema as Schema;
    const seen = new Set<string>();
    while (typeof s?.$ref === "string") {
      const { $ref, ...rest } = s;
      if (seen.has($ref as string)) {
        this.fail(`$ref ${JSON.stringify($ref)} leads back to itself`, `${path}.$ref`);
      }
      seen.add($ref as string);
      s = { ...(this.resolve($ref as string, path) as Schema), ...rest };
    }
    return s;
  }

  ref(pointer: string, path: string): RefNode {
    let node = this.#refs.get(pointer);
    if (node === undefined) {
      node = ref(pointer);
      this.#refs.set(pointer, node);
      // Errors inside a definition name it where it is: `response_format.$defs.A`.
      const at = this.param + pointer.slice(1).replaceAll("/", ".");
      this.#pending.push([node, this.resolve(pointer, path), at]);
    }
    return node;
  }

  resolve(pointer: string, path: string): unknown {
    if (pointer !== "#" && !pointer.startsWith("#/")) {
      this.fail(
        `only $refs within the schema (#/...) are supported, not ${JSON.stringify(pointer)}`,
        `${path}.$ref`,
      );
    }
    let at: unknown = this.document;
    for (const raw of pointer.split("/").slice(1)) {
      const part = decodeURIComponent(raw).replaceAll("~1", "/").replaceAll("~0", "~");
      at = typeof at === "object" && at !== null ? (at as Schema)[part] : undefined;
      if (at === undefined) {
        this.fail(`$ref ${JSON.stringify(pointer)} points at nothing`, `${path}.$ref`);
      }
    }
    return at;
  }

  // allOf: its members' keywords merged into the schema; properties and required are combined,
  // any other keyword given twice with different values is refused.
  mergeAllOf(s: Schema, path: string): Schema {
    const { allOf, ...merged } = s;
    if (!Array.isArray(allOf)) this.fail("allOf must be an array", `${path}.allOf`);
    // additionalProperties sees only its own schema's properties: merged, it would see all.
    let withProperties = merged.properties === undefined ? 0 : 1;
    let closed = merged.additionalProperties !== undefined;
    allOf.forEach((member, i) => {
      let m = this.deref(member, `${path}.allOf.${i}`);
      if (typeof m !== "object" || m === null) {
        this.fail("allOf members must be schemas", `${path}.allOf.${i}`);
      }
      if (m.allOf !== undefined) {
        const inner = m;
        m = this.nested(path, () => this.mergeAllOf(inner, `${path}.allOf.${i}`));
      }
      if (m.properties !== undefined) withProperties++;
      if (m.additionalProperties !== undefined) closed = true;
      if (closed && withProperties > 1) {
        this.fail(
          "additionalProperties within allOf is not supported (each member's would refuse the " +
            "others' properties)",
          `${path}.allOf`,
        );
      }
      for (const [key, value] of Object.entries(m)) {
        if (key === "properties") {
          merged.properties = mergeProperties(merged.properties as Schema, value as Schema);
        } else if (key === "required") {
          merged.required = [...((merged.required as string[]) ?? []), ...(value as string[])];
        } else if (ANNOTATIONS.has(key)) continue;
        else if (
          merged[key] !== undefined && JSON.stringify(merged[key]) !== JSON.stringify(value)
        ) {
          this.fail(`allOf members disagree on '${key}'`, `${path}.allOf.${i}.${key}`);
        } else merged[key] = value;
      }
    });
    delete merged.$ref;
    return merged;
  }
}

/**
 * The properties of two allOf members together: a property both define must match both schemas
 * (compiled as their allOf, which refuses what cannot be merged).
 */
function mergeProperties(into: Schema | undefined, from: Schema): Schema {
  const merged: Schema = { ...into };
  for (const [key, schema] of Object.entries(from)) {
    const before = merged[key];
    merged[key] = before === undefined || before === true
      ? schema
      : schema === true
      ? before
      : { allOf: [before, schema] };
  }
  return merged;
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

function jsonType(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  if (typeof v === "number") return Number.isInteger(v) ? "integer" : "number";
  return typeof v;
}

// A $ref that reaches itself through refs and anyOf alone would loop without reading any text.
function checkCycle(start: RefNode, param: string): void {
  const seen = new Set<GrammarNode>();
  const visit = (node: GrammarNode): void => {
    if (node === start && seen.size > 0) {
      throw new ValidationError(
        `the schema's ${
          JSON.stringify(start.name)
        } refers to itself without nesting (through $ref/anyOf alone)`,
        { param, code: "invalid_schema" },
      );
    }
    if (seen.has(node)) return;
    seen.add(node);
    if (node.kind === "ref") visit(node.target!);
    else if (node.kind === "alt") node.options.forEach(visit);
  };
  visit(start);
}

/**
 * True when the grammar can write some complete value: a fixpoint over its nodes, since $refs
 * can make them depend on one another (a required property whose schema is its own object never
 * ends).
 */
function allowsSomeValue(root: GrammarNode): boolean {
  const nodes: GrammarNode[] = []; // children before parents, mostly, so few passes are needed
  const seen = new Set<GrammarNode>();
  const visit = (node: GrammarNode): void => {
    if (seen.has(node)) return;
    seen.add(node);
    for (const child of childrenOf(node)) visit(child);
    nodes.push(node);
  };
  visit(root);
  const can = new Set<GrammarNode>();
  const writes = (node: GrammarNode): boolean => {
    switch (node.kind) {
      case "seq":
        return node.items.every((n) => can.has(n));
      case "alt":
        return node.options.some((n) => can.has(n));
      case "ref":
        return can.has(node.target!);
      case "repeat":
        return node.min === 0 || (can.has(node.item) && (node.min < 2 || can.has(node.separator)));
      case "object":
        return node.properties.every((p) => !p.required || can.has(p.value));
      default:
        return true; // terminals (numbers are checked as they are built)
    }
  };
  for (let changed = true; changed;) {
    changed = false;
    for (const node of nodes) {
      if (!can.has(node) && writes(node)) {
        can.add(node);
        changed = true;
      }
    }
  }
  return can.has(root);
}

function childrenOf(node: GrammarNode): GrammarNode[] {
  switch (node.kind) {
    case "seq":
      return [...node.items];
    case "alt":
      return [...node.options];
    case "ref":
      return [node.target!];
    case "repeat":
      return [node.item, node.separator];
    case "object":
      return [
        ...node.properties.map((p) => p.value),
        ...(node.additional ? [node.additional, node.names] : []),
      ];
    default:
      return [];
  }
}

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
 * must be provably exclusive (see `_one_of.ts`).
 *
 * @module
 */

import { ValidationError } from "../../core/errors.ts";
import {
  alt,
  anyJsonValue,
  COMPACT,
  type GrammarNode,
  type JsonSpacing,
  lit,
  ref,
  type RefNode,
  SPACED,
} from "./grammar.ts";
import { compileArray } from "./_compile_array.ts";
import { compileNumber } from "./_compile_number.ts";
import { compileObject } from "./_compile_object.ts";
import { compileString } from "./_compile_string.ts";
import { allowsSomeValue, checkCycle } from "./_grammar_checks.ts";
import { checkExclusive } from "./_one_of.ts";
import { ANNOTATIONS, BY_TYPE, jsonType, KNOWN } from "./_schema_keywords.ts";
import type { Schema, SchemaScope } from "./_schema_scope.ts";

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

class Compiler implements SchemaScope {
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
      if (keyword === "oneOf") checkExclusive(this, branches, path);
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
        return compileObject(this, s, path);
      case "array":
        return compileArray(this, s, path);
      case "string":
        return compileString(this, s, path);
      case "number":
      case "integer":
        return compileNumber(this, s, path, type === "integer");
      case "boolean":
        return lit("true", "false");
      default:
        return lit("null");
    }
  }

  count(s: Schema, key: string, path: string): number | undefined {
    const v = s[key];
    if (v === undefined) return undefined;
    if (typeof v !== "number" || !Number.isInteger(v) || v < 0) {
      this.fail(`${key} must be a whole number >= 0`, `${path}.${key}`);
    }
    return v;
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

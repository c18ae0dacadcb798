// A corpus of JSON Schemas in the subset constrained decoding supports: what OpenAI strict mode
// and zod's JSON Schema output look like, recursive ones included. Strings are mostly bounded so
// the random-weight demo model finishes them in a few dozen tokens.
export const SCHEMA_CORPUS: Record<string, Record<string, unknown>> = {
  "object with every scalar type": {
    type: "object",
    properties: {
      name: { type: "string", minLength: 2, maxLength: 16 },
      age: { type: "integer", minimum: 0, maximum: 120 },
      score: { type: "number", exclusiveMinimum: -1, exclusiveMaximum: 1 },
      active: { type: "boolean" },
      nothing: { type: "null" },
    },
    required: ["name", "age", "score", "active", "nothing"],
    additionalProperties: false,
  },
  "enums, const and arrays": {
    type: "object",
    properties: {
      color: { enum: ["red", "green", "blue"] },
      mixed: { enum: [1, 2.5, "x", null, true] },
      version: { const: "v1" },
      tags: { type: "array", items: { enum: ["a", "bb", "ccc"] }, minItems: 1, maxItems: 3 },
      grid: {
        type: "array",
        items: { type: "array", items: { type: "integer", minimum: -5, maximum: 5 }, maxItems: 2 },
        maxItems: 2,
      },
    },
    required: ["color", "mixed", "version", "tags", "grid"],
    additionalProperties: false,
  },
  "nullable and anyOf (OpenAI strict style)": {
    type: "object",
    properties: {
      note: { anyOf: [{ type: "string", maxLength: 10 }, { type: "null" }] },
      amount: { type: ["number", "null"], minimum: 0.5, maximum: 99.5 },
      legacy: { type: "integer", nullable: true, minimum: 10, maximum: 20 },
    },
    required: ["note", "amount", "legacy"],
    additionalProperties: false,
  },
  "optional properties": {
    type: "object",
    properties: {
      a: { type: "integer", minimum: 0, maximum: 9 },
      b: { type: "boolean" },
      c: { type: "string", maxLength: 4 },
      d: { type: "number", minimum: 0, maximum: 1 },
    },
    required: ["b"],
    additionalProperties: false,
  },
  "discriminated oneOf (zod style)": {
    $schema: "http://json-schema.org/draft-07/schema#",
    oneOf: [
      {
        type: "object",
        properties: {
          kind: { const: "circle" },
          radius: { type: "number", exclusiveMinimum: 0, maximum: 10 },
        },
        required: ["kind", "radius"],
        additionalProperties: false,
      },
      {
        type: "object",
        properties: {
          kind: { const: "square" },
          side: { type: "integer", minimum: 1, maximum: 9 },
        },
        required: ["kind", "side"],
        additionalProperties: false,
      },
    ],
  },
  "patterns and formats": {
    type: "object",
    properties: {
      code: { type: "string", pattern: "^[A-Z]{3}-\\d{2,4}$" },
      id: { type: "string", format: "uuid" },
      day: { type: "string", format: "date" },
      at: { type: "string", format: "date-time" },
      ip: { type: "string", format: "ipv4" },
      mail: { type: "string", format: "email" },
      ip6: { type: "string", format: "ipv6" },
      span: { type: "string", format: "duration" },
      hex: { type: "string", format: "hex", pattern: "^[0-9a-f]{2,6}$" },
    },
    required: ["code", "id", "day", "at", "ip", "mail", "ip6", "span", "hex"],
    additionalProperties: false,
  },
  // Branches of a pattern that its length bounds or format rule out, and characters beyond U+FFFF:
  // the grammar must never begin one it cannot finish.
  "patterns cut by lengths and formats": {
    type: "object",
    properties: {
      short: { type: "string", pattern: "^(ab|cdefgh)$", maxLength: 3 },
      long: { type: "string", pattern: "^(a|bcd)$", minLength: 3 },
      year: { type: "string", format: "date", pattern: "^20" },
      face: { type: "string", pattern: "^([😀-🙏]|\\uD83D\\uDE80){1,3}$" },
    },
    required: ["short", "long", "year", "face"],
    additionalProperties: false,
  },
  "recursive linked list ($ref to the root)": {
    type: "object",
    properties: {
      value: { type: "string", maxLength: 5 },
      next: { anyOf: [{ $ref: "#" }, { type: "null" }] },
    },
    required: ["value", "next"],
    additionalProperties: false,
  },
  "recursive tree ($defs)": {
    $defs: {
      node: {
        type: "object",
        properties: {
          label: { type: "integer", minimum: 0, maximum: 99 },
          children: { type: "array", items: { $ref: "#/$defs/node" }, maxItems: 2 },
        },
        required: ["label", "children"],
        additionalProperties: false,
      },
    },
    $ref: "#/$defs/node",
  },
  "allOf merged": {
    allOf: [
      {
        type: "object",
        properties: { x: { type: "integer", minimum: 0, maximum: 5 } },
        required: ["x"],
      },
      { properties: { y: { type: "boolean" } }, required: ["y"] },
    ],
  },
  "allOf members that both bound one property": {
    allOf: [
      {
        type: "object",
        properties: { a: { type: "integer", minimum: 5 } },
        required: ["a"],
      },
      { properties: { a: { maximum: 7 } } },
    ],
  },
  "oneOf over types, enums and a $ref": {
    $defs: { flag: { type: "boolean" } },
    type: "object",
    properties: {
      v: {
        oneOf: [
          { type: "integer", minimum: 0, maximum: 9 },
          { enum: ["low", "high"] },
          { $ref: "#/$defs/flag" },
          { type: "null" },
        ],
      },
    },
    required: ["v"],
    additionalProperties: false,
  },
  "tuples (zod and pydantic, draft 2020-12)": {
    type: "object",
    properties: {
      point: {
        type: "array",
        prefixItems: [{ type: "number", minimum: -1, maximum: 1 }, { type: "integer" }],
        items: false,
        minItems: 2,
        maxItems: 2,
      },
      optionalTail: {
        type: "array",
        prefixItems: [{ enum: ["a", "b"] }, { type: "boolean" }, { type: "null" }],
        items: false,
        minItems: 1,
        maxItems: 3,
      },
      withRest: {
        type: "array",
        prefixItems: [{ type: "string", maxLength: 4 }],
        items: { type: "integer", minimum: 0, maximum: 9 },
        maxItems: 4,
      },
    },
    required: ["point", "optionalTail", "withRest"],
    additionalProperties: false,
  },
  "tuple (draft 7: items array, additionalItems)": {
    $schema: "http://json-schema.org/draft-07/schema#",
    type: "array",
    items: [{ const: "x" }, { type: "integer", minimum: 0, maximum: 3 }],
    additionalItems: { type: "boolean" },
    minItems: 1,
    maxItems: 4,
  },
  "multipleOf": {
    type: "object",
    properties: {
      even: { type: "integer", multipleOf: 2, minimum: 0, maximum: 100 },
      cents: { type: "number", multipleOf: 0.01, minimum: 0, maximum: 50 },
      quarter: { type: "number", multipleOf: 0.25, exclusiveMinimum: -2, exclusiveMaximum: 2 },
      thousands: { type: "integer", multipleOf: 1000 },
      halves: { type: "integer", multipleOf: 2.5, maximum: 40 },
    },
    required: ["even", "cents", "quarter", "thousands", "halves"],
    additionalProperties: false,
  },
  "top-level array of bounded numbers": {
    type: "array",
    items: { type: "number", minimum: 0.5, maximum: 2.5 },
    minItems: 1,
    maxItems: 4,
  },
};

/**
 * Schemas whose strings and members are unbounded: the random-weight model rarely finishes them
 * within a test's token budget, so they are checked by random walks over the grammar only.
 */
export const UNBOUNDED_SCHEMAS: Record<string, unknown> = {
  "map of values (additionalProperties schema)": {
    type: "object",
    additionalProperties: { type: "integer", minimum: 0, maximum: 3 },
  },
  "record with key names (zod's z.record)": {
    type: "object",
    propertyNames: { type: "string", pattern: "^[a-z]{1,4}$" },
    additionalProperties: { type: "integer", minimum: 0, maximum: 9 },
  },
  "record with enum keys": {
    type: "object",
    propertyNames: { enum: ["red", "green"] },
    additionalProperties: { type: "boolean" },
  },
  "any JSON value": true,
  "object without a type": { properties: { q: {} }, required: ["q"] },
};

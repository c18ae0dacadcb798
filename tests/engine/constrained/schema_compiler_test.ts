import { compileSchema, SCHEMA_LIMITS } from "../../../src/engine/constrained/schema_compiler.ts";
import { ValidationError } from "../../../src/core/errors.ts";
import { MAX_THREADS, startThreads } from "../../../src/engine/constrained/matcher.ts";
import { assertEquals, assertMatch, assertThrows } from "../../_assert.ts";

function refusal(schema: unknown): ValidationError {
  return assertThrows(() => compileSchema(schema, "s"), ValidationError) as ValidationError;
}

Deno.test("compileSchema() refuses a keyword it cannot enforce, naming it and where it is", () => {
  const cases: [unknown, string, RegExp][] = [
    [{ type: "number", multipleOf: 3 }, "s.multipleOf", /multipleOf/],
    [{ type: "object", properties: { a: { not: {} } } }, "s.properties.a.not", /'not'/],
    [{ type: "object", patternProperties: {} }, "s.patternProperties", /patternProperties/],
    [{ type: "object", minProperties: 1 }, "s.minProperties", /minProperties/],
    [{ type: "array", uniqueItems: true }, "s.uniqueItems", /uniqueItems/],
    [{ type: "array", prefixItems: [] }, "s.prefixItems", /prefixItems/],
    [{ if: {}, then: {} }, "s.if", /'if'/],
    [{ type: "string", format: "ipv6" }, "s.format", /ipv6/],
    [{ type: "string", pattern: "a(?=b)" }, "s.pattern", /lookaround/],
    [{ type: "string", pattern: "(a)\\1" }, "s.pattern", /\\1/],
    [{ $ref: "https://example.com/s.json" }, "s.$ref", /within the schema/],
    [{ anyOf: [{ type: "string" }], minLength: 1 }, "s.minLength", /beside anyOf/],
  ];
  for (const [schema, param, message] of cases) {
    const err = refusal(schema);
    assertEquals(err.param, param, JSON.stringify(schema));
    assertMatch(err.message, message);
  }
});

Deno.test("compileSchema() refuses bounds that no value meets", () => {
  assertMatch(refusal({ type: "string", minLength: 3, maxLength: 2 }).message, /minLength/);
  assertMatch(refusal({ type: "integer", minimum: 0.2, maximum: 0.8 }).message, /no integer/);
  assertMatch(refusal({ type: "number", exclusiveMinimum: 1, maximum: 1 }).message, /no number/);
  assertMatch(refusal(false).message, /allows no value/);
});

Deno.test("compileSchema() refuses numbers its digit cap cannot write, and endless required recursion", () => {
  assertMatch(refusal({ type: "integer", minimum: 1e15 }).message, /at most 15 digits/);
  assertMatch(refusal({ type: "number", maximum: -1e15 }).message, /at most 15 digits/);
  compileSchema({ type: "integer", minimum: 1e15 - 1 });
  compileSchema({ type: "number", maximum: -999999999999999.5 });
  const self = { type: "object", properties: { next: { $ref: "#" } }, required: ["next"] };
  assertMatch(refusal(self).message, /no value of finite size/);
  compileSchema({ ...self, required: [] }); // a linked list that may end
});

Deno.test("compileSchema() holds schemas to its limits, each refusal naming the limit and where", () => {
  const nested = (levels: number) => {
    let s: unknown = { type: "string" };
    for (let i = 0; i < levels; i++) s = { type: "array", items: s };
    return s;
  };
  compileSchema(nested(SCHEMA_LIMITS.depth - 1));
  const deep = refusal(nested(SCHEMA_LIMITS.depth));
  assertMatch(deep.message, /nests more than 64 levels/);
  assertMatch(deep.param!, /^s(\.items){64}$/);
  const enumOf = (n: number) => ({ enum: Array.from({ length: n }, (_, i) => i) });
  compileSchema(enumOf(SCHEMA_LIMITS.enumValues));
  assertEquals(refusal(enumOf(SCHEMA_LIMITS.enumValues + 1)).param, "s.enum");
  const wide = {
    anyOf: Array.from({ length: SCHEMA_LIMITS.subschemas }, () => ({ type: "null" })),
  };
  assertMatch(refusal(wide).message, /more than 10000 subschemas/);
  const loop = refusal({ $defs: { a: { $ref: "#/$defs/a" } }, allOf: [{ $ref: "#/$defs/a" }] });
  assertEquals([loop.param, loop.message.split(" (")[0]], [
    "s.allOf.0.$ref",
    '$ref "#/$defs/a" leads back to itself',
  ]);
});

Deno.test("compileSchema() refuses a $ref cycle that reads no text", () => {
  const err = refusal({ $defs: { a: { anyOf: [{ $ref: "#/$defs/a" }] } }, $ref: "#/$defs/a" });
  assertMatch(err.message, /refers to itself/);
});

Deno.test("compileSchema() refuses additionalProperties inside allOf, whose meaning merging would change", () => {
  const err = refusal({
    allOf: [{ properties: { a: {} }, additionalProperties: false }, { properties: { b: {} } }],
  });
  assertMatch(err.message, /additionalProperties within allOf/);
});

Deno.test("compileSchema() refuses allOf members whose schemas of one property contradict", () => {
  const err = refusal({
    allOf: [
      { type: "object", properties: { a: { type: "string" } } },
      { properties: { a: { type: "integer" } } },
    ],
  });
  assertEquals(err.param, "s.properties.a.allOf.1.type");
  assertMatch(err.message, /^allOf members disagree on 'type'/);
});

Deno.test("compileSchema() enforces oneOf only when no value can match two branches", () => {
  const overlapping: unknown[] = [
    { oneOf: [{ type: "integer" }, { type: "number" }] },
    { oneOf: [{ enum: ["a", "b"] }, { enum: ["b", "c"] }] },
    { oneOf: [{ type: "string" }, { type: "string", nullable: true }] },
    // Two objects that {} satisfies alike.
    {
      oneOf: [{ type: "object", properties: { a: {} } }, { type: "object", properties: { b: {} } }],
    },
    // A discriminator only one branch requires does not separate them.
    {
      oneOf: [
        { type: "object", properties: { k: { const: "x" } }, required: ["k"] },
        { type: "object", properties: { k: { const: "y" } } },
      ],
    },
  ];
  for (const schema of overlapping) {
    const err = refusal(schema);
    assertEquals(err.param, "s.oneOf", JSON.stringify(schema));
    assertMatch(err.message, /can match the same value.*use anyOf/);
  }
  const exclusive: unknown[] = [
    { oneOf: [{ type: "integer" }, { type: "string" }, { type: "null" }] },
    { oneOf: [{ const: 1 }, { const: 2 }, { enum: ["a", null] }] },
    { $defs: { s: { type: "string" } }, oneOf: [{ $ref: "#/$defs/s" }, { type: "boolean" }] },
    {
      oneOf: [
        { type: "object", properties: { k: { const: "x" } }, required: ["k"] },
        { type: "object", properties: { k: { enum: ["y", "z"] } }, required: ["k"] },
      ],
    },
  ];
  for (const schema of exclusive) compileSchema(schema, "s");
});

Deno.test("startThreads() refuses a grammar with more ways to go on than MAX_THREADS", () => {
  const branches = (n: number) => ({
    anyOf: Array.from({ length: n }, (_, i) => ({ type: "string", maxLength: i })),
  });
  assertEquals(startThreads(compileSchema(branches(MAX_THREADS))).length, MAX_THREADS);
  const grammar = compileSchema(branches(MAX_THREADS + 1));
  assertThrows(() => startThreads(grammar), ValidationError, "too ambiguous");
});

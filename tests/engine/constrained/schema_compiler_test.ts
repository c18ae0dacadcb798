import { compileSchema, SCHEMA_LIMITS } from "../../../src/engine/constrained/schema_compiler.ts";
import { ValidationError } from "../../../src/core/errors.ts";
import {
  canFinish,
  feedBytes,
  MAX_THREADS,
  startThreads,
} from "../../../src/engine/constrained/matcher.ts";
import { assertEquals, assertMatch, assertThrows } from "../../_assert.ts";

function refusal(schema: unknown): ValidationError {
  return assertThrows(() => compileSchema(schema, "s"), ValidationError) as ValidationError;
}

Deno.test("compileSchema() refuses a keyword it cannot enforce, naming it and where it is", () => {
  const cases: [unknown, string, RegExp][] = [
    [{ type: "number", multipleOf: 0 }, "s.multipleOf", /greater than 0/],
    [{ type: "number", multipleOf: "2" }, "s.multipleOf", /greater than 0/],
    [{ type: "object", properties: { a: { not: {} } } }, "s.properties.a.not", /'not'/],
    [{ type: "object", patternProperties: {} }, "s.patternProperties", /patternProperties/],
    [{ type: "object", minProperties: 1 }, "s.minProperties", /minProperties/],
    [{ type: "array", uniqueItems: true }, "s.uniqueItems", /uniqueItems/],
    [{ type: "array", prefixItems: [] }, "s.prefixItems", /non-empty array/],
    [{ type: "array", prefixItems: [{}], items: [{}] }, "s.items", /beside prefixItems/],
    [{ type: "array", prefixItems: [{}], additionalItems: {} }, "s.additionalItems", /items as/],
    [{ type: "array", items: {}, additionalItems: {} }, "s.additionalItems", /tuple items/],
    [{ prefixItems: [{}], items: false, minItems: 2 }, "s.minItems", /the 1 items/],
    [{ prefixItems: Array(20).fill({}), items: false }, "s.prefixItems", /at most 16 optional/],
    [{ if: {}, then: {} }, "s.if", /'if'/],
    [{ type: "string", format: "jwt" }, "s.format", /jwt/],
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

const utf8 = new TextEncoder();
/** Whether `text` is a whole value of the schema (`end`), a prefix of one (`open`), or neither. */
function read(schema: unknown, text: string): "end" | "open" | "dead" {
  const threads = feedBytes(startThreads(compileSchema(schema)), utf8.encode(text));
  return threads.length === 0 ? "dead" : canFinish(threads) ? "end" : "open";
}

Deno.test("multipleOf: every number with at most two decimals in [-3, 3] is taken exactly when it is a multiple within the bounds", () => {
  // The oracle is whole hundredths: v = h / 100 is a multiple of n / 100 when n divides h.
  const cases = [
    {
      schema: { type: "number", multipleOf: 0.25, minimum: -1.5, exclusiveMaximum: 2 },
      n: 25,
      lo: -150,
      hi: 199,
    },
    { schema: { type: "number", multipleOf: 0.1 }, n: 10, lo: -300, hi: 300 },
    { schema: { type: "number", multipleOf: 0.07, exclusiveMinimum: 0 }, n: 7, lo: 1, hi: 300 },
    { schema: { type: "integer", multipleOf: 1.5, maximum: 2 }, n: 300, lo: -300, hi: 200 },
    { schema: { type: "number", multipleOf: 1e-9 }, n: 1, lo: -300, hi: 300 },
  ];
  for (const { schema, n, lo, hi } of cases) {
    for (let h = -300; h <= 300; h++) {
      const text = (h / 100).toFixed(2);
      const trimmed = String(h / 100);
      const expected = h >= lo && h <= hi && h % n === 0;
      for (const t of schema.type === "integer" ? [trimmed] : [text, trimmed]) {
        const got = read(schema, t) === "end";
        assertEquals(got, expected, `${JSON.stringify(schema)}: ${t}`);
      }
    }
  }
  // Prefixes stay open only while some multiple within the bounds can still be written.
  const sevens = { type: "integer", multipleOf: 7, minimum: 10, maximum: 30 };
  assertEquals(["1", "2", "3", "14", "21", "28", "7", "35"].map((t) => read(sevens, t)), [
    "open",
    "open",
    "dead",
    "end",
    "end",
    "end",
    "dead",
    "dead",
  ]);
  assertEquals(read({ type: "number", multipleOf: 0.5 }, "1e3"), "dead"); // no exponents
  assertMatch(
    refusal({ type: "integer", multipleOf: 7, minimum: 1, maximum: 6 }).message,
    /no multiple of 7/,
  );
});

Deno.test("tuples: prefixItems (and draft 7's items array) give each position its own schema", () => {
  const closed = {
    prefixItems: [{ type: "string" }, { type: "integer" }],
    items: false,
    minItems: 1,
    maxItems: 2,
  };
  assertEquals(
    ["[]", '["a"]', '["a", 1]', '["a",1,2]', "[1]", '["a",'].map((t) => read(closed, t)),
    ["dead", "end", "end", "dead", "dead", "open"],
  );
  const rest = { prefixItems: [{ const: "h" }], items: { type: "boolean" }, minItems: 3 };
  assertEquals(
    ['["h",true]', '["h",true,false]', '["h",true,false,true]', '["h",1]'].map((t) =>
      read(rest, t)
    ),
    ["dead", "end", "end", "dead"], // minItems 3
  );
  const draft7 = { items: [{ const: 1 }, { const: 2 }], additionalItems: false };
  assertEquals(
    ["[]", "[1]", "[1,2]", "[1,2,3]", "[2]"].map((t) => read(draft7, t)),
    ["end", "end", "end", "dead", "dead"],
  );
  // Without a schema for the rest, items after the tuple's own are any value.
  assertEquals(read({ prefixItems: [{ const: 1 }] }, '[1,{"x":[null]},"y"]'), "end");
});

Deno.test("propertyNames: the keys of a record match a string schema", () => {
  const record = {
    type: "object",
    propertyNames: { type: "string", pattern: "^[a-z]{1,3}$" },
    additionalProperties: { type: "number" },
  };
  assertEquals(
    ["{}", '{"ab":1,"c":2}', '{"abcd":1}', '{"A":1}', '{"a":"x"}'].map((t) => read(record, t)),
    ["end", "end", "dead", "dead", "dead"],
  );
  const keys = { propertyNames: { enum: ["x", "y"] } };
  assertEquals(['{"y":[],"x":null}', '{"z":1}'].map((t) => read(keys, t)), ["end", "dead"]);
  // zod's record with enum keys: every key required, their values additionalProperties'.
  const exhaustive = {
    type: "object",
    propertyNames: { type: "string", enum: ["a", "b"] },
    additionalProperties: { type: "integer" },
    required: ["a", "b"],
  };
  assertEquals(
    ['{"a":1,"b":2}', '{"a":1}', '{"a":"x"', '{"c":1'].map((t) => read(exhaustive, t)),
    ["end", "dead", "dead", "dead"],
  );
  // A declared property whose name propertyNames refuses can never be written.
  const lower = {
    properties: { a: {}, B: {} },
    required: ["a"],
    propertyNames: { pattern: "^[a-z]$" },
  };
  assertEquals(['{"a":1}', '{"a":1,"B":2}'].map((t) => read(lower, t)), ["end", "dead"]);
  const cases: [unknown, string, RegExp][] = [
    [{ type: "object", propertyNames: { type: "integer" } }, "s.propertyNames", /of strings/],
    [{ propertyNames: { enum: ["a", 1] } }, "s.propertyNames", /schema of strings/],
    [{ ...lower, required: ["B"] }, "s.required", /"B" does not match propertyNames/],
    [{ required: ["A"], propertyNames: { pattern: "^[a-z]$" } }, "s.required", /"A" is refused/],
    [{ required: ["x"], additionalProperties: false }, "s.required", /additionalProperties: false/],
  ];
  for (const [schema, param, message] of cases) {
    const err = refusal(schema);
    assertEquals(err.param, param);
    assertMatch(err.message, message);
  }
});

Deno.test("a required property without a schema of its own takes additionalProperties' schema", () => {
  const schema = { required: ["x"], additionalProperties: { type: "integer" } };
  assertEquals(['{"x":3}', '{"x":"s"'].map((t) => read(schema, t)), ["end", "dead"]);
  assertEquals(read({ required: ["x"] }, '{"x":[true]}'), "end");
});

Deno.test("a format we do not know beside a pattern is the pattern's name, as zod writes them", () => {
  const hex = { type: "string", format: "hex", pattern: "^[0-9a-f]*$" };
  assertEquals(['"0af"', '"xyz"'].map((t) => read(hex, t)), ["end", "dead"]);
  // zod's base64: an anchored alternation, and contentEncoding (an annotation).
  const base64 = {
    type: "string",
    format: "base64",
    contentEncoding: "base64",
    pattern: "^$|^(?:[0-9a-zA-Z+/]{4})*(?:(?:[0-9a-zA-Z+/]{2}==)|(?:[0-9a-zA-Z+/]{3}=))?$",
  };
  assertEquals(['""', '"QUJD"', '"QUI="', '"QUJ"'].map((t) => read(base64, t)), [
    "end",
    "end",
    "end",
    "dead",
  ]);
});

Deno.test("compileSchema() refuses bounds that no value meets", () => {
  assertMatch(refusal({ type: "string", minLength: 3, maxLength: 2 }).message, /minLength/);
  assertMatch(refusal({ type: "integer", minimum: 0.2, maximum: 0.8 }).message, /no integer/);
  assertMatch(refusal({ type: "number", exclusiveMinimum: 1, maximum: 1 }).message, /no number/);
  assertMatch(refusal(false).message, /allows no value/);
  // Strings: a pattern (with a format) no string of the allowed lengths matches.
  for (
    const schema of [
      { type: "string", pattern: "^a$", minLength: 3 },
      { type: "string", pattern: "^a{4}$", maxLength: 3 },
      { type: "string", format: "date", pattern: "^x" },
      { type: "string", pattern: "^[\\uD800-\\uDFFF]+$" },
    ]
  ) assertMatch(refusal(schema).message, /no string matches/, JSON.stringify(schema));
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

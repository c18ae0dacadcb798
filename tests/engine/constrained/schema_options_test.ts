// compileSchema()'s options, vLLM's structured_outputs flags: `compact` (disable_any_whitespace)
// leaves no whitespace outside strings anywhere in the value, `closedObjects`
// (disable_additional_properties) takes objects that list properties as additionalProperties:
// false, at every depth, and leaves the rest as they are.
import {
  compileSchema,
  type SchemaOptions,
} from "../../../src/engine/constrained/schema_compiler.ts";
import { canFinish, feedBytes, startThreads } from "../../../src/engine/constrained/matcher.ts";
import { ValidationError } from "../../../src/core/errors.ts";
import { assertEquals, assertMatch, assertThrows } from "../../_assert.ts";

const utf8 = new TextEncoder();
/** Whether `text` is a whole value of the schema (`end`), a prefix of one (`open`), or neither. */
function read(schema: unknown, text: string, options: SchemaOptions = {}): "end" | "open" | "dead" {
  const threads = feedBytes(startThreads(compileSchema(schema, "s", options)), utf8.encode(text));
  return threads.length === 0 ? "dead" : canFinish(threads) ? "end" : "open";
}

Deno.test("compact: no space after ':' or ',' in objects, arrays, tuples or free values; strings keep theirs", () => {
  const schema = {
    type: "object",
    properties: {
      a: { type: "integer" },
      list: { type: "array", items: { type: "string" } },
      pair: { prefixItems: [{ type: "integer" }, { type: "boolean" }], items: false },
      free: true,
      record: { type: "object", additionalProperties: { type: "integer" } },
    },
    required: ["a", "list", "pair", "free", "record"],
  };
  const compact = '{"a":1,"list":["x y"," "],"pair":[2,true],"free":{"k":[1,{}]},"record":{"r":3}}';
  assertEquals(read(schema, compact, { compact: true }), "end");
  assertEquals(read(schema, compact), "end");
  const spaced = [
    '{"a": 1',
    '{"a":1, "list"',
    '{"a":1,"list":["x", "y"',
    '{"a":1,"list":[],"pair":[2, true',
    '{"a":1,"list":[],"pair":[2,true],"free":{"k": 1',
    '{"a":1,"list":[],"pair":[2,true],"free":[1, 2',
    '{"a":1,"list":[],"pair":[2,true],"free":null,"record":{"r": 3',
  ];
  for (const text of spaced) {
    assertEquals(read(schema, text, { compact: true }), "dead", text);
    assertEquals(read(schema, text), "open", text);
  }
});

Deno.test("closedObjects: an object that lists properties and says nothing of others gets none, at every depth", () => {
  const options = { closedObjects: true };
  const empty = { type: "object", properties: {} };
  assertEquals(read(empty, "{}", options), "end");
  assertEquals(read(empty, '{"k"', options), "dead");
  assertEquals(read(empty, '{"k":1}'), "end");
  // Through items, $defs, anyOf and additionalProperties' own schema.
  const nested = {
    $defs: { box: { type: "object", properties: { inner: empty } } },
    type: "array",
    items: {
      anyOf: [
        { $ref: "#/$defs/box" },
        { type: "object", additionalProperties: empty },
      ],
    },
  };
  assertEquals(read(nested, '[{"inner":{}},{"any":{}}]', options), "end");
  assertEquals(read(nested, '[{"inner":{"k"', options), "dead");
  assertEquals(read(nested, '[{"any":{"k"', options), "dead");
  assertEquals(read(nested, '[{"inner":{"k":1}},{"any":{"k":2}}]'), "end");
});

Deno.test("closedObjects leaves objects without properties open, keeps what the schema says and merges allOf first", () => {
  const options = { closedObjects: true };
  assertEquals(read({ type: "object" }, '{"k":[1]}', options), "end");
  assertEquals(read(true, '{"k":{"j":2}}', options), "end");
  const stated = { type: "object", properties: {}, additionalProperties: { type: "integer" } };
  assertEquals(read(stated, '{"k":1}', options), "end");
  assertEquals(read(stated, '{"k":"s"', options), "dead");
  // allOf members are one object once merged, so each one's properties are allowed.
  const merged = {
    allOf: [
      { type: "object", properties: { a: { type: "integer" } }, required: ["a"] },
      { properties: { b: { type: "integer" } }, required: ["b"] },
    ],
  };
  assertEquals(read(merged, '{"a":1,"b":2}', options), "end");
  // A required name without a property schema has nowhere to go.
  const loose = { type: "object", properties: { a: {} }, required: ["a", "b"] };
  assertEquals(read(loose, '{"a":1,"b":2}'), "end");
  const err = assertThrows(() => compileSchema(loose, "s", options), ValidationError);
  assertEquals(err.param, "s.required");
  assertMatch(err.message, /"b" is refused by disable_additional_properties/);
});

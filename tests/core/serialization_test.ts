import { assert, assertEquals, assertThrows } from "../_assert.ts";
import { ValidationError } from "../../src/core/errors.ts";
import { deserialize, fromJson, serialize, toJson } from "../../src/core/serialization.ts";
import { findJsonErrorPosition } from "../../src/core/_json_position.ts";

function roundTrip<T>(value: T): T {
  const text = serialize(value);
  JSON.parse(text); // always valid JSON
  return deserialize(text) as T;
}

Deno.test("serialize() round-trips plain JSON values unchanged", () => {
  const value = { a: 1, b: "two", c: [true, false, null], d: { e: -3.5, f: "" } };
  assertEquals(roundTrip(value), value);
  assertEquals(serialize(value), JSON.stringify(value));
  for (const scalar of [0, "x", true, null, 1.5]) assertEquals(roundTrip(scalar), scalar);
});

Deno.test("serialize() round-trips Dates, including invalid ones", () => {
  const date = new Date("2024-02-29T12:34:56.789Z");
  const back = roundTrip({ date, list: [new Date(0)] });
  assert(back.date instanceof Date);
  assertEquals(back.date.getTime(), date.getTime());
  assertEquals(back.list[0].getTime(), 0);
  assert(Number.isNaN(roundTrip(new Date("nope")).getTime()));
});

Deno.test("serialize() round-trips Maps with any keys and Sets", () => {
  const map = new Map<unknown, unknown>([["a", 1], [2, "two"], [{ k: 1 }, new Set([1, 2])]]);
  const back = roundTrip(map);
  assert(back instanceof Map);
  assertEquals(back, map);
  const set = new Set(["x", 1, new Date(5)]);
  assertEquals(roundTrip(set), set);
});

Deno.test("serialize() round-trips every typed array kind, ArrayBuffer and DataView", () => {
  const arrays = [
    new Int8Array([-128, 0, 127]),
    new Uint8Array([0, 255]),
    new Uint8ClampedArray([0, 200]),
    new Int16Array([-32768, 32767]),
    new Uint16Array([65535]),
    new Int32Array([-(2 ** 31), 2 ** 31 - 1]),
    new Uint32Array([2 ** 32 - 1]),
    new Float32Array([1.5, -0, NaN, Infinity, 3.4e38]),
    new Float64Array([Math.PI, -Infinity, Number.MIN_VALUE]),
    new BigInt64Array([-(2n ** 63n), 2n ** 63n - 1n]),
    new BigUint64Array([2n ** 64n - 1n]),
    new Float32Array(0),
  ];
  for (const array of arrays) {
    const back = roundTrip(array);
    assertEquals(back.constructor, array.constructor);
    assertEquals(back, array);
  }
  // A view into part of a larger buffer keeps only its own elements.
  const big = new Float32Array([1, 2, 3, 4]);
  assertEquals(roundTrip(big.subarray(1, 3)), new Float32Array([2, 3]));
  const buffer = new Uint8Array([1, 2, 3]).buffer;
  const backBuffer = roundTrip(buffer);
  assert(backBuffer instanceof ArrayBuffer);
  assertEquals(new Uint8Array(backBuffer), new Uint8Array([1, 2, 3]));
  const view = roundTrip(new DataView(new Uint8Array([9, 8, 7]).buffer, 1, 2));
  assert(view instanceof DataView);
  assertEquals([view.getUint8(0), view.getUint8(1)], [8, 7]);
});

Deno.test("serialize() round-trips a large typed array", () => {
  const big = new Float32Array(200_000).map((_, i) => Math.sin(i));
  assertEquals(roundTrip(big), big);
});

Deno.test("serialize() round-trips bigint, undefined, NaN, Infinity and -0", () => {
  const value = {
    big: 12345678901234567890123n,
    neg: -5n,
    missing: undefined,
    list: [1, undefined, 3],
    nan: NaN,
    inf: Infinity,
    ninf: -Infinity,
    negZero: -0,
  };
  const back = roundTrip(value);
  assertEquals(back, value);
  assert(Object.hasOwn(back, "missing"));
  assert(Object.is(back.negZero, -0));
  assertEquals(roundTrip(undefined), undefined);
  // Holes in arrays come back as undefined.
  // deno-lint-ignore no-sparse-arrays
  assertEquals(roundTrip([1, , 3]), [1, undefined, 3]);
});

Deno.test("serialize() round-trips nested structures and RegExps", () => {
  const value = {
    runs: new Map([["r1", {
      at: new Date(1000),
      scores: new Float64Array([0.5]),
      ids: new Set([1n]),
    }]]),
    re: /a+b/gi,
  };
  const back = roundTrip(value);
  assertEquals(back, value);
  assertEquals(back.re.flags, "gi");
});

Deno.test("serialize() keeps user objects that look like tags as plain objects", () => {
  const tricky = [
    { $svc: "Date", v: 0 },
    { $svc: "Object", v: { $svc: "BigInt", v: "1" } },
    { $svc: 42 },
    { outer: { $svc: "undefined" } },
  ];
  assertEquals(roundTrip(tricky), tricky);
});

Deno.test("deserialize() sets a __proto__ key as an own property, not the prototype", () => {
  const value = JSON.parse('{"__proto__": {"polluted": true}, "a": 1}');
  const back = roundTrip(value) as { [k: string]: unknown };
  assertEquals(Object.getPrototypeOf(back), Object.prototype);
  assert(Object.hasOwn(back, "__proto__"));
  assertEquals(({} as { polluted?: boolean }).polluted, undefined);
});

Deno.test("serialize() stores class instances as plain objects and uses toJSON", () => {
  class Point {
    constructor(public x: number, public y: number) {}
  }
  assertEquals(roundTrip(new Point(1, 2)), { x: 1, y: 2 } as unknown as Point);
  assertEquals(roundTrip({ toJSON: () => "custom" }), "custom" as unknown);
});

Deno.test("serialize() rejects functions, symbols and cycles, naming the path", () => {
  assertThrows(() => serialize({ a: { fn: () => 1 } }), ValidationError, "function at $.a.fn");
  assertThrows(() => serialize([Symbol("s")]), ValidationError, "symbol at $[0]");
  const loop: { [k: string]: unknown } = {};
  loop.again = { back: loop };
  assertThrows(() => serialize(loop), ValidationError, "circular reference at $.again.back");
  // Shared but not circular references are fine.
  const shared = { n: 1 };
  assertEquals(roundTrip({ a: shared, b: shared }), { a: { n: 1 }, b: { n: 1 } });
});

Deno.test("deserialize() raises ValidationError for malformed text and malformed tags", () => {
  const cases: [string, string][] = [
    ["{not json", "malformed JSON"],
    ["", "malformed JSON"],
    ['{"$svc":"Nope","v":1}', 'unknown tag "Nope"'],
    ['{"$svc":"BigInt","v":"12x"}', "BigInt payload"],
    ['{"$svc":"Date","v":"yesterday"}', "Date payload"],
    ['{"$svc":"Map","v":[[1]]}', "Map payload"],
    ['{"$svc":"Set","v":{}}', "Set payload"],
    ['{"$svc":"Number","v":"Big"}', "Number payload"],
    ['{"$svc":"Float32Array","v":"AAA="}', "not a multiple of 4"],
    ['{"$svc":"Uint8Array","v":"!!!"}', "not valid base64"],
    ['{"$svc":"Uint8Array","v":5}', "base64 string"],
    ['{"$svc":"Date","v":0,"extra":1}', "tag object must be"],
    ['{"$svc":"Object","v":[1]}', "Object payload"],
    ['{"$svc":"RegExp","v":{"source":"(","flags":""}}', "invalid RegExp"],
    ['{"a":[{"$svc":"BigInt","v":null}]}', "at $.a[0]"],
  ];
  for (const [text, message] of cases) {
    assertThrows(() => deserialize(text), ValidationError, message);
  }
});

Deno.test("toJson() writes plain JSON, compact or pretty", () => {
  assertEquals(toJson({ a: 1, b: [true, null] }), '{"a":1,"b":[true,null]}');
  assertEquals(toJson({ a: [1] }, { pretty: true }), '{\n  "a": [\n    1\n  ]\n}');
  assertEquals(toJson("x"), '"x"');
});

Deno.test("toJson() converts bigint, Map, Set, typed arrays and Dates to plain JSON", () => {
  const text = toJson({
    big: 2n ** 70n,
    map: new Map([["k", 1]]),
    pairs: new Map([[1, "one"]]),
    set: new Set([1, 2]),
    floats: new Float32Array([0.5, 1]),
    longs: new BigInt64Array([3n]),
    at: new Date(0),
    nan: NaN,
  });
  assertEquals(JSON.parse(text), {
    big: "1180591620717411303424",
    map: { k: 1 },
    pairs: [[1, "one"]],
    set: [1, 2],
    floats: [0.5, 1],
    longs: ["3"],
    at: "1970-01-01T00:00:00.000Z",
    nan: null,
  });
});

Deno.test("toJson() rejects undefined, functions and cycles (also through a Map)", () => {
  assertThrows(() => toJson(undefined), ValidationError, "undefined");
  assertThrows(() => toJson(() => 1), ValidationError, "function");
  const loop: { [k: string]: unknown } = {};
  loop.self = loop;
  assertThrows(() => toJson(loop), ValidationError, "circular");
  const map = new Map<string, unknown>();
  map.set("me", map);
  assertThrows(() => toJson({ map }), ValidationError, "circular");
  const shared = [1];
  assertEquals(
    toJson({ a: shared, b: shared, c: new Map([["d", shared]]) }),
    '{"a":[1],"b":[1],"c":{"d":[1]}}',
  );
});

Deno.test("fromJson() parses JSON and skips a byte-order mark", () => {
  assertEquals(fromJson('{"a": [1, "b", null]}'), { a: [1, "b", null] });
  assertEquals(fromJson("\uFEFF[1]"), [1]);
});

Deno.test("fromJson() raises ValidationError naming line, column and position", () => {
  const err = assertThrows(
    () => fromJson('{\n  "a": 1,\n  "b": oops\n}'),
    ValidationError,
    "malformed JSON at line 3, column 8 (position 19)",
  );
  assert(err.cause instanceof SyntaxError);
  assertThrows(() => fromJson('{"a": 1'), ValidationError, "position 7");
  assertThrows(() => fromJson(""), ValidationError, "line 1, column 1 (position 0)");
  assertThrows(() => fromJson(42 as unknown as string), ValidationError, "got number");
});

Deno.test("fromJson() points at the first bad character of many malformed inputs", () => {
  const cases: [string, number][] = [
    ["[1,]", 3],
    ['{"a" 1}', 5],
    ['"abc', 4],
    ["tru", 0],
    ["01", 1],
    ['{"a":"\\x"}', 7],
    ["[1 2]", 3],
    ["{} x", 3],
    ["{'a': 1}", 1],
    ["-", 0],
    ["[1.]", 2],
  ];
  for (const [text, position] of cases) {
    assertThrows(() => fromJson(text), ValidationError, `(position ${position})`);
  }
});

Deno.test("findJsonErrorPosition() agrees with JSON.parse on every prefix of a document", () => {
  const doc = JSON.stringify({
    a: [1, -2.5e3, true, false, null],
    's"q': "t\\u00e9\n\u0001",
    nested: { deep: [[], {}, ""] },
  });
  for (let end = 0; end <= doc.length; end++) {
    const text = doc.slice(0, end);
    let valid = true;
    try {
      JSON.parse(text);
    } catch {
      valid = false;
    }
    const position = findJsonErrorPosition(text);
    assertEquals(position === -1, valid, `prefix ${JSON.stringify(text)}`);
  }
});

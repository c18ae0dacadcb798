import { joinLists, JsonTextWriter, LazyJsonArray } from "../../src/protocol/json_text.ts";
import { mulberry32 } from "../../src/core/random.ts";
import { assert, assertEquals, assertThrows } from "../_assert.ts";

// Everything the writer writes, in slices of `chars`.
function written(value: unknown, chars: number): { text: string; slices: number } {
  const writer = new JsonTextWriter(value);
  const parts: string[] = [];
  for (let slice = writer.next(chars); slice !== null; slice = writer.next(chars)) {
    parts.push(slice);
  }
  return { text: parts.join(""), slices: parts.length };
}

// A random JSON-ish value: what JSON.stringify writes, skips or turns into null included.
function randomValue(next: () => number, depth: number): unknown {
  const pick = Math.floor(next() * (depth > 3 ? 9 : 13));
  switch (pick) {
    case 0:
      return null;
    case 1:
      return next() < 0.5;
    case 2:
      return (next() - 0.5) * 10 ** Math.floor(next() * 40 - 20);
    case 3:
      return [NaN, Infinity, -0, 0][Math.floor(next() * 4)];
    case 4:
      return String.fromCharCode(...Array.from({ length: 6 }, () => Math.floor(next() * 0x3000)));
    case 5:
      return ['"quoted"\n', "\\", "\u2028", "\ud800", "__proto__"][Math.floor(next() * 5)];
    case 6:
      return undefined;
    case 7:
      return () => 1;
    case 8:
      return new Date(Math.floor(next() * 1e12));
    case 9:
    case 10:
      return Array.from({ length: Math.floor(next() * 6) }, () => randomValue(next, depth + 1));
    case 11: {
      const out: Record<string, unknown> = {};
      for (let i = Math.floor(next() * 5); i > 0; i--) {
        out[String.fromCharCode(97 + Math.floor(next() * 26)) + i] = randomValue(next, depth + 1);
      }
      return out;
    }
    default: {
      const inner = randomValue(next, depth + 1);
      return { toJSON: (key: string) => ({ key, inner }) };
    }
  }
}

Deno.test("JsonTextWriter writes what JSON.stringify writes, whatever the slice size", () => {
  const next = mulberry32(7);
  for (let i = 0; i < 400; i++) {
    const value = { root: randomValue(next, 0) };
    const expected = JSON.stringify(value);
    for (const chars of [1, 7, 64, 1 << 20]) {
      assertEquals(written(value, chars).text, expected, `value ${i}, slices of ${chars}`);
    }
  }
});

Deno.test("JsonTextWriter writes a top-level value as JSON.stringify does, and refuses none", () => {
  for (
    const value of [
      1,
      "a",
      null,
      [undefined, () => 1],
      { toJSON: () => [1, 2] },
      new Number(3),
    ]
  ) {
    assertEquals(written(value, 1).text, JSON.stringify(value));
  }
  assertThrows(() => new JsonTextWriter(undefined).next(10), TypeError);
});

Deno.test("JsonTextWriter cuts a long answer into slices of about the asked length", () => {
  const value = { data: Array.from({ length: 5000 }, (_, i) => ({ index: i, v: [i, i / 3] })) };
  const { text, slices } = written(value, 4096);
  assertEquals(text, JSON.stringify(value));
  assert(slices >= Math.floor(text.length / 8192), `${slices} slices for ${text.length} chars`);
  // A float vector is written a run at a time, and still cut.
  const vector = { embedding: Array.from({ length: 20_000 }, (_, i) => Math.sin(i)) };
  const cut = written(vector, 1000);
  assertEquals(cut.text, JSON.stringify(vector));
  assert(cut.slices >= 4, `${cut.slices} slices`);
  // So is a list of long strings (base64 embeddings).
  const strings = { data: Array.from({ length: 100 }, (_, i) => String(i).repeat(10_000)) };
  const long = written(strings, 50_000);
  assertEquals(long.text, JSON.stringify(strings));
  assert(long.slices >= 10, `${long.slices} slices`);
});

Deno.test("JsonTextWriter throws on a cycle, as JSON.stringify does", () => {
  const a: Record<string, unknown> = { x: 1 };
  a.self = { back: a };
  assertThrows(() => written(a, 1 << 20), TypeError, "circular");
  // The same object twice, not inside itself, is no cycle.
  const shared = { v: 1 };
  assertEquals(written([shared, shared], 1).text, '[{"v":1},{"v":1}]');
});

Deno.test("LazyJsonArray makes its items as they are written, and is an array to JSON.stringify", () => {
  const made: number[] = [];
  const lazy = new LazyJsonArray(3, (i) => {
    made.push(i);
    return { i };
  });
  const writer = new JsonTextWriter({ list: lazy });
  let text = "";
  while (!text.endsWith("[")) text += writer.next(1);
  assertEquals(text, '{"list":[');
  assertEquals(made, []);
  writer.next(1);
  assertEquals(made, [0]);
  assertEquals(JSON.stringify(lazy), '[{"i":0},{"i":1},{"i":2}]');
  assertEquals(JSON.stringify(joinLists([{ i: -1 }], lazy)), '[{"i":-1},{"i":0},{"i":1},{"i":2}]');
});

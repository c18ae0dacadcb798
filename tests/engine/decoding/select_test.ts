import { selectTop } from "../../../src/engine/decoding/_select.ts";
import { Rng } from "../../../src/engine/decoding/rng.ts";
import { assertEquals } from "../../_assert.ts";

function reference(values: Float32Array, k: number): number[] {
  return [...values.keys()].sort((a, b) => values[b] - values[a] || a - b).slice(0, k);
}

Deno.test("selectTop() equals a full sort (value desc, id asc) for every path and shape", () => {
  const rng = new Rng(17);
  const shapes: ((i: number) => number)[] = [
    () => rng.nextFloat(),
    () => rng.nextUint32() % 5, // many ties
    (i) => i, // ascending: the scan path gives up and falls back
    (i) => -i,
  ];
  for (let trial = 0; trial < 120; trial++) {
    const n = 1 + (rng.nextUint32() % 2500);
    const shape = shapes[trial % shapes.length];
    const values = Float32Array.from({ length: n }, (_, i) => shape(i));
    for (const k of [1, 7, 128, 129, 700, n, n + 5]) {
      const out = new Int32Array(n);
      const count = selectTop(values, k, out);
      assertEquals([...out.subarray(0, count)], reference(values, k), `n ${n}, k ${k}`);
    }
  }
});

Deno.test("selectTop() ranks NaN after every number", () => {
  const values = new Float32Array([Number.NaN, 1, Number.NaN, -Infinity, 2]);
  for (const k of [3, 5]) {
    const out = new Int32Array(5);
    assertEquals([...out.subarray(0, selectTop(values, k, out))], [4, 1, 3, 0, 2].slice(0, k));
  }
  const many = Float32Array.from({ length: 300 }, (_, i) => (i % 3 === 0 ? Number.NaN : i));
  const out = new Int32Array(300);
  const count = selectTop(many, 250, out);
  assertEquals(count, 250);
  assertEquals(out[199], 1); // the 200 numbers first, then NaNs by id
  assertEquals([...out.subarray(200, 203)], [0, 3, 6]);
});

import { assertEquals } from "../../_assert.ts";
import {
  assembleCache,
  type CacheTensor,
  leftPaddedMask,
} from "../../../src/engine/chat/kv_cache.ts";

/** A cache whose element at [b, h, t, d] is `b*1000 + h*100 + t*10 + d`. */
function labelled(batch: number, heads: number, length: number, dim: number): CacheTensor {
  const data = new Float32Array(batch * heads * length * dim);
  for (let b = 0; b < batch; b++) {
    for (let h = 0; h < heads; h++) {
      for (let t = 0; t < length; t++) {
        for (let d = 0; d < dim; d++) {
          data[((b * heads + h) * length + t) * dim + d] = b * 1000 + h * 100 + t * 10 + d;
        }
      }
    }
  }
  return { data, dims: [batch, heads, length, dim] };
}

function at(t: CacheTensor, b: number, h: number, s: number, d: number): number {
  const [, heads, length, dim] = t.dims;
  return t.data[((b * heads + h) * length + s) * dim + d];
}

Deno.test("assembleCache() right-aligns each slice to the longest one", () => {
  const a = labelled(2, 2, 5, 3); // rows of 5 columns
  const b = labelled(1, 2, 3, 3); // one row of 3 columns
  const [out] = assembleCache([
    { layers: [a], row: 1, length: 2 }, // last 2 columns of a's row 1
    { layers: [b], row: 0, length: 3 },
  ]);
  assertEquals(out.dims, [2, 2, 3, 3]);
  // Row 0: one padding column of zeros, then columns 3 and 4 of a's row 1.
  assertEquals(at(out, 0, 1, 0, 2), 0);
  assertEquals(at(out, 0, 1, 1, 2), 1000 + 100 + 30 + 2);
  assertEquals(at(out, 0, 0, 2, 0), 1000 + 40);
  // Row 1: all of b.
  assertEquals(at(out, 1, 1, 0, 1), 100 + 1);
  assertEquals(at(out, 1, 0, 2, 2), 22);
});

Deno.test("assembleCache() keeps per-layer tensors apart and works for float16 bits", () => {
  const key = { data: new Uint16Array([1, 2, 3, 4]), dims: [1, 1, 2, 2] as const };
  const value = { data: new Uint16Array([5, 6, 7, 8]), dims: [1, 1, 2, 2] as const };
  const [k, v] = assembleCache([{ layers: [key, value], row: 0, length: 1 }]);
  assertEquals([...k.data], [3, 4]);
  assertEquals([...v.data], [7, 8]);
  assertEquals(k.data instanceof Uint16Array, true);
});

Deno.test("assembleCache() takes a whole one-row cache as it is, and copies a part of one", () => {
  const layers = [labelled(1, 2, 3, 2), labelled(1, 2, 3, 2)];
  const whole = assembleCache([{ layers, row: 0, length: 3 }]);
  assertEquals(whole[0] === layers[0] && whole[1] === layers[1], true);
  const part = assembleCache([{ layers, row: 0, length: 2 }]);
  assertEquals(part[0] === layers[0], false);
  assertEquals(part[0].dims, [1, 2, 2, 2]);
});

Deno.test("leftPaddedMask() hides padding and adds the new tokens", () => {
  const mask = leftPaddedMask([3, 1], 3, 1);
  assertEquals(mask.dims, [2, 4]);
  assertEquals([...mask.data], [1n, 1n, 1n, 1n, 0n, 0n, 1n, 1n]);
});

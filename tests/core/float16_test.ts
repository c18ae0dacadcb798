import { assertEquals } from "../_assert.ts";
import { floatToHalf } from "../../src/core/float16.ts";
import { mulberry32 } from "../../src/core/random.ts";

// Inputs are float32 values (our weights are), so rounding them once agrees with Float16Array's.
Deno.test("floatToHalf() rounds float32 values as the platform's Float16Array does", () => {
  const half = new Float16Array(1);
  const bits = new Uint16Array(half.buffer);
  const next = mulberry32(7);
  const values = [
    0,
    -0,
    1,
    -2,
    65504,
    65520,
    1e6,
    6e-5,
    6e-8,
    3e-8,
    1e-9,
    1 + 2 ** -11,
    1 + 3 * 2 ** -11,
  ];
  for (let i = 0; i < 20000; i++) values.push((next() - 0.5) * 2 ** (Math.floor(next() * 40) - 24));
  values.push(Infinity, -Infinity);
  for (const v of values.map(Math.fround)) {
    half[0] = v;
    assertEquals(floatToHalf(v), bits[0], `value ${v}`);
  }
  assertEquals(floatToHalf(NaN) & 0x7c00, 0x7c00);
});

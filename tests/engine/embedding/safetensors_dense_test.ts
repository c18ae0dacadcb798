import { assertAlmostEquals, assertEquals, assertThrows } from "../../_assert.ts";
import { readSafetensors, writeSafetensors } from "../../../src/engine/embedding/safetensors.ts";
import { floatToHalf, halfToFloat } from "../../../src/core/float16.ts";
import { applyDense, parseDenseLayer } from "../../../src/engine/embedding/dense.ts";
import { layerNormInPlace, toFloat32 } from "../../../src/engine/embedding/pooling.ts";

/** A safetensors file built by hand, with one tensor of the given dtype and raw bytes. */
function rawFile(dtype: string, shape: number[], bytes: Uint8Array): Uint8Array {
  const header = new TextEncoder().encode(
    JSON.stringify({
      __metadata__: { format: "pt" },
      t: { dtype, shape, data_offsets: [0, bytes.length] },
    }),
  );
  const out = new Uint8Array(8 + header.length + bytes.length);
  new DataView(out.buffer).setBigUint64(0, BigInt(header.length), true);
  out.set(header, 8);
  out.set(bytes, 8 + header.length);
  return out;
}

Deno.test("readSafetensors() reads F32 files it wrote, skipping __metadata__", () => {
  const data = Float32Array.of(1.5, -2, 3.25, 0);
  const t = readSafetensors(writeSafetensors({ w: { shape: [2, 2], data } })).get("w")!;
  assertEquals(t.shape, [2, 2]);
  assertEquals([...t.data], [...data]);
});

Deno.test("readSafetensors() reads F16 and BF16 as float32", () => {
  // 1.0 = 0x3c00, -2.5 = 0xc100, 65504 = 0x7bff, smallest subnormal = 0x0001 (fp16).
  const f16 = new Uint8Array(new Uint16Array([0x3c00, 0xc100, 0x7bff, 0x0001]).buffer);
  assertEquals([...readSafetensors(rawFile("F16", [4], f16)).get("t")!.data], [
    1,
    -2.5,
    65504,
    Math.fround(2 ** -24),
  ]);
  // bf16 is the top half of a float32: 1.0 = 0x3f80, -0.5 = 0xbf00.
  const bf16 = new Uint8Array(new Uint16Array([0x3f80, 0xbf00]).buffer);
  assertEquals([...readSafetensors(rawFile("BF16", [2], bf16)).get("t")!.data], [1, -0.5]);
  assertThrows(() => readSafetensors(rawFile("I64", [1], new Uint8Array(8))), Error, "I64");
  assertThrows(() => readSafetensors(new Uint8Array(4)), Error, "not a safetensors file");
});

Deno.test("toFloat32() converts float16 outputs given as raw Uint16Array bits", () => {
  assertEquals([...toFloat32("float16", Uint16Array.of(0x3c00, 0xbc00, 0))], [1, -1, 0]);
  assertEquals(halfToFloat(0x7c00), Infinity);
  assertThrows(() => toFloat32("int64", new BigInt64Array(1) as never), TypeError, "int64");
});

Deno.test("parseDenseLayer() and applyDense() compute act(W x + b) and refuse unknown activations", () => {
  const weights = writeSafetensors({
    "linear.weight": { shape: [2, 3], data: Float32Array.of(1, 0, -1, 0.5, 0.5, 0.5) },
    "linear.bias": { shape: [2], data: Float32Array.of(0.1, -0.1) },
  });
  const config = { in_features: 3, out_features: 2, bias: true };
  const tanh = parseDenseLayer("2_Dense", {
    ...config,
    activation_function: "torch.nn.modules.activation.Tanh",
  }, weights);
  const y = applyDense(tanh, Float32Array.of(1, 2, 3));
  assertAlmostEquals(y[0], Math.tanh(1 - 3 + 0.1), 1e-6);
  assertAlmostEquals(y[1], Math.tanh(3 - 0.1), 1e-6);
  assertThrows(
    () =>
      parseDenseLayer("2_Dense", {
        ...config,
        activation_function: "torch.nn.modules.activation.ReLU",
      }, weights),
    Error,
    "Identity and Tanh",
  );
  assertThrows(
    () => parseDenseLayer("2_Dense", { ...config, in_features: 4 }, weights),
    Error,
    "[2, 4]",
  );
});

Deno.test("layerNormInPlace() centers and scales without affine parameters", () => {
  const v = layerNormInPlace(Float32Array.of(1, 2, 3, 4), 0);
  assertAlmostEquals(v.reduce((a, b) => a + b, 0), 0, 1e-6);
  assertAlmostEquals(v.reduce((a, b) => a + b * b, 0) / 4, 1, 1e-5);
});

Deno.test("floatToHalf() rounds to nearest even like Float16Array and round-trips with halfToFloat()", () => {
  for (const v of [1, -2.5, 65504, 70000, 1e-7, 2 ** -24, 0.1, 3.14159, -0, 1 + 2 ** -11]) {
    const expected = new Float32Array(Float16Array.of(v))[0];
    assertEquals(halfToFloat(floatToHalf(v)), expected, `value ${v}`);
  }
  assertEquals(floatToHalf(1), 0x3c00);
  assertEquals(Number.isNaN(halfToFloat(floatToHalf(NaN))), true);
});

import { assertEquals } from "../_assert.ts";
import { join } from "node:path";
import { writeTinyDecoder } from "./_tiny_decoder.ts";
import { findOpTypes, matMulNBitsAccuracyLevels } from "../../src/engine/onnx_file.ts";

Deno.test("matMulNBitsAccuracyLevels() reads the accuracy level of a q4 file's MatMulNBits nodes", async () => {
  const dir = await Deno.makeTempDir({ prefix: "svc-onnx-file-" });
  try {
    const level0 = join(dir, "level0.onnx");
    const level4 = join(dir, "level4.onnx");
    const q8 = join(dir, "q8.onnx");
    await writeTinyDecoder(level0, "q4", { bits: 4, accuracyLevel: 0 });
    await writeTinyDecoder(level4, "q4", { bits: 4, accuracyLevel: 4 });
    await writeTinyDecoder(q8, "q8");
    // Level 0 is written as no attribute at all (onnxruntime's default).
    assertEquals(await matMulNBitsAccuracyLevels(level0), [0]);
    assertEquals(await matMulNBitsAccuracyLevels(level4), [4]);
    assertEquals(await matMulNBitsAccuracyLevels(q8), []);
    assertEquals(await findOpTypes(level4, ["MatMulNBits"]), new Set(["MatMulNBits"]));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

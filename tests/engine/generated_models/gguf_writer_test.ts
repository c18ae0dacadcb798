import { assert, assertEquals } from "../../_assert.ts";
import { halfToFloat } from "../../../src/core/float16.ts";
import {
  encodeQ4_0,
  encodeQ8_0,
  type GgufValue,
  writeGguf,
} from "../../../fixtures/generated_models/gguf_writer.ts";
import {
  llamaGgufContents,
  permuteRopeRows,
} from "../../../fixtures/generated_models/llama_gguf.ts";
import { buildLlamaDecoderGraph } from "../../../src/engine/generated_models/llama_decoder.ts";
import { TINY_CHAT } from "./_fixtures.ts";
import { decodeQ8_0, readGguf } from "./_gguf_reader.ts";

Deno.test("Q8_0 blocks hold an fp16 scale max|x|/127 and 32 int8 that round-trip", () => {
  const values = Float32Array.from({ length: 96 }, (_, i) => Math.sin(i * 1.7) * (1 + i / 10));
  values.fill(0, 64); // an all-zero block must decode to zeros, not NaN
  const blocks = encodeQ8_0(values);
  assertEquals(blocks.length, 3 * 34);
  const view = new DataView(blocks.buffer);
  let amax = 0;
  for (let i = 0; i < 32; i++) amax = Math.max(amax, Math.abs(values[i]));
  const scale = halfToFloat(view.getUint16(0, true));
  assert(Math.abs(scale - amax / 127) <= amax / 127 / 1000, `scale ${scale} vs ${amax / 127}`);
  assert([...new Int8Array(blocks.buffer, 2, 32)].some((q) => Math.abs(q) === 127));
  const back = decodeQ8_0(blocks, 96);
  for (let i = 0; i < 96; i++) {
    const blockScale = halfToFloat(view.getUint16(Math.floor(i / 32) * 34, true));
    assert(Math.abs(back[i] - values[i]) <= blockScale / 2 + 1e-6, `value ${i}`);
  }
  assertEquals([...back.subarray(64)], new Array(32).fill(0));
});

Deno.test("Q4_0 blocks hold an fp16 scale -max/8 and 4-bit values, j low and j+16 high", () => {
  const values = Float32Array.from({ length: 64 }, (_, i) => Math.cos(i * 0.9) * (i % 5 + 1));
  const blocks = encodeQ4_0(values);
  assertEquals(blocks.length, 2 * 18);
  const view = new DataView(blocks.buffer);
  for (let b = 0; b < 2; b++) {
    const block = values.subarray(b * 32, b * 32 + 32);
    const max = block.reduce((m, v) => Math.abs(v) > Math.abs(m) ? v : m, 0);
    const d = halfToFloat(view.getUint16(b * 18, true));
    assert(Math.abs(d - max / -8) <= Math.abs(max / 8) / 1000, `block ${b} scale`);
    for (let i = 0; i < 32; i++) {
      const byte = blocks[b * 18 + 2 + (i % 16)];
      const q = i < 16 ? byte & 15 : byte >> 4;
      // Half a step off at most, a whole step where +8 steps clamp to +7.
      assert(Math.abs((q - 8) * d - block[i]) <= Math.abs(d) + 1e-6, `block ${b} value ${i}`);
    }
  }
});

Deno.test("writeGguf writes header, typed metadata, aligned tensor infos and data", async () => {
  const path = await Deno.makeTempFile({ suffix: ".gguf" });
  const a = Float32Array.from({ length: 64 }, (_, i) => i / 7 - 3);
  const b = Float32Array.from({ length: 3 }, (_, i) => i + 0.5);
  const metadata: [string, GgufValue][] = [
    ["general.architecture", { type: "string", value: "llama" }],
    ["general.alignment", { type: "uint32", value: 64 }],
    ["x.eps", { type: "float32", value: 1e-5 }],
    ["x.flag", { type: "bool", value: true }],
    ["x.ids", { type: "int32[]", value: [1, -2, 3] }],
    ["x.words", { type: "string[]", value: ["a", "Ġb", "<|im_end|>"] }],
  ];
  await writeGguf(path, metadata, [
    { name: "q", dims: [32, 2], type: "Q8_0", values: () => a },
    { name: "f", dims: [3], type: "F32", values: () => b },
    { name: "h", dims: [3], type: "F16", values: () => b },
  ]);
  const bytes = await Deno.readFile(path);
  await Deno.remove(path);
  const f = readGguf(bytes);
  assertEquals([f.magic, f.version], ["GGUF", 3]);
  assertEquals(f.metadata.get("general.architecture"), "llama");
  assert(Math.abs((f.metadata.get("x.eps") as number) - 1e-5) < 1e-10);
  assertEquals(f.metadata.get("x.flag"), true);
  assertEquals(f.metadata.get("x.ids"), [1, -2, 3]);
  assertEquals(f.metadata.get("x.words"), ["a", "Ġb", "<|im_end|>"]);
  assertEquals(f.tensors.map((t) => [t.name, t.dims, t.type]), [
    ["q", [32, 2], 8],
    ["f", [3], 0],
    ["h", [3], 1],
  ]);
  // Every tensor starts on a multiple of the alignment; the file ends after the last, padded.
  assertEquals(f.tensors.map((t) => t.offset), [0, 128, 192]);
  assertEquals(f.dataStart % 64, 0);
  assertEquals(bytes.length, f.dataStart + 256);
  const at = (i: number) => bytes.subarray(f.dataStart + f.tensors[i].offset);
  const q = decodeQ8_0(at(0), 64);
  // Half a step of the largest block scale (max |a| = 6, 127 steps).
  for (let i = 0; i < 64; i++) assert(Math.abs(q[i] - a[i]) <= 6 / 127 / 2 + 1e-3, `q[${i}]`);
  assertEquals([...new Float32Array(at(1).slice(0, 12).buffer)], [...b]);
  const half = new DataView(at(2).slice(0, 6).buffer);
  assertEquals([0, 1, 2].map((i) => halfToFloat(half.getUint16(2 * i, true))), [...b]);
});

Deno.test("permuteRopeRows turns rotate-half RoPE into llama.cpp's adjacent-pair RoPE", () => {
  // One head of size 8 over 3 input columns: rotating the permuted projection pairwise must give
  // the rotate-half result, permuted the same way (so attention scores are unchanged).
  const heads = 2, headDim = 8, cols = 3, half = headDim / 2;
  const w = Float32Array.from({ length: heads * headDim * cols }, (_, i) => Math.cos(i * 0.37));
  const x = [0.3, -1.2, 0.8];
  const project = (m: Float32Array) =>
    Array.from(
      { length: heads * headDim },
      (_, r) => x.reduce((s, xc, c) => s + m[r * cols + c] * xc, 0),
    );
  const theta = (i: number) => 5 * Math.pow(10000, (-2 * i) / headDim); // position 5
  const q = project(w);
  const p = project(permuteRopeRows(w, heads, cols));
  for (let h = 0; h < heads; h++) {
    const o = h * headDim;
    for (let i = 0; i < half; i++) {
      const [c, s] = [Math.cos(theta(i)), Math.sin(theta(i))];
      const hfLo = q[o + i] * c - q[o + i + half] * s;
      const hfHi = q[o + i + half] * c + q[o + i] * s;
      const pairLo = p[o + 2 * i] * c - p[o + 2 * i + 1] * s;
      const pairHi = p[o + 2 * i + 1] * c + p[o + 2 * i] * s;
      assert(
        Math.abs(pairLo - hfLo) < 1e-6 && Math.abs(pairHi - hfHi) < 1e-6,
        `head ${h} pair ${i}`,
      );
    }
  }
});

Deno.test("the llama GGUF holds the ONNX decoder's weights, transposed, and its vocabulary", async () => {
  const spec = { ...TINY_CHAT, eosLogitBias: 0 };
  const { metadata, tensors } = await llamaGgufContents(spec, "F16", "test");
  const meta = new Map(metadata);
  assertEquals(tensors.length, 2 + 9 * spec.numLayers + 1);
  assertEquals((meta.get("tokenizer.ggml.tokens")!.value as string[]).length, spec.vocabSize);
  assert(
    (meta.get("tokenizer.ggml.tokens")!.value as string[]).every((t) => typeof t === "string"),
  );
  assertEquals(meta.get("llama.attention.head_count_kv")!.value, spec.numKvHeads);

  // The same random values as the fp32 ONNX graph's initializers: v_proj (no RoPE permutation)
  // is the ONNX `[in, out]` matrix transposed.
  const graph = buildLlamaDecoderGraph({ ...spec, eosLogitBiasTokenId: 0 }, "fp32");
  const onnx = graph.initializers.find((t) => t.name === "model.layers.1.self_attn.v_proj.weight")!;
  const raw = new Uint8Array(onnx.source.byteLength);
  let off = 0;
  for (const c of onnx.source.chunks()) raw.set(c, (off += c.length) - c.length);
  const [inDim, outDim] = onnx.source.dims;
  const onnxValues = new Float32Array(raw.buffer);
  const gguf = tensors.find((t) => t.name === "blk.1.attn_v.weight")!;
  assertEquals(gguf.dims, [inDim, outDim]);
  const rows = gguf.values();
  for (const [r, c] of [[0, 0], [3, 17], [outDim - 1, inDim - 1]]) {
    assertEquals(rows[r * inDim + c], onnxValues[c * outDim + r]);
  }
});

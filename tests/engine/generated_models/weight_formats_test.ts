import { assert, assertEquals } from "../../_assert.ts";
import { DEMO_MODEL_SPECS } from "../../../src/engine/generated_models/demo_models.ts";
import { buildLlamaDecoderGraph } from "../../../src/engine/generated_models/llama_decoder.ts";
import { OnnxGraph } from "../../../src/engine/generated_models/onnx_graph.ts";
import { TensorDataType } from "../../../src/engine/generated_models/onnx_proto.ts";
import { floatToHalf } from "../../../src/core/float16.ts";
import { emitMatMulNBits } from "../../../src/engine/generated_models/weight_formats.ts";
import {
  uniformValues,
  uniformValuesInPieces,
} from "../../../src/engine/generated_models/weights.ts";

function bytesOf(g: OnnxGraph, name: string): Uint8Array {
  const source = g.initializers.find((i) => i.name === name)!.source;
  const parts = [...source.chunks()].map((c) => c.slice());
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  assertEquals(out.length, source.byteLength);
  return out;
}

// The packing as it was written first (the whole weight at once): the reference for the bytes.
function referenceNBits(w: Float32Array, k: number, n: number, bits: 4 | 8) {
  const block = 32;
  const blocks = k / block;
  const blob = (block * bits) / 8;
  const zero = 1 << (bits - 1);
  const qmax = bits === 4 ? 7 : 127;
  const t = new Float32Array(k * n);
  for (let i = 0; i < k; i++) for (let j = 0; j < n; j++) t[j * k + i] = w[i * n + j];
  const packed = new Uint8Array(n * blocks * blob);
  const scales = new Float32Array(n * blocks);
  for (let col = 0; col < n; col++) {
    for (let b = 0; b < blocks; b++) {
      const start = col * k + b * block;
      let m = 1e-12;
      for (let i = start; i < start + block; i++) m = Math.max(m, Math.abs(t[i]));
      const scale = m / qmax;
      scales[col * blocks + b] = scale;
      const at = (col * blocks + b) * blob;
      for (let i = 0; i < block; i++) {
        const q = Math.max(0, Math.min(2 * zero - 1, Math.round(t[start + i] / scale) + zero));
        if (bits === 8) packed[at + i] = q;
        else packed[at + (i >> 1)] |= i & 1 ? q << 4 : q;
      }
    }
  }
  return { packed, scales };
}

Deno.test("emitMatMulNBits() packs chunk by chunk the same bytes as packing the whole weight", () => {
  // n large enough for several 1 MiB chunks of packed columns.
  const k = 64;
  const n = 40_000;
  const spec = { seed: "nbits:w", dims: [k, n], bound: 0.3 };
  const w = uniformValues(spec);
  for (const bits of [4, 8] as const) {
    for (const float16 of [false, true]) {
      const ref = referenceNBits(w, k, n, bits);
      const suffix = bits === 4 ? "Q4" : "Q8";
      for (const weight of [w, () => uniformValuesInPieces(spec)]) {
        const g = new OnnxGraph("nbits");
        const x = g.input("x", TensorDataType.FLOAT, ["m", k]);
        emitMatMulNBits(g, g, x, "w", weight, k, n, { bits, float16 });
        assertEquals(bytesOf(g, `w_${suffix}`), ref.packed);
        const scales = float16 ? Uint16Array.from(ref.scales, floatToHalf) : ref.scales;
        assertEquals(bytesOf(g, "w_scales"), new Uint8Array(scales.buffer));
        // Scales read first (no packing pass before): computed on their own, the same.
        const h = new OnnxGraph("nbits");
        emitMatMulNBits(h, h, h.input("x", TensorDataType.FLOAT, ["m", k]), "w", weight, k, n, {
          bits,
          float16,
        });
        assertEquals(bytesOf(h, "w_scales"), new Uint8Array(scales.buffer));
      }
    }
  }
});

Deno.test("buildLlamaDecoderGraph() with q4 quantizes nothing until the file is written", () => {
  // demo/chat-bench's q4 graph quantized ~135M weights in one piece (4-6 s without a turn for
  // the event loop: a process generating it did not see Ctrl-C); now its sources do, in chunks.
  const demo = DEMO_MODEL_SPECS["demo/chat-bench"];
  assert(demo.kind === "chat");
  const started = performance.now();
  const g = buildLlamaDecoderGraph({ ...demo.spec, eosLogitBiasTokenId: 2 }, "q4");
  const took = performance.now() - started;
  assert(g.initializers.some((i) => i.name === "lm_head.weight_Q4"));
  assert(took < 1000, `building the q4 graph took ${took.toFixed(0)} ms`);
});

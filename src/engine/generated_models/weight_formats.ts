/**
 * The weight encodings of real Hugging Face ONNX exports, each as the graph pieces those files
 * hold, for float `[K, N]` weights held in memory (small generated models only):
 *
 * | format  | weight op                                                   | activations |
 * | ------- | ----------------------------------------------------------- | ----------- |
 * | `fp32`  | `MatMul` with a float initializer                           | float       |
 * | `fp16`  | float16 initializer (`Cast` to float here)                  | float16 IO  |
 * | `q4`    | `com.microsoft` `MatMulNBits` (bits 4, block 32, symmetric) | float       |
 * | `q4f16` | `MatMulNBits` with float16 input, scales and output          | float16     |
 * | `q8`    | `DynamicQuantizeLinear` + `MatMulInteger`, int8 weights      | float       |
 * | `int8`  | the same as `q8`                                             | float       |
 * | `uint8` | `DynamicQuantizeLinear` + `MatMulInteger`, uint8 weights     | float       |
 * | `bnb4`  | `com.microsoft` `MatMulBnb4` (NF4, block 64)                 | float       |
 *
 * The 8-bit formats are what onnxruntime's dynamic quantizer (`quantize_dynamic`) emits; their
 * weight magnitudes stay within {@link INT8_WEIGHT_MAX} (see there: AVX2 without VNNI saturates).
 *
 * @module
 */

import { floatToHalf } from "../../core/float16.ts";
import { type OnnxGraph, tensorFromArray, type TensorSource } from "./onnx_graph.ts";
import { TensorDataType } from "./onnx_proto.ts";
import { INT8_WEIGHT_MAX } from "./weights.ts";

/** Where weight initializers go: a graph, or a wrapper that shares them between `If` branches. */
export type WeightSink = Pick<OnnxGraph, "initializer">;

/** A transformers.js dtype of a decoder weight file. */
export type ExportDtype = "fp32" | "fp16" | "q4" | "q4f16" | "q8" | "int8" | "uint8" | "bnb4";

/** The file-name suffix transformers.js adds for each dtype (`model${suffix}.onnx`). */
export const EXPORT_DTYPE_SUFFIX: Record<ExportDtype, string> = {
  fp32: "",
  fp16: "_fp16",
  q4: "_q4",
  q4f16: "_q4f16",
  q8: "_quantized",
  int8: "_int8",
  uint8: "_uint8",
  bnb4: "_bnb4",
};

/** Whether a dtype's files have float16 logits and KV cache (`fp16`, `q4f16`). */
export function hasFloat16Io(dtype: ExportDtype): boolean {
  return dtype === "fp16" || dtype === "q4f16";
}

/** A float16 tensor of `values`. */
export function float16Tensor(dims: readonly number[], values: Float32Array): TensorSource {
  return tensorFromArray(TensorDataType.FLOAT16, dims, Uint16Array.from(values, floatToHalf));
}

/** A float32 tensor of `values`. */
export function float32Tensor(dims: readonly number[], values: Float32Array): TensorSource {
  return tensorFromArray(TensorDataType.FLOAT, dims, values);
}

/** Largest absolute value of `values` (at least a tiny floor, so scales never are 0). */
function absMax(values: ArrayLike<number>, from = 0, to = values.length): number {
  let m = 1e-12;
  for (let i = from; i < to; i++) m = Math.max(m, Math.abs(values[i]));
  return m;
}

/** NF4 code book (bitsandbytes). */
const NF4 = [
  -1,
  -0.6961928009986877,
  -0.5250730514526367,
  -0.39491748809814453,
  -0.28444138169288635,
  -0.18477343022823334,
  -0.09105003625154495,
  0,
  0.07958029955625534,
  0.16093020141124725,
  0.24611230194568634,
  0.33791524171829224,
  0.44070982933044434,
  0.5626170039176941,
  0.7229568362236023,
  1,
];

function nearestNf4(v: number): number {
  let best = 0;
  for (let i = 1; i < 16; i++) if (Math.abs(NF4[i] - v) < Math.abs(NF4[best] - v)) best = i;
  return best;
}

/** Column-major copy of a row-major `[K, N]` matrix: `[N, K]`. */
function transpose(w: Float32Array, k: number, n: number): Float32Array {
  const t = new Float32Array(k * n);
  for (let i = 0; i < k; i++) for (let j = 0; j < n; j++) t[j * k + i] = w[i * n + j];
  return t;
}

/**
 * Emits `x @ W` for a float `[K, N]` weight `w` (row-major) in `dtype`'s encoding; `x` and the
 * result are float32 tensors (float16 formats cast around their ops). `name` names the weight
 * initializers (e.g. `model.layers.0.mlp.up_proj.weight`).
 */
export function emitLinear(
  g: OnnxGraph,
  weights: WeightSink,
  dtype: ExportDtype,
  x: string,
  name: string,
  w: Float32Array,
  k: number,
  n: number,
): string {
  const toF32 = (t: string) => g.node("Cast", [t], { to: TensorDataType.FLOAT });
  const toF16 = (t: string) => g.node("Cast", [t], { to: TensorDataType.FLOAT16 });
  switch (dtype) {
    case "fp32":
      return g.node("MatMul", [x, weights.initializer(name, float32Tensor([k, n], w))]);
    case "fp16":
      return g.node("MatMul", [x, toF32(weights.initializer(name, float16Tensor([k, n], w)))]);
    case "q4":
    case "q4f16": {
      const f16 = dtype === "q4f16";
      const y = emitMatMulNBits(g, weights, f16 ? toF16(x) : x, name, w, k, n, {
        bits: 4,
        float16: f16,
      });
      return f16 ? toF32(y) : y;
    }
    case "q8":
    case "int8":
    case "uint8": {
      const unsigned = dtype === "uint8";
      const scale = absMax(w) / INT8_WEIGHT_MAX;
      const q = unsigned ? new Uint8Array(w.length) : new Int8Array(w.length);
      for (let i = 0; i < w.length; i++) {
        const v = Math.max(-INT8_WEIGHT_MAX, Math.min(INT8_WEIGHT_MAX, Math.round(w[i] / scale)));
        q[i] = unsigned ? v + 128 : v;
      }
      const type = unsigned ? TensorDataType.UINT8 : TensorDataType.INT8;
      const qw = weights.initializer(`${name}_quantized`, tensorFromArray(type, [k, n], q));
      const zp = weights.initializer(
        `${name}_zero_point`,
        tensorFromArray(type, [], unsigned ? Uint8Array.of(128) : Int8Array.of(0)),
      );
      const ws = weights.initializer(`${name}_scale`, float32Tensor([], Float32Array.of(scale)));
      const [xq, xs, xzp] = g.nodeMulti("DynamicQuantizeLinear", [x], 3);
      const acc = g.node("MatMulInteger", [xq, qw, xzp, zp]);
      return g.node("Mul", [
        g.node("Cast", [acc], { to: TensorDataType.FLOAT }),
        g.node("Mul", [xs, ws]),
      ]);
    }
    case "bnb4": {
      const block = 64;
      const t = transpose(w, k, n);
      const count = n * k;
      const absmax = new Float32Array(Math.ceil(count / block));
      const packed = new Uint8Array(Math.ceil(count / 2));
      for (let b = 0; b < absmax.length; b++) {
        const from = b * block;
        const to = Math.min(count, from + block);
        absmax[b] = absMax(t, from, to);
        for (let i = from; i < to; i++) {
          const q = nearestNf4(t[i] / absmax[b]);
          packed[i >> 1] |= i & 1 ? q : q << 4;
        }
      }
      const b = weights.initializer(
        `${name}_Bnb4`,
        tensorFromArray(TensorDataType.UINT8, [packed.length], packed),
      );
      const a = weights.initializer(`${name}_absmax`, float32Tensor([absmax.length], absmax));
      return g.nodeIn("com.microsoft", "MatMulBnb4", [x, b, a], 1, {
        K: k,
        N: n,
        block_size: block,
        quant_type: 1,
      })[0];
    }
  }
}

/** Settings of a `MatMulNBits` weight. */
export interface NBitsOptions {
  /** 4 (zero point 8, values -8..7) or 8 (zero point 128, values -127..127). */
  bits: 4 | 8;
  /**
   * onnxruntime's `accuracy_level`: 0 (unset) computes in float; 4 quantizes the activations to
   * int8 per block and runs an int8 GEMM (what llama.cpp does with Q8_0 / Q4_0 weights).
   */
  accuracyLevel?: 0 | 4;
  /** float16 scales (with float16 input and output). */
  float16?: boolean;
}

/** Bytes of packed `MatMulNBits` weights produced per chunk (see {@link emitMatMulNBits}). */
const NBITS_CHUNK_BYTES = 1 << 20;

/**
 * Emits `x @ W` as `com.microsoft` `MatMulNBits` (symmetric blocks of 32 along K, one scale per
 * block) for a float `[K, N]` weight `w` (row-major), or a function whose generator draws it in
 * pieces and returns it (`uniformValuesInPieces`).
 *
 * Nothing is quantized here: the packed weights are computed when the file is written, a few
 * output columns per chunk, and the scales as a side effect of that pass. Quantizing every
 * weight of a SmolLM2-sized model up front held the thread for 4-6 s in one piece (a process
 * that generated `demo/chat-bench` did not see Ctrl-C meanwhile); written in chunks, the writer's
 * file writes come between them. The bytes are the same either way.
 */
export function emitMatMulNBits(
  g: OnnxGraph,
  weights: WeightSink,
  x: string,
  name: string,
  w: Float32Array | (() => Iterator<unknown, Float32Array>),
  k: number,
  n: number,
  options: NBitsOptions,
): string {
  const block = 32;
  if (k % block !== 0) throw new RangeError(`K ${k} is not a multiple of ${block}`);
  const { bits } = options;
  const blocks = k / block;
  const blob = (block * bits) / 8;
  const zero = 1 << (bits - 1);
  const qmax = bits === 4 ? 7 : 127;
  const columnBytes = blocks * blob;
  const columnsPerChunk = Math.max(1, Math.floor(NBITS_CHUNK_BYTES / columnBytes));
  // Filled by a complete pass over the packed weights; read by the scales' source.
  let scalesDone: Float32Array | undefined;

  /** Packs columns `[from, to)` of `values` into `out` and their scales into `scales`. */
  const packColumns = (
    values: Float32Array,
    from: number,
    to: number,
    out: Uint8Array,
    scales: Float32Array,
  ): void => {
    const column = new Float32Array(k);
    for (let col = from; col < to; col++) {
      for (let i = 0; i < k; i++) column[i] = values[i * n + col];
      for (let b = 0; b < blocks; b++) {
        const start = b * block;
        const scale = absMax(column, start, start + block) / qmax;
        scales[col * blocks + b] = scale;
        const at = ((col - from) * blocks + b) * blob;
        for (let i = 0; i < block; i++) {
          const q = Math.max(
            0,
            Math.min(2 * zero - 1, Math.round(column[start + i] / scale) + zero),
          );
          if (bits === 8) out[at + i] = q;
          else out[at + (i >> 1)] |= i & 1 ? q << 4 : q;
        }
      }
    }
  };
  /**
   * Yields the packed weights chunk by chunk (empty chunks while the weight is drawn); the scales
   * are complete once it ends.
   */
  function* packed(): Generator<Uint8Array> {
    let values: Float32Array;
    if (typeof w === "function") {
      const draw = w();
      let step = draw.next();
      for (; !step.done; step = draw.next()) yield new Uint8Array(0);
      values = step.value;
    } else values = w;
    if (values.length !== k * n) {
      throw new RangeError(
        `weight ${name} has ${values.length} values, [${k}, ${n}] needs ${k * n}`,
      );
    }
    const scales = new Float32Array(n * blocks);
    for (let from = 0; from < n; from += columnsPerChunk) {
      const to = Math.min(n, from + columnsPerChunk);
      const out = new Uint8Array((to - from) * columnBytes);
      packColumns(values, from, to, out, scales);
      yield out;
    }
    scalesDone = scales;
  }
  const scalesOf = (): Float32Array => {
    if (!scalesDone) { for (const _ of packed()) { /* computes the scales */ } }
    return scalesDone!;
  };

  const suffix = bits === 4 ? "Q4" : "Q8";
  const b = weights.initializer(`${name}_${suffix}`, {
    dataType: TensorDataType.UINT8,
    dims: [n, blocks, blob],
    byteLength: n * columnBytes,
    chunks: packed,
  });
  const f16 = options.float16 === true;
  const s = weights.initializer(`${name}_scales`, {
    dataType: f16 ? TensorDataType.FLOAT16 : TensorDataType.FLOAT,
    dims: [n * blocks],
    byteLength: n * blocks * (f16 ? 2 : 4),
    *chunks() {
      const scales = scalesOf();
      const data = f16 ? Uint16Array.from(scales, floatToHalf) : scales;
      yield new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    },
  });
  return g.nodeIn("com.microsoft", "MatMulNBits", [x, b, s], 1, {
    K: k,
    N: n,
    bits,
    block_size: block,
    ...(options.accuracyLevel ? { accuracy_level: options.accuracyLevel } : {}),
  })[0];
}

/**
 * Emits a lookup of rows of a float `[rows, dim]` table in `dtype`'s encoding (float32 for the
 * 4-bit formats, float16 for the float16 ones, int8 + `DequantizeLinear` for the 8-bit ones).
 */
export function emitEmbedding(
  g: OnnxGraph,
  weights: WeightSink,
  dtype: ExportDtype,
  ids: string,
  name: string,
  table: Float32Array,
  rows: number,
  dim: number,
): string {
  if (hasFloat16Io(dtype)) {
    const t = weights.initializer(name, float16Tensor([rows, dim], table));
    return g.node("Cast", [g.node("Gather", [t, ids])], { to: TensorDataType.FLOAT });
  }
  if (dtype === "q8" || dtype === "int8" || dtype === "uint8") {
    const unsigned = dtype === "uint8";
    const scale = absMax(table) / 127;
    const q = unsigned ? new Uint8Array(table.length) : new Int8Array(table.length);
    for (let i = 0; i < table.length; i++) {
      const v = Math.max(-127, Math.min(127, Math.round(table[i] / scale)));
      q[i] = unsigned ? v + 128 : v;
    }
    const type = unsigned ? TensorDataType.UINT8 : TensorDataType.INT8;
    const t = weights.initializer(`${name}_quantized`, tensorFromArray(type, [rows, dim], q));
    const s = weights.initializer(`${name}_scale`, float32Tensor([], Float32Array.of(scale)));
    const zp = weights.initializer(
      `${name}_zero_point`,
      tensorFromArray(type, [], unsigned ? Uint8Array.of(128) : Int8Array.of(0)),
    );
    return g.node("DequantizeLinear", [g.node("Gather", [t, ids]), s, zp]);
  }
  return g.node("Gather", [weights.initializer(name, float32Tensor([rows, dim], table)), ids]);
}

/** A small float parameter (norm scales): float16 in float16 files (cast to float), else float32. */
export function emitParam(
  g: OnnxGraph,
  weights: WeightSink,
  dtype: ExportDtype,
  name: string,
  values: Float32Array,
): string {
  if (hasFloat16Io(dtype)) {
    const t = weights.initializer(name, float16Tensor([values.length], values));
    return g.node("Cast", [t], { to: TensorDataType.FLOAT });
  }
  return weights.initializer(name, float32Tensor([values.length], values));
}

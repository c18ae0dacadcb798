/**
 * Deterministic random weights. Each tensor draws from its own PRNG stream, seeded from the model
 * seed and the tensor's name, so a tensor's values do not depend on the order tensors are written
 * in, and the fp32 and q8 files of one model hold the same weights (q8 rounded to int8).
 *
 * Values are uniform in `[center - bound, center + bound]`: the largest magnitude is known up front,
 * so the int8 scale (`bound / INT8_WEIGHT_MAX`) needs no pass over the data and tensors stream in
 * chunks.
 *
 * @module
 */

import type { TensorSource } from "./onnx_graph.ts";
import { TensorDataType } from "./onnx_proto.ts";
import { mulberry32 } from "../../core/random.ts";

const CHUNK_ELEMENTS = 1 << 18;

/** How one random tensor is drawn. */
export interface UniformSpec {
  /** Model seed combined with the tensor name. */
  seed: string;
  dims: readonly number[];
  /** Half-width of the range. */
  bound: number;
  /** Middle of the range (default 0). */
  center?: number;
}

/** FNV-1a 32-bit hash of a string: the per-tensor PRNG seed. */
export function hashSeed(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

function count(dims: readonly number[]): number {
  return dims.reduce((a, b) => a * b, 1);
}

/** Fills `out` with the next values of a uniform stream. */
function fillUniform(next: () => number, out: Float32Array, lo: number, width: number): void {
  for (let i = 0; i < out.length; i++) out[i] = lo + width * next();
}

/**
 * A float32 tensor of uniform random values.
 *
 * @example
 * ```ts
 * const w = uniformTensor({ seed: "7:layer0.q", dims: [64, 64], bound: 0.2 });
 * ```
 */
export function uniformTensor(spec: UniformSpec): TensorSource {
  const total = count(spec.dims);
  const lo = (spec.center ?? 0) - spec.bound;
  return {
    dataType: TensorDataType.FLOAT,
    dims: spec.dims,
    byteLength: total * 4,
    *chunks() {
      const next = mulberry32(hashSeed(spec.seed));
      const buf = new Float32Array(Math.min(CHUNK_ELEMENTS, total));
      for (let done = 0; done < total; done += buf.length) {
        const part = buf.subarray(0, Math.min(buf.length, total - done));
        fillUniform(next, part, lo, 2 * spec.bound);
        yield new Uint8Array(part.buffer, 0, part.byteLength);
      }
    },
  };
}

/** Reads a whole uniform tensor into memory (small tensors and tests only). */
export function uniformValues(spec: UniformSpec): Float32Array {
  const out = new Float32Array(count(spec.dims));
  fillUniform(
    mulberry32(hashSeed(spec.seed)),
    out,
    (spec.center ?? 0) - spec.bound,
    2 * spec.bound,
  );
  return out;
}

/**
 * The values of {@link uniformValues}, drawn in pieces: the generator yields after each piece and
 * returns the filled array, so its caller can let other work run between pieces (a large tensor
 * takes a few hundred milliseconds to draw).
 *
 * @example
 * ```ts
 * const draw = uniformValuesInPieces({ seed: "7:lm_head", dims: [576, 49152], bound: 0.07 });
 * let step = draw.next();
 * while (!step.done) step = draw.next(); // other work can run between the steps
 * const values = step.value; // equal to uniformValues() of the same spec
 * ```
 */
export function* uniformValuesInPieces(spec: UniformSpec): Generator<void, Float32Array> {
  const out = new Float32Array(count(spec.dims));
  const next = mulberry32(hashSeed(spec.seed));
  const lo = (spec.center ?? 0) - spec.bound;
  const piece = 4 * CHUNK_ELEMENTS;
  for (let done = 0; done < out.length; done += piece) {
    fillUniform(next, out.subarray(done, Math.min(out.length, done + piece)), lo, 2 * spec.bound);
    yield;
  }
  return out;
}

/**
 * Largest int8 weight magnitude. 7 bits, not 8: without VNNI, x86's u8×s8 multiply-add
 * (`vpmaddubsw`, which onnxruntime's MatMulInteger uses on AVX2) sums pairs into a saturating
 * int16, and 255 × 127 × 2 overflows it; 255 × 63 × 2 does not ("reduce_range" in onnxruntime's
 * quantizer). With 8 bits the q8 files computed different numbers on AVX2-only CPUs.
 */
export const INT8_WEIGHT_MAX = 63;

/** A symmetric per-tensor int8 quantization: `value ≈ int8 * scale`. */
export interface QuantizedTensor {
  source: TensorSource;
  scale: number;
}

/**
 * The same values as {@link uniformTensor}, quantized to int8 with one scale for the tensor
 * (`bound / INT8_WEIGHT_MAX`, the largest possible magnitude over the largest int8 weight).
 * Only for `center` 0.
 */
export function quantizedUniformTensor(spec: UniformSpec): QuantizedTensor {
  if ((spec.center ?? 0) !== 0) throw new RangeError("int8 weights must be centred on 0");
  const total = count(spec.dims);
  const scale = spec.bound / INT8_WEIGHT_MAX;
  return {
    scale,
    source: {
      dataType: TensorDataType.INT8,
      dims: spec.dims,
      byteLength: total,
      *chunks() {
        const next = mulberry32(hashSeed(spec.seed));
        const f = new Float32Array(Math.min(CHUNK_ELEMENTS, total));
        const q = new Int8Array(f.length);
        for (let done = 0; done < total; done += f.length) {
          const n = Math.min(f.length, total - done);
          const part = f.subarray(0, n);
          fillUniform(next, part, -spec.bound, 2 * spec.bound);
          for (let i = 0; i < n; i++) {
            const v = Math.round(part[i] / scale);
            q[i] = v > INT8_WEIGHT_MAX
              ? INT8_WEIGHT_MAX
              : v < -INT8_WEIGHT_MAX
              ? -INT8_WEIGHT_MAX
              : v;
          }
          yield new Uint8Array(q.buffer, 0, n);
        }
      },
    },
  };
}

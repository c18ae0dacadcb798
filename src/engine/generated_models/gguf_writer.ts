/**
 * A GGUF (version 3) file writer: typed metadata, then tensor infos, then the tensor data, each
 * tensor at an offset aligned to `general.alignment` (32 by default). Tensors are F32, F16, Q8_0
 * (blocks of 32 values: an fp16 scale `max|x| / 127`, then 32 int8 `round(x / scale)`) or Q4_0
 * (blocks of 32: an fp16 scale `-max / 8` of the value largest in magnitude, then 16 bytes of
 * 4-bit `x / scale + 8`, value `j` in the low and `j + 16` in the high nibble of byte `j`), encoded
 * from float32 values one tensor at a time, so a model never sits in memory whole.
 *
 * This is the file llama.cpp loads; `llama_gguf.ts` fills it with a generated decoder so that
 * benchmarks run llama.cpp on the same weights as our ONNX files.
 *
 * @module
 */

import { floatToHalf } from "../../core/float16.ts";

/** GGUF metadata value types (the numbers are the file's type tags). */
export const GgufValueType = {
  UINT32: 4,
  INT32: 5,
  FLOAT32: 6,
  BOOL: 7,
  STRING: 8,
  ARRAY: 9,
} as const;

/** A metadata value with its GGUF type. */
export type GgufValue =
  | { type: "uint32"; value: number }
  | { type: "int32"; value: number }
  | { type: "float32"; value: number }
  | { type: "bool"; value: boolean }
  | { type: "string"; value: string }
  | { type: "string[]"; value: readonly string[] }
  | { type: "int32[]"; value: readonly number[] };

/** ggml tensor types this writer encodes (the numbers are ggml's). */
export const GgmlType = { F32: 0, F16: 1, Q4_0: 2, Q8_0: 8 } as const;
/** One of {@link GgmlType}'s names. */
export type GgmlTypeName = keyof typeof GgmlType;

/** Values per Q8_0 and Q4_0 block; bytes per block (fp16 scale + 32 int8, or + 16 bytes). */
export const Q8_0_BLOCK = 32;
const BLOCK_BYTES = { Q8_0: 2 + Q8_0_BLOCK, Q4_0: 2 + Q8_0_BLOCK / 2 };

/** A tensor to write: `dims` in ggml order (`dims[0]` varies fastest, i.e. the row length). */
export interface GgufTensor {
  name: string;
  dims: readonly number[];
  type: GgmlTypeName;
  /** The float32 values, row-major over the reversed dims; called once, when written. */
  values(): Float32Array;
}

/** Bytes a tensor takes in the file (without alignment padding). */
export function ggufTensorBytes(type: GgmlTypeName, dims: readonly number[]): number {
  const n = dims.reduce((a, b) => a * b, 1);
  if (type === "F32") return n * 4;
  if (type === "F16") return n * 2;
  if (dims[0] % Q8_0_BLOCK !== 0) {
    throw new RangeError(
      `${type} rows must hold a multiple of ${Q8_0_BLOCK} values, not ${dims[0]}`,
    );
  }
  return (n / Q8_0_BLOCK) * BLOCK_BYTES[type];
}

/** Encodes float32 values as a ggml tensor of `type`. */
export function encodeGgmlTensor(type: GgmlTypeName, values: Float32Array): Uint8Array {
  if (type === "F32") return new Uint8Array(values.buffer, values.byteOffset, values.byteLength);
  if (type === "F16") return new Uint8Array(Uint16Array.from(values, floatToHalf).buffer);
  return type === "Q8_0" ? encodeQ8_0(values) : encodeQ4_0(values);
}

/** Q8_0 blocks as llama.cpp's reference quantizer makes them (`quantize_row_q8_0_ref`). */
export function encodeQ8_0(values: Float32Array): Uint8Array {
  if (values.length % Q8_0_BLOCK !== 0) {
    throw new RangeError(`Q8_0 needs a multiple of ${Q8_0_BLOCK} values, not ${values.length}`);
  }
  const blocks = values.length / Q8_0_BLOCK;
  const out = new Uint8Array(blocks * BLOCK_BYTES.Q8_0);
  const view = new DataView(out.buffer);
  for (let b = 0; b < blocks; b++) {
    const from = b * Q8_0_BLOCK;
    let amax = 0;
    for (let i = 0; i < Q8_0_BLOCK; i++) amax = Math.max(amax, Math.abs(values[from + i]));
    const d = amax / 127;
    const inv = d ? 1 / d : 0;
    const at = b * BLOCK_BYTES.Q8_0;
    view.setUint16(at, floatToHalf(d), true);
    for (let i = 0; i < Q8_0_BLOCK; i++) {
      const x = values[from + i] * inv;
      // C's roundf: halves away from zero.
      view.setInt8(at + 2 + i, Math.sign(x) * Math.round(Math.abs(x)));
    }
  }
  return out;
}

/** Q4_0 blocks as llama.cpp's reference quantizer makes them (`quantize_row_q4_0_ref`). */
export function encodeQ4_0(values: Float32Array): Uint8Array {
  if (values.length % Q8_0_BLOCK !== 0) {
    throw new RangeError(`Q4_0 needs a multiple of ${Q8_0_BLOCK} values, not ${values.length}`);
  }
  const half = Q8_0_BLOCK / 2;
  const blocks = values.length / Q8_0_BLOCK;
  const out = new Uint8Array(blocks * BLOCK_BYTES.Q4_0);
  const view = new DataView(out.buffer);
  for (let b = 0; b < blocks; b++) {
    const from = b * Q8_0_BLOCK;
    let max = 0;
    for (let i = 0; i < Q8_0_BLOCK; i++) {
      if (Math.abs(values[from + i]) > Math.abs(max)) max = values[from + i];
    }
    const d = max / -8;
    const inv = d ? 1 / d : 0;
    const at = b * BLOCK_BYTES.Q4_0;
    view.setUint16(at, floatToHalf(d), true);
    // C's (int8_t)(x + 8.5f) truncates toward zero; x + 8.5 is >= 0.5 here, so that is floor.
    const q = (x: number) => Math.min(15, Math.floor(x * inv + 8.5));
    for (let j = 0; j < half; j++) {
      out[at + 2 + j] = q(values[from + j]) | (q(values[from + half + j]) << 4);
    }
  }
  return out;
}

/** Little-endian byte builder for the header. */
class ByteWriter {
  #chunks: Uint8Array[] = [];
  #length = 0;
  #text = new TextEncoder();

  get length(): number {
    return this.#length;
  }

  bytes(b: Uint8Array): void {
    this.#chunks.push(b);
    this.#length += b.length;
  }

  #fixed(size: number, set: (v: DataView) => void): void {
    const b = new Uint8Array(size);
    set(new DataView(b.buffer));
    this.bytes(b);
  }

  u32(v: number): void {
    this.#fixed(4, (d) => d.setUint32(0, v, true));
  }
  i32(v: number): void {
    this.#fixed(4, (d) => d.setInt32(0, v, true));
  }
  f32(v: number): void {
    this.#fixed(4, (d) => d.setFloat32(0, v, true));
  }
  u64(v: number): void {
    this.#fixed(8, (d) => d.setBigUint64(0, BigInt(v), true));
  }
  string(s: string): void {
    const b = this.#text.encode(s);
    this.u64(b.length);
    this.bytes(b);
  }

  concat(): Uint8Array {
    const out = new Uint8Array(this.#length);
    let at = 0;
    for (const c of this.#chunks) {
      out.set(c, at);
      at += c.length;
    }
    return out;
  }
}

function writeValue(w: ByteWriter, v: GgufValue): void {
  switch (v.type) {
    case "uint32":
      w.u32(GgufValueType.UINT32);
      return w.u32(v.value);
    case "int32":
      w.u32(GgufValueType.INT32);
      return w.i32(v.value);
    case "float32":
      w.u32(GgufValueType.FLOAT32);
      return w.f32(v.value);
    case "bool":
      w.u32(GgufValueType.BOOL);
      return w.bytes(new Uint8Array([v.value ? 1 : 0]));
    case "string":
      w.u32(GgufValueType.STRING);
      return w.string(v.value);
    case "string[]":
      w.u32(GgufValueType.ARRAY);
      w.u32(GgufValueType.STRING);
      w.u64(v.value.length);
      for (const s of v.value) w.string(s);
      return;
    case "int32[]":
      w.u32(GgufValueType.ARRAY);
      w.u32(GgufValueType.INT32);
      w.u64(v.value.length);
      for (const x of v.value) w.i32(x);
      return;
  }
}

const alignUp = (n: number, a: number) => Math.ceil(n / a) * a;

/**
 * Writes a GGUF file. The alignment is `general.alignment` when the metadata sets it (uint32),
 * else 32.
 *
 * @example
 * ```ts
 * await writeGguf("/tmp/t.gguf", [["general.architecture", { type: "string", value: "llama" }]], [
 *   { name: "w", dims: [32, 2], type: "Q8_0", values: () => new Float32Array(64).fill(0.5) },
 * ]);
 * ```
 */
export async function writeGguf(
  path: string,
  metadata: ReadonlyArray<readonly [string, GgufValue]>,
  tensors: readonly GgufTensor[],
): Promise<void> {
  const alignmentEntry = metadata.find(([k]) => k === "general.alignment")?.[1];
  const alignment = alignmentEntry?.type === "uint32" ? alignmentEntry.value : 32;
  const w = new ByteWriter();
  w.bytes(new TextEncoder().encode("GGUF"));
  w.u32(3);
  w.u64(tensors.length);
  w.u64(metadata.length);
  for (const [key, value] of metadata) {
    w.string(key);
    writeValue(w, value);
  }
  let offset = 0;
  for (const t of tensors) {
    w.string(t.name);
    w.u32(t.dims.length);
    for (const d of t.dims) w.u64(d);
    w.u32(GgmlType[t.type]);
    w.u64(offset);
    offset = alignUp(offset + ggufTensorBytes(t.type, t.dims), alignment);
  }
  w.bytes(new Uint8Array(alignUp(w.length, alignment) - w.length));

  using file = await Deno.open(path, { write: true, create: true, truncate: true });
  const writeAll = async (b: Uint8Array) => {
    for (let done = 0; done < b.length;) done += await file.write(b.subarray(done));
  };
  await writeAll(w.concat());
  for (const t of tensors) {
    const values = t.values();
    const expected = t.dims.reduce((a, b) => a * b, 1);
    if (values.length !== expected) {
      throw new RangeError(`tensor ${t.name} has ${values.length} values, dims need ${expected}`);
    }
    const data = encodeGgmlTensor(t.type, values);
    await writeAll(data);
    await writeAll(new Uint8Array(alignUp(data.length, alignment) - data.length));
  }
}

/**
 * A small reader (and writer, for generated models) of the safetensors format: an 8-byte
 * little-endian header length, a JSON header `{name: {dtype, shape, data_offsets: [begin, end]}}`
 * (plus an optional `__metadata__`), then the raw little-endian tensor data. Floating-point
 * tensors (F32, F16, BF16, F64) are read as Float32Array.
 *
 * @module
 */

import { halfToFloat } from "../../core/float16.ts";

/** One tensor read as float32. */
export interface FloatTensor {
  dtype: string;
  shape: number[];
  data: Float32Array;
}

interface HeaderEntry {
  dtype: string;
  shape: number[];
  data_offsets: [number, number];
}

const BYTES: Record<string, number> = { F32: 4, F16: 2, BF16: 2, F64: 8 };

/**
 * Parses a safetensors file; every floating-point tensor comes back as float32.
 *
 * @example
 * ```ts
 * const bytes = writeSafetensors({ "linear.weight": { shape: [1, 2], data: Float32Array.of(1, 2) } });
 * readSafetensors(bytes).get("linear.weight")!.data; // Float32Array [1, 2]
 * ```
 */
export function readSafetensors(bytes: Uint8Array): Map<string, FloatTensor> {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.length < 8) throw new Error("not a safetensors file: shorter than its header length");
  const headerLength = Number(view.getBigUint64(0, true));
  if (8 + headerLength > bytes.length) {
    throw new Error(`not a safetensors file: header of ${headerLength} bytes passes the end`);
  }
  const header = JSON.parse(
    new TextDecoder().decode(bytes.subarray(8, 8 + headerLength)),
  ) as Record<string, HeaderEntry>;
  const base = 8 + headerLength;
  const out = new Map<string, FloatTensor>();
  for (const [name, entry] of Object.entries(header)) {
    if (name === "__metadata__") continue;
    const size = BYTES[entry.dtype];
    if (size === undefined) {
      throw new Error(
        `safetensors tensor '${name}' has dtype ${entry.dtype}; only F32, F16, BF16 and F64 are read`,
      );
    }
    const [begin, end] = entry.data_offsets;
    const count = entry.shape.reduce((a, b) => a * b, 1);
    if (end - begin !== count * size || base + end > bytes.length) {
      throw new Error(`safetensors tensor '${name}': offsets ${begin}-${end} do not fit its shape`);
    }
    const data = new Float32Array(count);
    const at = base + begin;
    for (let i = 0; i < count; i++) {
      const o = at + i * size;
      data[i] = entry.dtype === "F32"
        ? view.getFloat32(o, true)
        : entry.dtype === "F64"
        ? view.getFloat64(o, true)
        : entry.dtype === "F16"
        ? halfToFloat(view.getUint16(o, true))
        : new Float32Array(new Uint32Array([view.getUint16(o, true) << 16]).buffer)[0];
    }
    out.set(name, { dtype: entry.dtype, shape: entry.shape, data });
  }
  return out;
}

/** Writes float32 tensors as a safetensors file (sorted by name, as the Python library does). */
export function writeSafetensors(
  tensors: Record<string, { shape: number[]; data: Float32Array }>,
): Uint8Array {
  const header: Record<string, HeaderEntry> = {};
  let offset = 0;
  const names = Object.keys(tensors).sort();
  for (const name of names) {
    const { shape, data } = tensors[name];
    header[name] = { dtype: "F32", shape, data_offsets: [offset, offset + data.byteLength] };
    offset += data.byteLength;
  }
  let json = JSON.stringify(header);
  // The data starts 8-byte aligned; the header is padded with spaces.
  while ((8 + json.length) % 8 !== 0) json += " ";
  const headerBytes = new TextEncoder().encode(json);
  const out = new Uint8Array(8 + headerBytes.length + offset);
  new DataView(out.buffer).setBigUint64(0, BigInt(headerBytes.length), true);
  out.set(headerBytes, 8);
  let at = 8 + headerBytes.length;
  for (const name of names) {
    const d = tensors[name].data;
    const le = new DataView(out.buffer, at, d.byteLength);
    for (let i = 0; i < d.length; i++) le.setFloat32(i * 4, d[i], true);
    at += d.byteLength;
  }
  return out;
}

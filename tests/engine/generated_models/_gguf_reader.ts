// A GGUF reader written from the format description, independent of our writer, for the tests of
// the GGUF files we write (gguf_writer_test.ts, bert_gguf_test.ts).
import { halfToFloat } from "../../../src/core/float16.ts";

/** A GGUF reader written from the format description, independent of the writer. */
export function readGguf(bytes: Uint8Array) {
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = 0;
  const u32 = () => (at += 4, v.getUint32(at - 4, true));
  const u64 = () => (at += 8, Number(v.getBigUint64(at - 8, true)));
  const str = () => {
    const n = u64();
    at += n;
    return new TextDecoder().decode(bytes.subarray(at - n, at));
  };
  const scalar = (type: number): unknown => {
    switch (type) {
      case 4:
        return u32();
      case 5:
        return (at += 4, v.getInt32(at - 4, true));
      case 6:
        return (at += 4, v.getFloat32(at - 4, true));
      case 7:
        return bytes[at++] === 1;
      case 8:
        return str();
    }
    throw new Error(`unexpected value type ${type}`);
  };
  const magic = new TextDecoder().decode(bytes.subarray(0, 4));
  at = 4;
  const version = u32();
  const tensorCount = u64();
  const kvCount = u64();
  const metadata = new Map<string, unknown>();
  for (let i = 0; i < kvCount; i++) {
    const key = str();
    const type = u32();
    if (type === 9) {
      const itemType = u32();
      metadata.set(key, Array.from({ length: u64() }, () => scalar(itemType)));
    } else metadata.set(key, scalar(type));
  }
  const tensors = Array.from({ length: tensorCount }, () => {
    const name = str();
    const dims = Array.from({ length: u32() }, () => u64());
    return { name, dims, type: u32(), offset: u64() };
  });
  const alignment = (metadata.get("general.alignment") as number | undefined) ?? 32;
  const dataStart = Math.ceil(at / alignment) * alignment;
  return { magic, version, metadata, tensors, headerEnd: at, dataStart, alignment };
}

/** Decodes Q8_0 blocks to floats. */
export function decodeQ8_0(bytes: Uint8Array, count: number): Float32Array {
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out = new Float32Array(count);
  for (let i = 0; i < count; i++) {
    const block = Math.floor(i / 32) * 34;
    out[i] = halfToFloat(v.getUint16(block, true)) * v.getInt8(block + 2 + (i % 32));
  }
  return out;
}

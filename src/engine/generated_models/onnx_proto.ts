/**
 * A small protobuf encoder for the parts of the ONNX schema (onnx.proto, IR version 8) that our
 * generated models use: ModelProto, GraphProto, NodeProto, AttributeProto, TensorProto headers and
 * ValueInfoProto. Field numbers follow onnx.proto; repeated scalars are written unpacked, which
 * every protobuf parser accepts.
 *
 * @module
 */

/** ONNX `TensorProto.DataType` values we write. */
export const TensorDataType = {
  FLOAT: 1,
  UINT8: 2,
  INT8: 3,
  INT32: 6,
  INT64: 7,
  BOOL: 9,
  FLOAT16: 10,
} as const;
/** One of {@link TensorDataType}. */
export type TensorDataType = typeof TensorDataType[keyof typeof TensorDataType];

/** Bytes per element of each {@link TensorDataType}. */
export const BYTES_PER_ELEMENT: Record<TensorDataType, number> = {
  1: 4,
  2: 1,
  3: 1,
  6: 4,
  7: 8,
  9: 1,
  10: 2,
};

/** A tensor dimension: a fixed size or a symbolic name such as `"batch_size"`. */
export type Dim = number | string;

/** An attribute value; plain numbers are INT, wrap floats as `{ float: x }`. */
export type AttrValue =
  | number
  | bigint
  | string
  | number[]
  | { float: number }
  | { floats: number[] }
  | { graph: Uint8Array };

const WIRE_VARINT = 0;
const WIRE_LEN = 2;
const WIRE_FIXED32 = 5;
const UTF8 = new TextEncoder();

/**
 * A growable byte buffer with protobuf field writers.
 *
 * @example
 * ```ts
 * const w = new ProtoWriter();
 * w.string(1, "x");
 * const bytes = w.finish();
 * ```
 */
export class ProtoWriter {
  #buf = new Uint8Array(256);
  #len = 0;

  #ensure(extra: number): void {
    if (this.#len + extra <= this.#buf.length) return;
    let size = this.#buf.length * 2;
    while (size < this.#len + extra) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.#buf.subarray(0, this.#len));
    this.#buf = next;
  }

  /** Writes a raw varint (negative numbers as 64-bit two's complement, as int64 requires). */
  varint(value: number | bigint): this {
    let v = typeof value === "bigint" ? BigInt.asUintN(64, value) : value;
    if (typeof v === "number" && (v < 0 || v > Number.MAX_SAFE_INTEGER)) {
      v = BigInt.asUintN(64, BigInt(v));
    }
    this.#ensure(10);
    if (typeof v === "number") {
      while (v >= 0x80) {
        this.#buf[this.#len++] = (v % 0x80) | 0x80;
        v = Math.floor(v / 0x80);
      }
      this.#buf[this.#len++] = v;
    } else {
      while (v >= 0x80n) {
        this.#buf[this.#len++] = Number(v & 0x7fn) | 0x80;
        v >>= 7n;
      }
      this.#buf[this.#len++] = Number(v);
    }
    return this;
  }

  /** Appends bytes as they are. */
  raw(bytes: Uint8Array): this {
    this.#ensure(bytes.length);
    this.#buf.set(bytes, this.#len);
    this.#len += bytes.length;
    return this;
  }

  /** Writes a field tag. */
  tag(field: number, wire: number): this {
    return this.varint(field * 8 + wire);
  }

  /** Writes an int64/int32/enum field. */
  int(field: number, value: number | bigint): this {
    return this.tag(field, WIRE_VARINT).varint(value);
  }

  /** Writes a float field. */
  float(field: number, value: number): this {
    this.tag(field, WIRE_FIXED32);
    this.#ensure(4);
    new DataView(this.#buf.buffer).setFloat32(this.#len, value, true);
    this.#len += 4;
    return this;
  }

  /** Writes a length-delimited field (bytes or an embedded message). */
  bytes(field: number, value: Uint8Array): this {
    return this.tag(field, WIRE_LEN).varint(value.length).raw(value);
  }

  /** Writes a string field. */
  string(field: number, value: string): this {
    return this.bytes(field, UTF8.encode(value));
  }

  /** The bytes written so far. */
  finish(): Uint8Array {
    return this.#buf.slice(0, this.#len);
  }
}

/** Size in bytes of `value` as a varint. */
export function varintSize(value: number): number {
  let n = 1;
  while (value >= 0x80) {
    value = Math.floor(value / 0x80);
    n++;
  }
  return n;
}

/** Encodes a ValueInfoProto (a graph input or output with element type and shape). */
export function encodeValueInfo(name: string, elemType: TensorDataType, shape: Dim[]): Uint8Array {
  const shapeW = new ProtoWriter();
  for (const d of shape) {
    const dim = new ProtoWriter();
    if (typeof d === "number") dim.int(1, d);
    else dim.string(2, d);
    shapeW.bytes(1, dim.finish());
  }
  const tensorType = new ProtoWriter().int(1, elemType).bytes(2, shapeW.finish()).finish();
  const type = new ProtoWriter().bytes(1, tensorType).finish();
  return new ProtoWriter().string(1, name).bytes(2, type).finish();
}

/** Encodes an AttributeProto. */
export function encodeAttribute(name: string, value: AttrValue): Uint8Array {
  const w = new ProtoWriter().string(1, name);
  if (typeof value === "number" || typeof value === "bigint") {
    if (typeof value === "number" && !Number.isInteger(value)) {
      throw new TypeError(`attribute ${name}: ${value} is not an integer; wrap floats as {float}`);
    }
    w.int(3, value).int(20, 2); // INT
  } else if (typeof value === "string") {
    w.string(4, value).int(20, 3); // STRING
  } else if (Array.isArray(value)) {
    for (const v of value) w.int(8, v);
    w.int(20, 7); // INTS
  } else if ("graph" in value) {
    w.bytes(6, value.graph).int(20, 5); // GRAPH (an encoded GraphProto, e.g. an If branch)
  } else if ("float" in value) {
    w.float(2, value.float).int(20, 1); // FLOAT
  } else {
    for (const v of value.floats) w.float(7, v);
    w.int(20, 6); // FLOATS
  }
  return w.finish();
}

/** Encodes a NodeProto. */
export function encodeNode(
  opType: string,
  inputs: string[],
  outputs: string[],
  options: { name?: string; domain?: string; attributes?: Record<string, AttrValue> } = {},
): Uint8Array {
  const w = new ProtoWriter();
  for (const i of inputs) w.string(1, i);
  for (const o of outputs) w.string(2, o);
  if (options.name) w.string(3, options.name);
  w.string(4, opType);
  for (const [k, v] of Object.entries(options.attributes ?? {})) {
    w.bytes(5, encodeAttribute(k, v));
  }
  if (options.domain) w.string(7, options.domain);
  return w.finish();
}

/**
 * Encodes the fields of a TensorProto before its `raw_data` (dims, data_type, name), so a large
 * tensor's data can be streamed after them.
 */
export function encodeTensorHeader(
  name: string,
  dataType: TensorDataType,
  dims: readonly number[],
): Uint8Array {
  const w = new ProtoWriter();
  for (const d of dims) w.int(1, d);
  w.int(2, dataType);
  w.string(8, name);
  return w.finish();
}

/** Field number of `TensorProto.raw_data`. */
export const TENSOR_RAW_DATA_FIELD = 9;
/** Wire type of length-delimited fields. */
export const WIRE_TYPE_LEN = WIRE_LEN;

/**
 * Encodes a whole TensorProto whose data lives in an external file (`data_location: EXTERNAL`,
 * `external_data` entries `location`, `offset`, `length`), as `onnx.save(...,
 * save_as_external_data=True)` writes it.
 */
export function encodeExternalTensor(
  name: string,
  dataType: TensorDataType,
  dims: readonly number[],
  location: string,
  offset: number,
  length: number,
): Uint8Array {
  const w = new ProtoWriter();
  for (const d of dims) w.int(1, d);
  w.int(2, dataType);
  w.string(8, name);
  for (
    const [k, v] of [["location", location], ["offset", String(offset)], ["length", String(length)]]
  ) {
    w.bytes(13, new ProtoWriter().string(1, k).string(2, v).finish());
  }
  w.int(14, 1); // data_location = EXTERNAL
  return w.finish();
}

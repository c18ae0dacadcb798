/**
 * An in-memory ONNX graph under construction: inputs, outputs, nodes (encoded at once, they are
 * small) and initializers (kept as lazy {@link TensorSource}s so a large model's weights are only
 * produced while the file is written).
 *
 * @module
 */

import {
  type AttrValue,
  BYTES_PER_ELEMENT,
  type Dim,
  encodeNode,
  encodeValueInfo,
  TensorDataType,
} from "./onnx_proto.ts";

/** The data of one initializer, produced in chunks when the model file is written. */
export interface TensorSource {
  readonly dataType: TensorDataType;
  readonly dims: readonly number[];
  /** Total size of the little-endian raw data. */
  readonly byteLength: number;
  /** Yields the raw data in order; the chunks' lengths add up to `byteLength`. */
  chunks(): Iterable<Uint8Array>;
}

/** One initializer of a graph. */
export interface GraphInitializer {
  name: string;
  source: TensorSource;
}

/** Wraps a small typed array as a {@link TensorSource}. */
export function tensorFromArray(
  dataType: TensorDataType,
  dims: readonly number[],
  data: Float32Array | BigInt64Array | Int8Array | Uint8Array | Int32Array | Uint16Array,
): TensorSource {
  const count = dims.reduce((a, b) => a * b, 1);
  if (data.length !== count) {
    throw new RangeError(`tensor data has ${data.length} elements, dims ${dims} need ${count}`);
  }
  if (data.BYTES_PER_ELEMENT !== BYTES_PER_ELEMENT[dataType]) {
    throw new TypeError(`array of ${data.BYTES_PER_ELEMENT}-byte elements for type ${dataType}`);
  }
  const bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  return { dataType, dims, byteLength: bytes.length, chunks: () => [bytes] };
}

/**
 * Builds an ONNX graph. Node methods return the names of the tensors they produce.
 *
 * @example
 * ```ts
 * import { TensorDataType } from "./onnx_proto.ts";
 * const g = new OnnxGraph("add_one");
 * const x = g.input("x", TensorDataType.FLOAT, ["n"]);
 * g.node("Add", [x, g.constFloat([1])], {}, "y");
 * g.output("y", TensorDataType.FLOAT, ["n"]);
 * ```
 */
export class OnnxGraph {
  readonly name: string;
  readonly nodes: Uint8Array[] = [];
  readonly inputs: Uint8Array[] = [];
  readonly outputs: Uint8Array[] = [];
  readonly initializers: GraphInitializer[] = [];
  #names = new Set<string>();
  #counter = 0;
  #consts = new Map<string, string>();

  #prefix: string;

  /** `options.prefix` starts every generated name (keeps an If branch's names apart from its parent's). */
  constructor(name: string, options: { prefix?: string } = {}) {
    this.name = name;
    this.#prefix = options.prefix ?? "";
  }

  #claim(name: string): string {
    if (this.#names.has(name)) throw new Error(`duplicate tensor name in graph: ${name}`);
    this.#names.add(name);
    return name;
  }

  #unused(prefix: string): string {
    let name: string;
    do name = `${this.#prefix}${prefix}_${this.#counter++}`; while (this.#names.has(name));
    return name;
  }

  /** A fresh tensor name with a readable prefix. */
  fresh(prefix: string): string {
    return this.#claim(this.#unused(prefix));
  }

  /** Declares a graph input. */
  input(name: string, elemType: TensorDataType, shape: Dim[]): string {
    this.inputs.push(encodeValueInfo(this.#claim(name), elemType, shape));
    return name;
  }

  /** Declares an existing tensor as a graph output. */
  output(name: string, elemType: TensorDataType, shape: Dim[]): void {
    this.outputs.push(encodeValueInfo(name, elemType, shape));
  }

  /** Adds a named initializer. */
  initializer(name: string, source: TensorSource): string {
    this.initializers.push({ name: this.#claim(name), source });
    return name;
  }

  #constant(
    key: string,
    make: () => TensorSource,
  ): string {
    const known = this.#consts.get(key);
    if (known) return known;
    const name = this.initializer(this.#unused("const"), make());
    this.#consts.set(key, name);
    return name;
  }

  /** A shared int64 constant (1-D, or a scalar when `scalar` is set). */
  constInt64(values: number[], scalar = false): string {
    if (scalar && values.length !== 1) throw new RangeError("a scalar holds one value");
    const dims = scalar ? [] : [values.length];
    return this.#constant(
      `i64:${dims.length}:${values.join(",")}`,
      () => tensorFromArray(TensorDataType.INT64, dims, BigInt64Array.from(values, BigInt)),
    );
  }

  /** A shared float constant (1-D, or a scalar when `scalar` is set). */
  constFloat(values: number[], scalar = false): string {
    if (scalar && values.length !== 1) throw new RangeError("a scalar holds one value");
    const dims = scalar ? [] : [values.length];
    return this.#constant(
      `f32:${dims.length}:${values.join(",")}`,
      () => tensorFromArray(TensorDataType.FLOAT, dims, Float32Array.from(values)),
    );
  }

  /** A shared uint8 scalar constant. */
  constUint8(value: number): string {
    return this.#constant(
      `u8:${value}`,
      () => tensorFromArray(TensorDataType.UINT8, [], Uint8Array.of(value)),
    );
  }

  /**
   * Adds a node with one output and returns its name (`output` if given, else a fresh one).
   * Pass "" for an omitted optional input.
   */
  node(
    opType: string,
    inputs: string[],
    attributes: Record<string, AttrValue> = {},
    output?: string,
  ): string {
    return this.nodeMulti(opType, inputs, 1, attributes, output ? [output] : undefined)[0];
  }

  /**
   * Adds a node of another operator domain (e.g. `com.microsoft` contrib ops) with `count`
   * outputs and returns their names.
   */
  nodeIn(
    domain: string,
    opType: string,
    inputs: string[],
    count: number,
    attributes: Record<string, AttrValue> = {},
    outputs?: string[],
  ): string[] {
    const outs = outputs
      ? outputs.map((o) => this.#claim(o))
      : Array.from({ length: count }, () => this.fresh(opType.toLowerCase()));
    this.nodes.push(
      encodeNode(opType, inputs, outs, { name: `${outs[0]}_node`, attributes, domain }),
    );
    return outs;
  }

  /** Adds a node with `count` outputs and returns their names. */
  nodeMulti(
    opType: string,
    inputs: string[],
    count: number,
    attributes: Record<string, AttrValue> = {},
    outputs?: string[],
  ): string[] {
    // The default domain is the empty one, which the encoder leaves out.
    return this.nodeIn("", opType, inputs, count, attributes, outputs);
  }
}

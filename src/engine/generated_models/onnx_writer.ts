/**
 * Writes an {@link OnnxGraph} as an ONNX model file. Sizes of every message are computed first, so
 * initializer data streams straight from its {@link TensorSource} to the file and a model of
 * hundreds of megabytes never sits in memory as one buffer.
 *
 * @module
 */

import type { OnnxGraph } from "./onnx_graph.ts";
import { dirname, join } from "node:path";
import {
  encodeExternalTensor,
  encodeTensorHeader,
  ProtoWriter,
  TENSOR_RAW_DATA_FIELD,
  varintSize,
  WIRE_TYPE_LEN,
} from "./onnx_proto.ts";

/** Options of {@link writeOnnxModel}. */
export interface OnnxModelOptions {
  /** Default-domain opset version (default 17). */
  opset?: number;
  /** ONNX IR version (default 8, the one that goes with opset 17). */
  irVersion?: number;
  producerName?: string;
  producerVersion?: string;
  docString?: string;
  /** `metadata_props` key/value pairs. */
  metadata?: Record<string, string>;
  /** Further operator domains and their versions (e.g. `{ "com.microsoft": 1 }`). */
  opsetImports?: Record<string, number>;
  /**
   * Keep initializers of at least `threshold` bytes (default 1024) in a data file `location` (a
   * name next to the model file, e.g. `model.onnx_data`) instead of in the model: their
   * TensorProtos carry `data_location: EXTERNAL` with `location`, `offset` and `length`.
   */
  externalData?: { location: string; threshold?: number };
}

// ModelProto and GraphProto field numbers (onnx.proto).
const MODEL_IR_VERSION = 1;
const MODEL_PRODUCER_NAME = 2;
const MODEL_PRODUCER_VERSION = 3;
const MODEL_DOC_STRING = 6;
const MODEL_GRAPH = 7;
const MODEL_OPSET_IMPORT = 8;
const MODEL_METADATA = 14;
const GRAPH_NODE = 1;
const GRAPH_NAME = 2;
const GRAPH_INITIALIZER = 5;
const GRAPH_INPUT = 11;
const GRAPH_OUTPUT = 12;

const FLUSH_BYTES = 1 << 22;

/**
 * Longest stretch (ms) of computing chunks without giving the event loop a turn. Sources compute
 * their data on this thread (random draws, quantization); the file writes between them are far
 * apart for dense data, so without these turns a process writing a large model did not see
 * signals (Ctrl-C) or timers for up to a second at a time.
 */
const TURN_MS = 50;

/** Gives the event loop a turn when {@link TURN_MS} have passed since the last one. */
class Turns {
  #last = performance.now();
  async take(): Promise<void> {
    if (performance.now() - this.#last < TURN_MS) return;
    await new Promise((resolve) => setTimeout(resolve, 0));
    this.#last = performance.now();
  }
}

if (new Uint8Array(new Uint16Array([1]).buffer)[0] !== 1) {
  // ONNX raw_data is little-endian and our tensor sources hand out native typed-array bytes.
  throw new Error("onnx_writer needs a little-endian host");
}

function lenFieldSize(field: number, length: number): number {
  return varintSize(field * 8 + WIRE_TYPE_LEN) + varintSize(length) + length;
}

/**
 * Writes `graph` to `path` as an ONNX model and returns the file size in bytes.
 *
 * @example
 * ```ts
 * import { OnnxGraph } from "./onnx_graph.ts";
 * import { TensorDataType } from "./onnx_proto.ts";
 * const g = new OnnxGraph("identity");
 * g.input("x", TensorDataType.FLOAT, ["n"]);
 * g.node("Identity", ["x"], {}, "y");
 * g.output("y", TensorDataType.FLOAT, ["n"]);
 * await writeOnnxModel("/tmp/identity.onnx", g);
 * ```
 */
export async function writeOnnxModel(
  path: string,
  graph: OnnxGraph,
  options: OnnxModelOptions = {},
): Promise<number> {
  // Everything of the graph but the initializers' raw data is small: encode it up front.
  const small = new ProtoWriter();
  for (const n of graph.nodes) small.bytes(GRAPH_NODE, n);
  small.string(GRAPH_NAME, graph.name);
  for (const i of graph.inputs) small.bytes(GRAPH_INPUT, i);
  for (const o of graph.outputs) small.bytes(GRAPH_OUTPUT, o);

  const external = options.externalData;
  const threshold = external?.threshold ?? 1024;
  const outside = external
    ? graph.initializers.filter(({ source }) => source.byteLength >= threshold)
    : [];
  const externalHeaders: Uint8Array[] = [];
  const turns = new Turns();
  if (external) {
    let offset = 0;
    const data = await Deno.open(join(dirname(path), external.location), {
      write: true,
      create: true,
      truncate: true,
    });
    try {
      for (const { name, source } of outside) {
        let got = 0;
        for (const chunk of source.chunks()) {
          await writeAll(data, chunk);
          got += chunk.length;
          await turns.take();
        }
        if (got !== source.byteLength) {
          throw new Error(`initializer produced ${got} bytes, declared ${source.byteLength}`);
        }
        externalHeaders.push(
          encodeExternalTensor(
            name,
            source.dataType,
            source.dims,
            external.location,
            offset,
            source.byteLength,
          ),
        );
        offset += source.byteLength;
      }
    } finally {
      data.close();
    }
  }
  for (const t of externalHeaders) small.bytes(GRAPH_INITIALIZER, t);
  const smallBytes = small.finish();
  const inside = graph.initializers.filter((i) => !outside.includes(i));

  const inits = inside.map(({ name, source }) => {
    const header = encodeTensorHeader(name, source.dataType, source.dims);
    const tensorLen = header.length + lenFieldSize(TENSOR_RAW_DATA_FIELD, source.byteLength);
    return { header, tensorLen, source };
  });
  const graphLen = inits.reduce(
    (sum, t) => sum + lenFieldSize(GRAPH_INITIALIZER, t.tensorLen),
    smallBytes.length,
  );

  const head = new ProtoWriter()
    .int(MODEL_IR_VERSION, options.irVersion ?? 8)
    .string(MODEL_PRODUCER_NAME, options.producerName ?? "svc")
    .string(MODEL_PRODUCER_VERSION, options.producerVersion ?? "1");
  if (options.docString) head.string(MODEL_DOC_STRING, options.docString);
  head.bytes(
    MODEL_OPSET_IMPORT,
    new ProtoWriter().string(1, "").int(2, options.opset ?? 17).finish(),
  );
  for (const [domain, version] of Object.entries(options.opsetImports ?? {})) {
    head.bytes(MODEL_OPSET_IMPORT, new ProtoWriter().string(1, domain).int(2, version).finish());
  }
  for (const [key, value] of Object.entries(options.metadata ?? {})) {
    head.bytes(MODEL_METADATA, new ProtoWriter().string(1, key).string(2, value).finish());
  }
  head.tag(MODEL_GRAPH, WIRE_TYPE_LEN).varint(graphLen).raw(smallBytes);

  const file = await Deno.open(path, { write: true, create: true, truncate: true });
  let pending: Uint8Array[] = [];
  let pendingBytes = 0;
  let written = 0;
  const flush = async (): Promise<void> => {
    if (pendingBytes === 0) return;
    const buf = new Uint8Array(pendingBytes);
    let off = 0;
    for (const p of pending) {
      buf.set(p, off);
      off += p.length;
    }
    pending = [];
    pendingBytes = 0;
    await writeAll(file, buf);
    written += buf.length;
  };
  const put = async (bytes: Uint8Array): Promise<void> => {
    if (bytes.length >= FLUSH_BYTES) {
      await flush();
      await writeAll(file, bytes);
      written += bytes.length;
      return;
    }
    pending.push(bytes);
    pendingBytes += bytes.length;
    if (pendingBytes >= FLUSH_BYTES) await flush();
  };
  try {
    await put(head.finish());
    for (const { header, tensorLen, source } of inits) {
      const prefix = new ProtoWriter().tag(GRAPH_INITIALIZER, WIRE_TYPE_LEN).varint(tensorLen)
        .raw(header).tag(TENSOR_RAW_DATA_FIELD, WIRE_TYPE_LEN).varint(source.byteLength);
      await put(prefix.finish());
      let got = 0;
      for (const chunk of source.chunks()) {
        got += chunk.length;
        // Copy: sources may reuse their chunk buffer between yields.
        await put(chunk.length >= FLUSH_BYTES ? chunk : chunk.slice());
        await turns.take();
      }
      if (got !== source.byteLength) {
        throw new Error(`initializer produced ${got} bytes, declared ${source.byteLength}`);
      }
    }
    await flush();
  } finally {
    file.close();
  }
  return written;
}

async function writeAll(file: Deno.FsFile, bytes: Uint8Array): Promise<void> {
  let off = 0;
  while (off < bytes.length) off += await file.write(bytes.subarray(off));
}

/**
 * Encodes `graph` as a GraphProto in memory, initializers inline: for small graphs such as the
 * branches of an `If` node (pass the result as the attribute value `{ graph }`).
 */
export function encodeGraphProto(graph: OnnxGraph): Uint8Array {
  const w = new ProtoWriter();
  for (const n of graph.nodes) w.bytes(GRAPH_NODE, n);
  w.string(GRAPH_NAME, graph.name);
  for (const { name, source } of graph.initializers) {
    const t = new ProtoWriter().raw(encodeTensorHeader(name, source.dataType, source.dims));
    const parts = [...source.chunks()].map((c) => c.slice());
    const data = new Uint8Array(parts.reduce((a, c) => a + c.length, 0));
    let off = 0;
    for (const p of parts) {
      data.set(p, off);
      off += p.length;
    }
    t.bytes(TENSOR_RAW_DATA_FIELD, data);
    w.bytes(GRAPH_INITIALIZER, t.finish());
  }
  for (const i of graph.inputs) w.bytes(GRAPH_INPUT, i);
  for (const o of graph.outputs) w.bytes(GRAPH_OUTPUT, o);
  return w.finish();
}

/**
 * Facts read from an ONNX model file without loading it: which file a dtype selects, which
 * operator types it uses, and how its `MatMulNBits` nodes compute.
 *
 * @module
 */

import { join } from "node:path";
import { getLogger } from "../core/logging.ts";
import {
  chooseOnnxFile,
  type Dtype,
  type DtypeDevice,
  type OnnxFile,
  onnxFilesIn,
} from "./dtype.ts";

/** The ONNX weights files in `folder/onnx/` (none when it has no such folder). */
export async function onnxFilesInFolder(folder: string): Promise<OnnxFile[]> {
  const paths: string[] = [];
  try {
    for await (const entry of Deno.readDir(join(folder, "onnx"))) {
      if (entry.isFile || entry.isSymlink) paths.push(`onnx/${entry.name}`);
    }
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
  return onnxFilesIn(paths);
}

/**
 * The base name of the ONNX file in `folder` for `dtype`: `model`, or `decoder_model_merged` for
 * legacy merged-decoder repos. `model` when neither file exists (the loader then reports it).
 */
export async function onnxBaseNameIn(folder: string, dtype: Dtype): Promise<string> {
  const file = (await onnxFilesInFolder(folder)).find((f) => f.dtype === dtype);
  return file?.baseName ?? "model";
}

const CHUNK = 1 << 24;

/**
 * Which of `opTypes` occur in the ONNX file at `path`. Node op types are plain strings in the
 * protobuf, so a byte search finds them; weights are read past in 16 MiB chunks.
 */
export async function findOpTypes(path: string, opTypes: readonly string[]): Promise<Set<string>> {
  const needles = opTypes.map((t) => new TextEncoder().encode(t));
  const longest = Math.max(...needles.map((n) => n.length));
  const found = new Set<string>();
  using file = await Deno.open(path);
  const buf = new Uint8Array(CHUNK + longest);
  let kept = 0;
  while (found.size < opTypes.length) {
    const n = await file.read(buf.subarray(kept, kept + CHUNK));
    if (n === null) break;
    const window = buf.subarray(0, kept + n);
    needles.forEach((needle, i) => {
      if (!found.has(opTypes[i]) && indexOf(window, needle) >= 0) found.add(opTypes[i]);
    });
    // Keep the tail so a name split across two reads is still found.
    kept = Math.min(longest - 1, window.length);
    buf.copyWithin(0, window.length - kept, window.length);
  }
  return found;
}

function indexOf(haystack: Uint8Array, needle: Uint8Array): number {
  const first = needle[0];
  for (let i = haystack.indexOf(first); i >= 0; i = haystack.indexOf(first, i + 1)) {
    if (i + needle.length > haystack.length) return -1;
    let j = 1;
    while (j < needle.length && haystack[i + j] === needle[j]) j++;
    if (j === needle.length) return i;
  }
  return -1;
}

/**
 * The distinct `accuracy_level` attributes of the `MatMulNBits` nodes of the ONNX file at `path`
 * (0 where a node has none, onnxruntime's default), ascending; empty when it has no such node.
 * Level 4 quantizes activations to int8 and runs an int8 GEMM (about 2x our q8 on a CPU), level 0
 * dequantizes the weights to float first (slower than q8). Reads only the graph's nodes, subgraphs
 * included (merged decoders keep theirs in `If` branches): weights are skipped by seeking.
 *
 * @example
 * ```ts
 * import { matMulNBitsAccuracyLevels } from "./onnx_file.ts";
 * const levels = await matMulNBitsAccuracyLevels("model/onnx/model_q4.onnx"); // e.g. [4]
 * ```
 */
export async function matMulNBitsAccuracyLevels(path: string): Promise<number[]> {
  using file = await Deno.open(path);
  const reader = new ProtoReader(file);
  const levels = new Set<number>();
  const size = (await file.stat()).size;
  // ModelProto: graph = 7.
  await reader.fields(size, async (field, length) => {
    if (field !== 7) return false;
    await readGraph(reader, reader.offset + length, levels);
    return true;
  });
  return [...levels].sort((a, b) => a - b);
}

// GraphProto: node = 1. NodeProto: op_type = 4, attribute = 5. AttributeProto: name = 1, i = 3,
// g = 6, graphs = 11.
async function readGraph(r: ProtoReader, end: number, levels: Set<number>): Promise<void> {
  await r.fields(end, async (field, length) => {
    if (field !== 1) return false;
    let opType = "";
    let level = 0;
    await r.fields(r.offset + length, async (nodeField, nodeLength) => {
      if (nodeField === 4) opType = utf8.decode(await r.bytes(nodeLength));
      else if (nodeField === 5) {
        let name = "";
        let value = 0;
        await r.fields(r.offset + nodeLength, async (attrField, attrLength, varint) => {
          if (attrField === 1) name = utf8.decode(await r.bytes(attrLength));
          else if (attrField === 3 && varint !== undefined) value = varint;
          else if (attrField === 6 || attrField === 11) {
            await readGraph(r, r.offset + attrLength, levels);
          } else return false;
          return true;
        });
        if (name === "accuracy_level") level = value;
      } else return false;
      return true;
    });
    if (opType === "MatMulNBits") levels.add(level);
    return true;
  });
}

const utf8 = new TextDecoder();

/** Reads protobuf fields from a file, seeking past the ones nobody asks for. */
class ProtoReader {
  #file: Deno.FsFile;
  #buf = new Uint8Array(1 << 12);
  /** File offset of #buf[0]. */
  #base = 0;
  #pos = 0;
  #len = 0;

  constructor(file: Deno.FsFile) {
    this.#file = file;
  }

  get offset(): number {
    return this.#base + this.#pos;
  }

  /**
   * Calls `visit` for every field up to `end`: with the length of a length-delimited field (the
   * reader at its first byte) or the value of a varint. A length-delimited field `visit` does not
   * read (returns false) is skipped; one it reads must be read to its end.
   */
  async fields(
    end: number,
    visit: (field: number, length: number, varint?: number) => Promise<boolean>,
  ): Promise<void> {
    while (this.offset < end) {
      const tag = await this.#varint();
      const field = Math.floor(tag / 8);
      const wire = tag % 8;
      if (wire === 0) await visit(field, 0, await this.#varint());
      else if (wire === 1) await this.#skip(8);
      else if (wire === 5) await this.#skip(4);
      else if (wire === 2) {
        const length = await this.#varint();
        const after = this.offset + length;
        if (!(await visit(field, length))) await this.#skip(length);
        else if (this.offset !== after) throw new Error("malformed ONNX protobuf");
      } else throw new Error(`unsupported protobuf wire type ${wire} in the ONNX file`);
    }
  }

  async bytes(n: number): Promise<Uint8Array> {
    if (n > this.#buf.length) throw new Error("oversized name in the ONNX file");
    await this.#ensure(n);
    const out = this.#buf.slice(this.#pos, this.#pos + n);
    this.#pos += n;
    return out;
  }

  /** Buffers at least `n` bytes from the current offset (fewer only at the end of the file). */
  async #ensure(n: number): Promise<void> {
    if (this.#len - this.#pos >= n) return;
    this.#buf.copyWithin(0, this.#pos, this.#len);
    this.#base += this.#pos;
    this.#len -= this.#pos;
    this.#pos = 0;
    while (this.#len < n) {
      const read = await this.#file.read(this.#buf.subarray(this.#len));
      if (read === null) break;
      this.#len += read;
    }
  }

  /** A varint as a number (exact up to 2^53, enough for tags, lengths and small attributes). */
  async #varint(): Promise<number> {
    await this.#ensure(10);
    let value = 0;
    for (let scale = 1;; scale *= 128) {
      if (this.#pos >= this.#len) throw new Error("unexpected end of the ONNX file");
      const b = this.#buf[this.#pos++];
      value += (b & 0x7f) * scale;
      if (b < 0x80) return value;
    }
  }

  async #skip(n: number): Promise<void> {
    if (this.#pos + n <= this.#len) {
      this.#pos += n;
      return;
    }
    const target = this.offset + n;
    await this.#file.seek(target, Deno.SeekMode.Start);
    this.#base = target;
    this.#pos = 0;
    this.#len = 0;
  }
}

/** Which ONNX file {@link chooseOnnxFileInFolder} picked. */
export interface FolderOnnxChoice {
  dtype: Dtype;
  /** Base name of the file in `onnx/` (`model` or `decoder_model_merged`). */
  modelFileName: string;
  /** Set when the named dtype was missing and `allowDtypeFallback` chose another; says which. */
  fallback?: string;
}

/**
 * Picks the ONNX file of a model folder from the files in its `onnx/`, as loading `model` from
 * `folder` does: the named dtype (an error naming the dtypes there are when it is missing, unless
 * `allowDtypeFallback`), else the device's best (see `dtypePreference`; on cpu a q4 file whose
 * `MatMulNBits` compute in int8 goes first).
 *
 * @example
 * ```ts
 * const choice = await chooseOnnxFileInFolder("./.svc/hub/demo/chat", "demo/chat", {});
 * // { dtype: "q8", modelFileName: "model" }: onnx/model_quantized.onnx
 * ```
 */
export async function chooseOnnxFileInFolder(
  folder: string,
  model: string,
  options: { dtype?: Dtype; device?: DtypeDevice; allowDtypeFallback?: boolean },
): Promise<FolderOnnxChoice> {
  const files = await onnxFilesInFolder(folder);
  const paths = files.map((f) => f.path);
  const device = options.device ?? "cpu";
  const q4 = files.find((f) => f.dtype === "q4");
  let q4IntCompute = false;
  // Which way the q4 file computes decides whether it goes before q8 (dtypePreference); read only
  // when the preference decides (no dtype named that the folder has).
  if (device === "cpu" && q4 && !files.some((f) => f.dtype === options.dtype)) {
    const levels = await matMulNBitsAccuracyLevels(join(folder, q4.path));
    q4IntCompute = levels.length > 0 && levels.every((level) => level === 4);
    getLogger("engine").info(
      q4IntCompute
        ? `model '${model}': ${q4.path} computes in int8 (MatMulNBits accuracy_level 4), ` +
          `the fastest CPU format: q4 goes before q8`
        : `model '${model}': ${q4.path} ${
          levels.length > 0
            ? `has MatMulNBits accuracy_level ${levels.join(", ")} (float compute`
            : `has no MatMulNBits nodes (no int8 compute`
        }; slower than q8 on CPU): q8 stays first`,
    );
  }
  const choice = chooseOnnxFile(paths, device, {
    requested: options.dtype,
    allowFallback: options.allowDtypeFallback,
    model: `model '${model}'`,
    q4IntCompute,
  });
  return {
    dtype: choice.dtype,
    modelFileName: choice.baseName,
    ...(choice.fallback !== undefined ? { fallback: choice.fallback } : {}),
  };
}

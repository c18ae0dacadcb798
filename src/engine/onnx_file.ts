/**
 * Facts read from an ONNX model file without loading it: which file a dtype selects, and which
 * operator types it uses.
 *
 * @module
 */

import { join } from "node:path";
import { type Dtype, type OnnxFile, onnxFilesIn } from "./dtype.ts";

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

/**
 * Weight precisions ("dtypes") as transformers.js names them, the ONNX file each one selects, and
 * which one to load on a device when none is named.
 *
 * A repository holds one ONNX file per dtype: `onnx/model{suffix}.onnx` (Optimum and
 * onnx-community exports) or, in legacy exports, `onnx/decoder_model_merged{suffix}.onnx`.
 *
 * @module
 */

import { ValidationError } from "../core/errors.ts";

/** Every dtype, in the order they are listed to users. */
export const DTYPES = ["fp32", "fp16", "q8", "int8", "uint8", "q4", "q4f16", "bnb4"] as const;

/** A weight precision transformers.js can load. */
export type Dtype = typeof DTYPES[number];

/** File-name suffix of each dtype (`onnx/model{suffix}.onnx`). */
export const DTYPE_FILE_SUFFIX: Readonly<Record<Dtype, string>> = Object.freeze({
  fp32: "",
  fp16: "_fp16",
  q8: "_quantized",
  int8: "_int8",
  uint8: "_uint8",
  q4: "_q4",
  q4f16: "_q4f16",
  bnb4: "_bnb4",
});

/** Base names of the ONNX file of a text model, in the order they are looked for. */
export const ONNX_BASE_NAMES = ["model", "decoder_model_merged"] as const;

/** True when `value` names a dtype. */
export function isDtype(value: unknown): value is Dtype {
  return (DTYPES as readonly unknown[]).includes(value);
}

/** `value` as a dtype, or a ValidationError that lists the choices. */
export function parseDtype(value: string, param = "dtype"): Dtype {
  if (isDtype(value)) return value;
  throw new ValidationError(`dtype '${value}' is not known: use one of ${DTYPES.join(", ")}`, {
    param,
  });
}

/** Path of the ONNX file of `dtype` inside a model folder, e.g. `onnx/model_q4f16.onnx`. */
export function onnxPathFor(dtype: Dtype, baseName = "model"): string {
  return `onnx/${baseName}${DTYPE_FILE_SUFFIX[dtype]}.onnx`;
}

/** What a folder's files say about the dtype preference (read by onnx_file.ts). */
export interface DtypeFacts {
  /**
   * The q4 file's `MatMulNBits` nodes all compute in int8 (`accuracy_level` 4): on CPU it then
   * decodes about 2x faster than q8 at one sequence (bench/RESULTS.md, issue 13), and goes first.
   * Left out or false, q4 keeps its place after the int8 files (with float compute it is 2.4x
   * slower than q8).
   */
  q4IntCompute?: boolean;
}

/**
 * The dtypes to try, best first, when none is named. WebGPU runs half precision natively and
 * q4f16 is what WebGPU repos are made for. On CPU and WASM the int8 files come first, fp16 last
 * (CPU kernels convert it at every op); on the native CPU a q4 file whose `MatMulNBits` compute
 * in int8 comes before them ({@link DtypeFacts}). Note that Optimum's q8/int8/uint8 files serve one
 * sequence at a time (see families/decoder_family.ts `Batching`).
 */
export function dtypePreference(
  device: "cpu" | "wasm" | "webgpu",
  facts: DtypeFacts = {},
): readonly Dtype[] {
  if (device === "webgpu") return ["q4f16", "fp16", "q4", "fp32", "q8", "int8", "uint8", "bnb4"];
  if (device === "cpu" && facts.q4IntCompute) {
    return ["q4", "q8", "int8", "uint8", "fp32", "bnb4", "q4f16", "fp16"];
  }
  return ["q8", "int8", "uint8", "q4", "fp32", "bnb4", "q4f16", "fp16"];
}

/** What {@link chooseDtype} decided. */
export interface DtypeChoice {
  dtype: Dtype;
  /** Set when the named dtype was missing and another one is used; says which and why. */
  fallback?: string;
}

/**
 * Picks the dtype to load from those a model has files for: the named one when present, else the
 * device's best. A named dtype that is missing falls back only when `allowFallback` is set;
 * otherwise it is an error naming the dtypes the model has.
 */
export function chooseDtype(
  available: readonly Dtype[],
  device: "cpu" | "wasm" | "webgpu",
  options: { requested?: Dtype; allowFallback?: boolean; model?: string } & DtypeFacts = {},
): DtypeChoice {
  const { requested, model = "the model" } = options;
  if (available.length === 0) {
    throw new ValidationError(
      `${model} has no ONNX weights (looked for onnx/model*.onnx and ` +
        `onnx/decoder_model_merged*.onnx); use a repository exported for transformers.js ` +
        `(e.g. from the onnx-community or Xenova organisations)`,
      { param: "model" },
    );
  }
  if (requested && available.includes(requested)) return { dtype: requested };
  const best = dtypePreference(device, options).find((d) => available.includes(d))!;
  if (!requested) return { dtype: best };
  if (!options.allowFallback) {
    throw new ValidationError(
      `${model} has no ${requested} weights (${onnxPathFor(requested)}); it has ` +
        `${available.join(", ")}: choose one with --dtype`,
      { param: "dtype" },
    );
  }
  return {
    dtype: best,
    fallback: `${model} has no ${requested} weights; loading ${best} instead ` +
      `(it has ${available.join(", ")})`,
  };
}

/** The kind of device a dtype preference is for. */
export type DtypeDevice = "cpu" | "wasm" | "webgpu";

/** An ONNX weights file of a model folder or repository, by base name and dtype. */
export interface OnnxFile {
  /** `model` or `decoder_model_merged`. */
  baseName: typeof ONNX_BASE_NAMES[number];
  dtype: Dtype;
  /** Path inside the folder, e.g. `onnx/model_q4f16.onnx`. */
  path: string;
}

/**
 * The ONNX weights files among `paths` (folder-relative, `/`-separated, e.g. from a hub listing),
 * in {@link ONNX_BASE_NAMES} order, then {@link DTYPES} order.
 *
 * @example
 * ```ts
 * import { onnxFilesIn } from "./dtype.ts";
 * onnxFilesIn(["config.json", "onnx/model_q4.onnx"]); // [{ baseName: "model", dtype: "q4", … }]
 * ```
 */
export function onnxFilesIn(paths: Iterable<string>): OnnxFile[] {
  const names = new Set(paths);
  const found: OnnxFile[] = [];
  for (const baseName of ONNX_BASE_NAMES) {
    for (const dtype of DTYPES) {
      const path = onnxPathFor(dtype, baseName);
      if (names.has(path)) found.push({ baseName, dtype, path });
    }
  }
  return found;
}

/** What {@link chooseOnnxFile} decided: the dtype, and the file that holds it. */
export interface OnnxFileChoice extends DtypeChoice, OnnxFile {}

/**
 * Picks the ONNX file to load among `paths` (see {@link onnxFilesIn}): the dtype by
 * {@link chooseDtype} over every dtype some file holds, then the first base name with a file of
 * that dtype (`model` before `decoder_model_merged`). A named dtype that no file holds is an
 * error naming the files looked for and the dtypes there are, unless `allowFallback` is set.
 *
 * @example
 * ```ts
 * import { chooseOnnxFile } from "./dtype.ts";
 * const files = ["onnx/decoder_model_merged.onnx", "onnx/decoder_model_merged_q4f16.onnx"];
 * chooseOnnxFile(files, "webgpu").path; // "onnx/decoder_model_merged_q4f16.onnx"
 * chooseOnnxFile(files, "cpu").dtype; // "fp32"
 * ```
 */
export function chooseOnnxFile(
  paths: Iterable<string>,
  device: DtypeDevice,
  options: {
    requested?: Dtype;
    allowFallback?: boolean;
    model?: string;
    /** Only consider files of this base name. */
    baseName?: string;
  } & DtypeFacts = {},
): OnnxFileChoice {
  const files = onnxFilesIn(paths).filter((f) =>
    options.baseName === undefined || f.baseName === options.baseName
  );
  const available = DTYPES.filter((d) => files.some((f) => f.dtype === d));
  const { requested, model = "the model" } = options;
  if (
    requested !== undefined && available.length > 0 && !available.includes(requested) &&
    !options.allowFallback
  ) {
    const bases = options.baseName !== undefined ? [options.baseName] : ONNX_BASE_NAMES;
    throw new ValidationError(
      `${model} has no ${requested} weights (looked for ${
        bases.map((b) => `onnx/${b}${DTYPE_FILE_SUFFIX[requested]}.onnx`).join(" and ")
      }); it has ${available.join(", ")}: choose one of those with --dtype`,
      { param: "dtype" },
    );
  }
  const choice = chooseDtype(available, device, options);
  const file = files.find((f) => f.dtype === choice.dtype)!;
  return { ...choice, ...file };
}

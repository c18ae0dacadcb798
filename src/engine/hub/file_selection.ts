/**
 * Which files of a hub repository transformers.js needs for one dtype, so a download fetches
 * those and nothing else (repos often hold a dozen ONNX variants of several hundred MB each).
 *
 * @module
 */

import { NotFoundError, ValidationError } from "../../core/errors.ts";
import {
  chooseOnnxFile,
  type Dtype,
  type DtypeDevice,
  DTYPES,
  ONNX_BASE_NAMES,
  onnxFilesIn,
  parseDtype,
} from "../dtype.ts";
import type { HubListing, HubSibling } from "./hub_client.ts";

/** Files transformers.js cannot load a text model without. */
export const REQUIRED_MODEL_FILES: readonly string[] = [
  "config.json",
  "tokenizer.json",
  "tokenizer_config.json",
];

/** Files fetched when the repository has them. */
export const OPTIONAL_MODEL_FILES: readonly string[] = [
  "generation_config.json",
  "special_tokens_map.json",
  // Recent exports keep the chat template here instead of in tokenizer_config.json.
  "chat_template.jinja",
  "modules.json",
  "1_Pooling/config.json",
];

/** Options of {@link selectModelFiles}. */
export interface SelectModelFilesOptions {
  /**
   * Weight precision. Named, the repository must have it (unless `allowFallback`); left out, the
   * best the repository has for `device` (see `dtypePreference`).
   */
  dtype?: Dtype;
  /** Device the weights are for, which decides the dtype when none is named; default `cpu`. */
  device?: DtypeDevice;
  /** Load the device's best dtype when the named one is missing, instead of failing. */
  allowFallback?: boolean;
  /**
   * Base name of the ONNX file in `onnx/`; default: `model`, else `decoder_model_merged`
   * (whichever has the dtype).
   */
  modelFileName?: string;
  /** More files to fetch when present (e.g. `preprocessor_config.json`). */
  extraFiles?: string[];
}

/** A file chosen for download. */
export interface SelectedFile {
  /** Path inside the repository. */
  path: string;
  /** Size in bytes when the listing gives it. */
  size: number | null;
  /** sha256 of the content when the listing gives it (LFS files). */
  sha256: string | null;
}

/** The ONNX file chosen, and every file to fetch with it. */
export interface ModelFilePlan {
  files: SelectedFile[];
  /** The dtype of the ONNX file. */
  dtype: Dtype;
  /** Its base name (`model` or `decoder_model_merged`): what the loader's `modelFileName` is. */
  modelFileName: string;
  /** Its path, e.g. `onnx/model_quantized.onnx`. */
  onnxPath: string;
  /** Set when the named dtype was missing and another one was chosen; says which and why. */
  fallback?: string;
}

/**
 * Picks the files transformers.js needs from a hub listing: the configs and tokenizer, the ONNX
 * file of the dtype (see {@link planModelFiles}) and its external-data files (`.onnx_data`,
 * `.onnx_data_1`, …, or `.onnx.data`).
 * Throws {@link NotFoundError} naming what is missing (and, for the ONNX file, the dtypes the
 * repository does have).
 *
 * @example
 * ```ts
 * import { selectModelFiles } from "./file_selection.ts";
 * const files = selectModelFiles(
 *   { siblings: ["config.json", "tokenizer.json", "tokenizer_config.json", "onnx/model.onnx"]
 *     .map((rfilename) => ({ rfilename })) },
 *   "Xenova/tiny",
 *   { dtype: "fp32" },
 * );
 * files.map((f) => f.path); // ["config.json", "tokenizer.json", "tokenizer_config.json", "onnx/model.onnx"]
 * ```
 */
export function selectModelFiles(
  listing: HubListing,
  repo: string,
  options: SelectModelFilesOptions = {},
): SelectedFile[] {
  return planModelFiles(listing, repo, options).files;
}

/**
 * Like {@link selectModelFiles}, and says which ONNX file it chose: the named dtype, or the best
 * one for the device among those the repository has, under `onnx/model*.onnx` or (merged-decoder
 * exports) `onnx/decoder_model_merged*.onnx`.
 *
 * @example
 * ```ts
 * import { planModelFiles } from "./file_selection.ts";
 * const plan = planModelFiles(
 *   { siblings: ["config.json", "tokenizer.json", "tokenizer_config.json",
 *     "onnx/decoder_model_merged.onnx", "onnx/decoder_model_merged_q4f16.onnx"]
 *     .map((rfilename) => ({ rfilename })) },
 *   "org/chat",
 *   { device: "webgpu" },
 * );
 * [plan.dtype, plan.modelFileName]; // ["q4f16", "decoder_model_merged"]
 * ```
 */
export function planModelFiles(
  listing: HubListing,
  repo: string,
  options: SelectModelFilesOptions = {},
): ModelFilePlan {
  const modelFileName = options.modelFileName;
  if (modelFileName !== undefined && !/^[A-Za-z0-9._-]+$/.test(modelFileName)) {
    throw new ValidationError(`model file name "${modelFileName}" must be a plain file name`, {
      param: "modelFileName",
    });
  }
  if (options.dtype !== undefined) parseDtype(options.dtype);
  const byName = new Map<string, HubSibling>(listing.siblings.map((s) => [s.rfilename, s]));
  const missingRequired = REQUIRED_MODEL_FILES.filter((f) => !byName.has(f));
  let choice;
  try {
    choice = chooseOnnxFile(byName.keys(), options.device ?? "cpu", {
      requested: options.dtype,
      allowFallback: options.allowFallback,
      model: `model "${repo}"`,
      baseName: modelFileName,
    });
  } catch (err) {
    if (!(err instanceof ValidationError)) throw err;
    const has = onnxFilesIn(byName.keys()).length > 0;
    const hint = has
      ? err.message.replace(`model "${repo}" `, "")
      : `has no ONNX weights in onnx/ (looked for ${
        (modelFileName !== undefined ? [modelFileName] : ONNX_BASE_NAMES)
          .map((b) => `${b}*.onnx`).join(" and ")
      }): use a repository converted for transformers.js (e.g. from the Xenova or ` +
        `onnx-community organisations)`;
    const lacks = missingRequired.length > 0
      ? `lacks ${
        missingRequired.map((f) => `"${f}"`).join(", ")
      }, which transformers.js needs, and `
      : "";
    throw new NotFoundError(`model "${repo}" ${lacks}${hint}`, {
      code: "hub_not_found",
      param: err.param ?? undefined,
    });
  }
  if (missingRequired.length > 0) {
    throw new NotFoundError(
      `model "${repo}" lacks ${missingRequired.map((f) => `"${f}"`).join(", ")}, which ` +
        `transformers.js needs for dtype ${choice.dtype}`,
      { code: "hub_not_found" },
    );
  }
  const onnx = choice.path;
  const wanted = new Set<string>([
    ...REQUIRED_MODEL_FILES,
    ...OPTIONAL_MODEL_FILES,
    ...(options.extraFiles ?? []).map(checkRelativePath),
    onnx,
  ]);
  for (const s of listing.siblings) {
    if (isExternalDataOf(onnx, s.rfilename)) wanted.add(s.rfilename);
  }
  for (const path of sentenceTransformersModuleFiles(listing)) wanted.add(path);
  const files: SelectedFile[] = [];
  for (const path of wanted) {
    const s = byName.get(path);
    if (s === undefined) continue;
    files.push({ path, size: s.size ?? null, sha256: s.lfs?.sha256 ?? null });
  }
  return {
    files,
    dtype: choice.dtype,
    modelFileName: choice.baseName,
    onnxPath: onnx,
    ...(choice.fallback !== undefined ? { fallback: choice.fallback } : {}),
  };
}

/**
 * True when `path` is an external-data file of the ONNX file `onnx`: `x.onnx_data` and its
 * chunks `x.onnx_data_1`, `x.onnx_data_2`, …, or `x.onnx.data`.
 */
export function isExternalDataOf(onnx: string, path: string): boolean {
  if (!path.startsWith(onnx)) return false;
  return /^(?:_data(?:_\d+)?|\.data)$/.test(path.slice(onnx.length));
}

/** The dtypes a listing has ONNX files for (under `modelFileName`, default any base name). */
export function availableDtypes(listing: HubListing, modelFileName?: string): Dtype[] {
  const files = onnxFilesIn(listing.siblings.map((s) => s.rfilename))
    .filter((f) => modelFileName === undefined || f.baseName === modelFileName);
  return DTYPES.filter((d) => files.some((f) => f.dtype === d));
}

/**
 * The files of sentence-transformers module folders (`1_Pooling/config.json`, `2_Dense/config.json`,
 * `2_Dense/model.safetensors`, …) in a listing: the embedding engine applies Dense modules itself
 * when the ONNX export does not include them.
 */
export function sentenceTransformersModuleFiles(listing: HubListing): string[] {
  const moduleFile = /^\d+_[A-Za-z]\w*\/(?:config\.json|model\.safetensors)$/;
  return listing.siblings.map((s) => s.rfilename).filter((name) => moduleFile.test(name));
}

/** Refuses paths that could leave the snapshot folder. */
function checkRelativePath(path: string): string {
  const bad = path === "" || path.startsWith("/") || path.includes("\\") ||
    path.split("/").some((s) => s === "" || s === "." || s === "..");
  if (bad) {
    throw new ValidationError(`"${path}" is not a relative file path inside a model repository`, {
      param: "extraFiles",
    });
  }
  return path;
}

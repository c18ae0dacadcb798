/**
 * Which files of a hub repository transformers.js needs for one dtype, so a download fetches
 * those and nothing else (repos often hold a dozen ONNX variants of several hundred MB each).
 *
 * @module
 */

import { NotFoundError, ValidationError } from "../../core/errors.ts";
import type { HubListing, HubSibling } from "./hub_client.ts";

/** Weight precisions transformers.js can load, named as it names them. */
export type ModelDtype = "fp32" | "fp16" | "q8" | "int8" | "uint8" | "q4" | "q4f16" | "bnb4";

/** File-name suffix of each dtype (transformers.js: `onnx/model{suffix}.onnx`). */
export const ONNX_DTYPE_SUFFIX: Readonly<Record<ModelDtype, string>> = Object.freeze({
  fp32: "",
  fp16: "_fp16",
  q8: "_quantized",
  int8: "_int8",
  uint8: "_uint8",
  q4: "_q4",
  q4f16: "_q4f16",
  bnb4: "_bnb4",
});

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
  "modules.json",
  "1_Pooling/config.json",
];

/** Options of {@link selectModelFiles}. */
export interface SelectModelFilesOptions {
  /** Weight precision; default `fp32`. */
  dtype?: ModelDtype;
  /** Base name of the ONNX file in `onnx/`; default `model`. */
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

/** Path of the ONNX file for a dtype, e.g. `onnx/model_quantized.onnx` for `q8`. */
export function onnxFileFor(dtype: ModelDtype, modelFileName = "model"): string {
  const suffix = ONNX_DTYPE_SUFFIX[dtype];
  if (suffix === undefined) {
    throw new ValidationError(
      `dtype "${dtype}" is not known: use one of ${Object.keys(ONNX_DTYPE_SUFFIX).join(", ")}`,
      { param: "dtype" },
    );
  }
  return `onnx/${modelFileName}${suffix}.onnx`;
}

/**
 * Picks the files transformers.js needs from a hub listing: the configs and tokenizer, the ONNX
 * file of the dtype and its external-data files (`.onnx_data`, `.onnx_data_1`, …).
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
  const dtype = options.dtype ?? "fp32";
  const modelFileName = options.modelFileName ?? "model";
  if (!/^[A-Za-z0-9._-]+$/.test(modelFileName)) {
    throw new ValidationError(`model file name "${modelFileName}" must be a plain file name`, {
      param: "modelFileName",
    });
  }
  const onnx = onnxFileFor(dtype, modelFileName);
  const byName = new Map<string, HubSibling>(listing.siblings.map((s) => [s.rfilename, s]));
  const missing = [...REQUIRED_MODEL_FILES, onnx].filter((f) => !byName.has(f));
  if (missing.length > 0) {
    const has = availableDtypes(listing, modelFileName);
    const hint = missing.includes(onnx)
      ? has.length > 0
        ? `; this repository has ONNX weights for dtype ${has.join(", ")}: choose one with --dtype`
        : `; it has no ONNX weights in onnx/: use a repository converted for transformers.js ` +
          `(e.g. from the Xenova or onnx-community organisations)`
      : "";
    throw new NotFoundError(
      `model "${repo}" lacks ${missing.map((f) => `"${f}"`).join(", ")}, which transformers.js ` +
        `needs for dtype ${dtype}${hint}`,
      { code: "hub_not_found" },
    );
  }
  const dataFile = new RegExp(`^${escape(onnx)}_data(?:_\\d+)?$`);
  const wanted = new Set<string>([
    ...REQUIRED_MODEL_FILES,
    ...OPTIONAL_MODEL_FILES,
    ...(options.extraFiles ?? []).map(checkRelativePath),
    onnx,
  ]);
  for (const s of listing.siblings) if (dataFile.test(s.rfilename)) wanted.add(s.rfilename);
  for (const path of sentenceTransformersModuleFiles(listing)) wanted.add(path);
  const selected: SelectedFile[] = [];
  for (const path of wanted) {
    const s = byName.get(path);
    if (s === undefined) continue;
    selected.push({ path, size: s.size ?? null, sha256: s.lfs?.sha256 ?? null });
  }
  return selected;
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

/** The dtypes a listing has ONNX files for. */
export function availableDtypes(listing: HubListing, modelFileName = "model"): ModelDtype[] {
  const names = new Set(listing.siblings.map((s) => s.rfilename));
  return (Object.keys(ONNX_DTYPE_SUFFIX) as ModelDtype[]).filter((d) =>
    names.has(onnxFileFor(d, modelFileName))
  );
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

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

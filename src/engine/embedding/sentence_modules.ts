/**
 * What a model folder's sentence-transformers files (`modules.json`, `1_Pooling/config.json`,
 * `N_Dense/`) say about turning token vectors into one embedding: the pooling, the Dense layers
 * after it, whether to normalize, and how the model shortens vectors (Matryoshka).
 *
 * @module
 */

import { join } from "node:path";
import type { PoolingMode } from "./pooling.ts";
import { type DenseConfig, type DenseLayer, parseDenseLayer } from "./dense.ts";

/** How a model pools, transforms and normalizes, from its sentence-transformers files. */
export interface PoolingConfig {
  mode: PoolingMode;
  normalize: boolean;
  /** False when the folder has no modules.json / pooling config and mean pooling is assumed. */
  known: boolean;
  /** Folders of the Dense modules after pooling, in order (e.g. `["2_Dense"]`). */
  densePaths: string[];
}

/** What {@link readPoolingConfig} needs of a loaded model. */
export interface ModelFiles {
  readJson(name: string): Promise<Record<string, unknown> | null>;
}

interface ModuleEntry {
  type?: string;
  path?: string;
}

/**
 * Reads pooling, Dense modules and normalization from `modules.json` and the pooling module's
 * config. Without modules.json: mean pooling + normalize, `known: false`.
 */
export async function readPoolingConfig(model: ModelFiles): Promise<PoolingConfig> {
  const modules = await model.readJson("modules.json") as unknown as ModuleEntry[] | null;
  if (!Array.isArray(modules)) {
    return { mode: "mean", normalize: true, known: false, densePaths: [] };
  }
  const poolingModule = modules.find((m) => m.type?.endsWith(".Pooling"));
  const pooling = poolingModule
    ? await model.readJson(`${poolingModule.path || "1_Pooling"}/config.json`)
    : null;
  let mode: PoolingMode = "mean";
  if (pooling) {
    if (pooling.pooling_mode_cls_token) mode = "cls";
    else if (pooling.pooling_mode_lasttoken) mode = "last";
    else if (!pooling.pooling_mode_mean_tokens) {
      const asked = Object.entries(pooling).filter(([k, v]) => k.startsWith("pooling_mode_") && v)
        .map(([k]) => k);
      throw new Error(
        `pooling ${asked.join(", ") || "(none)"} in ${poolingModule!.path}/config.json is not ` +
          `supported (mean, cls and lasttoken are)`,
      );
    }
  }
  return {
    mode,
    normalize: modules.some((m) => m.type?.endsWith(".Normalize")),
    known: pooling !== null,
    densePaths: modules.filter((m) => m.type?.endsWith(".Dense")).map((m) => m.path ?? ""),
  };
}

/** Loads the Dense modules of a model folder (their safetensors weights). */
export async function loadDenseLayers(
  folder: string,
  model: ModelFiles,
  paths: string[],
): Promise<DenseLayer[]> {
  const layers: DenseLayer[] = [];
  for (const path of paths) {
    const config = await model.readJson(`${path}/config.json`) as DenseConfig | null;
    if (!config) throw new Error(`modules.json lists ${path}, but ${path}/config.json is missing`);
    let bytes: Uint8Array;
    try {
      bytes = await Deno.readFile(join(folder, path, "model.safetensors"));
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound)) throw err;
      throw new Error(
        `modules.json lists the Dense module ${path}, but ${path}/model.safetensors is missing ` +
          `(a pytorch_model.bin cannot be read); convert it to safetensors`,
      );
    }
    layers.push(parseDenseLayer(path, config, bytes));
  }
  for (let i = 1; i < layers.length; i++) {
    if (layers[i].inFeatures !== layers[i - 1].outFeatures) {
      throw new Error(
        `${layers[i].path} takes ${layers[i].inFeatures} values but ${layers[i - 1].path} ` +
          `makes ${layers[i - 1].outFeatures}`,
      );
    }
  }
  return layers;
}

/** The vector size a config.json names: `hidden_size`, `n_embd` (nomic_bert) or `d_model`. */
export function hiddenSizeOf(config: Record<string, unknown>): number | undefined {
  const v = config.hidden_size ?? config.n_embd ?? config.d_model;
  return typeof v === "number" && v > 0 ? v : undefined;
}

/** How a model shortens vectors to `dimensions` (its documented Matryoshka recipe). */
export type MatryoshkaRecipe = "truncate" | "layer_norm";

/** nomic_bert: layer_norm over the full vector first; every other model: truncate. */
export function matryoshkaRecipeOf(config: Record<string, unknown>): MatryoshkaRecipe {
  return config.model_type === "nomic_bert" ? "layer_norm" : "truncate";
}

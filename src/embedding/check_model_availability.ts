/**
 * `checkModelAvailability(method, model)`: can this embedder be used here, and if not, what is
 * missing (spec `check_model_availability`). Never contacts a remote service.
 *
 * @module
 */

import { join } from "node:path";
import { parseBooleanWord } from "../config/env_vars.ts";
import { getOutputDir } from "../config/output_paths.ts";
import { ConfigurationError, SvcException } from "../core/errors.ts";
import { demoModelFolder, isDemoModelId } from "../engine/generated_models/demo_models.ts";
import { SnapshotCache } from "../engine/hub/snapshot.ts";
import { PROVIDERS, resolveEmbeddingMethod } from "./_registry.ts";
import { resolveSetting } from "./_settings.ts";
import { HF_DEFAULT_CACHE_SUBDIR } from "./providers/hf.ts";
import type { EmbeddingMethod, EmbeddingModelOptions } from "./types.ts";

/**
 * - `available`: usable now (local method, key present, or generated on first use);
 * - `cached`: a local model already on disk;
 * - `needs_key`: a key (or region) is missing — `reason` names the variable;
 * - `needs_download`: a hub model not in the cache yet (it downloads on first use);
 * - `unavailable`: cannot be used (unknown method, offline and not cached, bad name).
 */
export type AvailabilityStatus =
  | "available"
  | "cached"
  | "needs_key"
  | "needs_download"
  | "unavailable";

/** Result of {@link checkModelAvailability}. */
export interface ModelAvailability {
  /** The method as resolved (or as given when unknown). */
  method: string;
  /** The model checked (the method's default when none was named). */
  model: string;
  /** The verdict. */
  status: AvailabilityStatus;
  /** One sentence: why, and what to do when it is not usable. */
  reason: string;
}

/** Options of {@link checkModelAvailability}: the same settings the embedder would use. */
export type AvailabilityOptions = Pick<
  EmbeddingModelOptions,
  | "env"
  | "apiKey"
  | "baseUrl"
  | "accessKeyId"
  | "secretAccessKey"
  | "region"
  | "cacheDir"
  | "offline"
  | "revision"
>;

/**
 * Checks whether `model` of `method` can be used on this machine without contacting any service:
 * keys are looked up, the hub cache is inspected, remote services are NOT probed (`available`
 * for them means "configured").
 *
 * @example
 * ```ts
 * import { checkModelAvailability } from "@svc/cli";
 * const result = await checkModelAvailability("jina", "jina-embeddings-v3", { env: {} });
 * console.log(result.status, result.reason); // "needs_key" "... set JINA_API_KEY ..."
 * ```
 */
export async function checkModelAvailability(
  method: string,
  model?: string,
  options: AvailabilityOptions = {},
): Promise<ModelAvailability> {
  let resolved: EmbeddingMethod;
  try {
    resolved = resolveEmbeddingMethod(method);
  } catch (err) {
    return { method, model: model ?? "", status: "unavailable", reason: (err as Error).message };
  }
  const info = PROVIDERS[resolved].info;
  const name = model ?? info.defaultModel;
  const result = (status: AvailabilityStatus, reason: string): ModelAvailability => ({
    method: resolved,
    model: name,
    status,
    reason,
  });
  if (resolved === "hf") return result(...await checkHf(name, options));
  if (info.defaultBaseUrl === null) {
    return result("available", "computed in-process; no model or key needed");
  }
  try {
    // Creating a remote embedder resolves keys and URLs but sends nothing.
    const embedder = PROVIDERS[resolved].create({ ...options, model: name });
    await embedder.dispose();
  } catch (err) {
    if (err instanceof ConfigurationError && err.code !== "permission_denied") {
      return result("needs_key", err.message);
    }
    if (err instanceof SvcException) return result("unavailable", err.message);
    throw err;
  }
  const known = info.models.some((m) => m.name === name);
  const note = known ? "" : ` (not in the known model list; the service decides whether it exists)`;
  return resolved === "ollama"
    ? result(
      "available",
      `served by a local Ollama (not probed); run \`ollama pull ${name}\` if missing${note}`,
    )
    : result("available", `credentials found; the service is not contacted by this check${note}`);
}

async function checkHf(
  model: string,
  options: AvailabilityOptions,
): Promise<[AvailabilityStatus, string]> {
  const env = options.env;
  const cacheDir = options.cacheDir ?? getOutputDir(HF_DEFAULT_CACHE_SUBDIR, { env });
  if (isDemoModelId(model)) {
    return await exists(join(demoModelFolder(model, cacheDir), "config.json"))
      ? ["cached", `generated demo model in ${cacheDir} (RANDOM weights)`]
      : ["available", "demo model, generated on first use (RANDOM weights)"];
  }
  if (await exists(join(model, "config.json"))) return ["available", `local model folder ${model}`];
  let cache: SnapshotCache;
  try {
    cache = new SnapshotCache(cacheDir, model);
  } catch (err) {
    return ["unavailable", (err as Error).message];
  }
  const commit = await cache.readRef(options.revision ?? "main");
  if (commit !== null && await exists(join(cache.snapshotDir(commit), "config.json"))) {
    return ["cached", `in the model cache at ${cache.snapshotDir(commit)}`];
  }
  const offline = options.offline ??
    parseBooleanWord(resolveSetting(undefined, "SVC_OFFLINE", env) ?? "") ?? false;
  if (offline) {
    return [
      "unavailable",
      `not in the model cache ${cacheDir} and offline mode is on: run ` +
      `\`svc llm model download ${model}\` with network access, or unset SVC_OFFLINE`,
    ];
  }
  return ["needs_download", `not in the model cache ${cacheDir}; downloaded on first use`];
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch (err) {
    if (err instanceof Deno.errors.NotFound || err instanceof Deno.errors.NotADirectory) {
      return false;
    }
    throw err;
  }
}

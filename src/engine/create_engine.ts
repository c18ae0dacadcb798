/**
 * Builds an engine from a model reference: a local folder, a demo model id (`demo/chat`, …) or a
 * hub id (`org/name`, downloaded into the cache), on the requested device.
 *
 * @module
 */

import {
  CancelledError,
  errorMessage,
  NotFoundError,
  SvcException,
  ValidationError,
} from "../core/errors.ts";
import { unknownDemoModel } from "./demo_model_check.ts";
import { getLogger } from "../core/logging.ts";
import type { Device, EngineOfKind, InferenceEngine, ModelKind } from "../core/inference_types.ts";
import { loadModel } from "./load_model.ts";
import { type Dtype, DTYPE_FILE_SUFFIX, type DtypeDevice } from "./dtype.ts";
import { resolveDevice } from "./runtime.ts";
import { chooseOnnxFileInFolder } from "./onnx_file.ts";
import { ChatEngine } from "./chat/chat_engine.ts";
import type { SchedulerOptions } from "./chat/decode_scheduler.ts";
import { EmbeddingEngine } from "./embedding/embedding_engine.ts";
import type { BatcherOptions } from "./embedding/batcher.ts";
import type { AdmissionLimits } from "./admission_limits.ts";
import {
  DEMO_MODEL_IDS,
  DEMO_MODEL_SPECS,
  isDemoModelId,
  materializeDemoModel,
} from "./generated_models/demo_models.ts";
import { RerankEngine } from "./rerank/rerank_engine.ts";
import { downloadModel } from "./hub/download.ts";
import type { HubProgressCallback } from "./hub/progress.ts";

/** Where models come from and go to. */
export interface ModelSourceOptions {
  /** Folder for downloaded and generated models. */
  cacheDir: string;
  /** Never download; use the cache or fail. */
  offline?: boolean;
  /** Hub base URL (HUB_ENDPOINT, or the mirror). */
  hubEndpoint?: string;
  /** HUB_TOKEN, for private models. */
  hubToken?: string;
  /** Hub revision (default `main`). */
  revision?: string;
  /** Called as files download. */
  onProgress?: HubProgressCallback;
  /** Cancels the download, and loading the model (a `CancelledError`). */
  signal?: AbortSignal;
}

/** A model found on disk, and the weights file to load. */
export interface ResolvedModel {
  /** The model folder in the transformers.js layout. */
  folder: string;
  /** Where it came from. */
  source: "local" | "demo" | "hub";
  /** True for the generated demo models. */
  randomWeights: boolean;
  /** The dtype to load: the named one, else the device's best the model has files for. */
  dtype: Dtype;
  /** Base name of the ONNX file in `onnx/` (`model` or `decoder_model_merged`). */
  modelFileName: string;
  /** Set when the named dtype was missing and `allowDtypeFallback` chose another; says which. */
  fallback?: string;
}

/** How {@link resolveModelFolder} picks the weights. */
export interface WeightsOptions {
  /** Weights to load. Named, the model must have them (unless `allowDtypeFallback`). */
  dtype?: Dtype;
  /** The device the weights are for, which decides the dtype when none is named; default cpu. */
  device?: DtypeDevice;
  /** Load the device's best dtype when the named one is missing (default models only). */
  allowDtypeFallback?: boolean;
}

/**
 * Finds or fetches the folder of `model` and picks its ONNX file: for a folder from the files in
 * its `onnx/`, for a hub id from the repository's listing (only that file is downloaded).
 */
export async function resolveModelFolder(
  model: string,
  options: ModelSourceOptions & WeightsOptions,
): Promise<ResolvedModel> {
  if (isDemoModelId(model)) {
    const folder = await materializeDemoModel(model, options.cacheDir);
    return {
      folder,
      source: "demo",
      randomWeights: true,
      ...await chooseOnnxFileInFolder(folder, model, options),
    };
  }
  if (await isDirectory(model)) {
    return {
      folder: model,
      source: "local",
      randomWeights: false,
      ...await chooseOnnxFileInFolder(model, model, options),
    };
  }
  unknownDemoModel(model);
  if (!isHubIdShaped(model)) {
    // It can only be a path (./x, ../x, /x, ~/x, a/b/c, …), and nothing is there.
    throw new NotFoundError(
      `model folder '${model}' was not found; a model is a folder, a hub id like 'org/name', ` +
        `or a demo model (${DEMO_MODEL_IDS.join(", ")})`,
      { code: "model_not_found", param: "model" },
    );
  }
  const downloaded = await downloadModel(model, {
    cacheDir: options.cacheDir,
    dtype: options.dtype,
    device: options.device,
    allowFallback: options.allowDtypeFallback,
    revision: options.revision,
    endpoint: options.hubEndpoint,
    token: options.hubToken,
    offline: options.offline,
    onProgress: options.onProgress,
    signal: options.signal,
  });
  if (downloaded.warning) getLogger("engine").warn(downloaded.warning, { model });
  return {
    folder: downloaded.path,
    source: "hub",
    randomWeights: false,
    dtype: downloaded.dtype,
    modelFileName: downloaded.modelFileName,
    ...(downloaded.fallback !== undefined ? { fallback: downloaded.fallback } : {}),
  };
}

/** What to serve and how. */
export interface EngineOptions extends ModelSourceOptions {
  /** Name clients use; defaults to the model reference. */
  id?: string;
  /** Chat, embedding or rerank; read from the model's config when left out. */
  kind?: ModelKind;
  /** Device (default `auto`). */
  device?: Device;
  /**
   * Weights to load (one of `DTYPES`). Named, the model must have them; left out, the
   * device's best the model has (see `dtypePreference`: q8 first on cpu/wasm, q4 before it on cpu when a
   * local folder's q4 file computes in int8, q4f16 on webgpu).
   */
  dtype?: Dtype;
  /** Load the device's best dtype when the named one is missing, with a warning. */
  allowDtypeFallback?: boolean;
  /** Accept a software WebGPU adapter for `device: webgpu`. */
  allowFallbackAdapter?: boolean;
  /** Chat batching limits. */
  scheduler?: Partial<SchedulerOptions>;
  /** Embedding batching limits. */
  batching?: Partial<BatcherOptions>;
  /** Per-request limits (default `DEFAULT_ADMISSION_LIMITS`). */
  limits?: Partial<AdmissionLimits>;
}

/**
 * Loads `model` and returns a ready engine of `options.kind`, typed as that kind's interface
 * (`EngineOfKind<"embedding">` is `EmbedEngine`, …); without a kind, of the kind its config says
 * (an `InferenceEngine`: narrow it with `engineOfKind`).
 *
 * @example
 * ```ts
 * import { createEngine } from "@svc/cli/engine";
 * const engine = await createEngine("demo/embed", { kind: "embedding", cacheDir: "/tmp/svc" });
 * const { vectors } = await engine.embed(["one text"]);
 * await engine.dispose();
 * ```
 */
export async function createEngine<K extends ModelKind = ModelKind>(
  model: string,
  options: EngineOptions & { kind?: K },
): Promise<EngineOfKind<K>> {
  const log = getLogger("engine");
  const choice = await resolveDevice(options.device ?? "auto", {
    allowFallbackAdapter: options.allowFallbackAdapter,
  });
  log.info(`device ${choice.device}: ${choice.reason}`, { model });
  const resolved = await resolveModelFolder(model, { ...options, device: choice.device });
  if (resolved.randomWeights) {
    log.warn(
      `model '${model}' is a generated demo model with RANDOM weights: its text is meaningless`,
    );
  }
  if (resolved.fallback) log.warn(resolved.fallback, { model });
  const { dtype, modelFileName } = resolved;
  log.info(
    `loading ${dtype} weights (onnx/${modelFileName}${DTYPE_FILE_SUFFIX[dtype]}.onnx) on ` +
      `${choice.device}${options.dtype === undefined ? `: the ${choice.device} default` : ""}`,
    { model, dtype },
  );
  const kind = options.kind ?? await detectKind(resolved.folder);
  await checkRerankKind(model, resolved.folder, kind);
  throwIfCancelled(options.signal, model);
  const loaded = await loadModel(resolved.folder, kind, {
    device: choice.device,
    dtype,
    modelFileName,
  });
  // Loading a session cannot be stopped midway: what it loaded is released once it is done.
  if (options.signal?.aborted) {
    await loaded.session.release();
    throwIfCancelled(options.signal, model);
  }
  const common = {
    id: options.id ?? model,
    ownedBy: resolved.source === "hub" ? model.split("/")[0] : "svc",
    randomWeights: resolved.randomWeights,
    limits: options.limits,
  };
  const engine: InferenceEngine = kind === "chat"
    ? await ChatEngine.create(loaded, { ...common, scheduler: options.scheduler })
    : kind === "rerank"
    ? await RerankEngine.create(loaded, { ...common, batching: options.batching })
    : await EmbeddingEngine.create(loaded, { ...common, batching: options.batching });
  if (options.signal?.aborted) {
    await engine.dispose();
    throwIfCancelled(options.signal, model);
  }
  engine.info.dtype ??= dtype; // shown in /v1/models
  // `kind` is `options.kind` (K) when given; else K is every kind and any engine fits.
  return engine as EngineOfKind<K>;
}

function throwIfCancelled(signal: AbortSignal | undefined, model: string): void {
  if (signal?.aborted) throw new CancelledError(`loading model '${model}' was cancelled`);
}

/** Served when no model is named: small real models with ONNX weights on the hub. */
export const DEFAULT_MODELS: Readonly<Record<ModelKind, string>> = {
  chat: "HuggingFaceTB/SmolLM2-135M-Instruct",
  embedding: "Xenova/all-MiniLM-L6-v2",
  rerank: "Xenova/ms-marco-MiniLM-L-6-v2",
};

/** The demo model that stands in for a default model that cannot be loaded. */
export const DEMO_FALLBACKS: Readonly<Record<ModelKind, string>> = {
  chat: "demo/chat",
  embedding: "demo/embed",
  rerank: "demo/rerank",
};

/**
 * Loads `model` as a `kind` engine (`kind` wins over `options.kind`), or when none is named the
 * default model of `kind`. Only a default model falls back: to another dtype when it lacks the
 * named one (with a warning), and when it cannot be downloaded or loaded to the demo model of that
 * kind, with a loud warning saying why and how to choose a model. A named model never falls back,
 * nor does a dtype named for it.
 */
export async function createEngineOrDemo<K extends ModelKind>(
  model: string | undefined,
  kind: K,
  options: EngineOptions,
): Promise<EngineOfKind<K>> {
  if (model !== undefined) return await createEngine(model, { ...options, kind });
  const fallback = DEFAULT_MODELS[kind];
  try {
    // The default model may load another dtype than the one named, saying so.
    return await createEngine(fallback, { allowDtypeFallback: true, ...options, kind });
  } catch (err) {
    // What the demo model cannot fix either (a device this machine lacks, a missing --allow-ffi)
    // is said as it is, not as a fallback that then fails the same way.
    if (
      err instanceof CancelledError ||
      err instanceof SvcException && (err.param === "device" || err.code === "missing_permission")
    ) {
      throw err;
    }
    const demo = DEMO_FALLBACKS[kind];
    const why = errorMessage(err);
    getLogger("engine").warn(
      `!!! could not load the default ${kind} model ${fallback}: ${why}. Serving ${demo} instead: ` +
        `a generated model with RANDOM weights whose output is meaningless. Name a real model ` +
        `(a hub id or a folder; HUB_ENDPOINT / HUB_TOKEN if needed) to serve it.`,
    );
    return await createEngine(demo, {
      allowDtypeFallback: true,
      ...options,
      kind,
      id: options.id ?? demo,
    });
  }
}

/**
 * Refuses a reranker asked to serve as another kind, and another model asked to rerank: a
 * cross-encoder loads as an encoder too and would fail later on its output shape. A folder whose
 * config cannot be read is left to the loader's error.
 */
async function checkRerankKind(model: string, folder: string, kind: ModelKind): Promise<void> {
  const detected = await detectKind(folder).catch(() => kind);
  if ((kind === "rerank") === (detected === "rerank")) return;
  throw new ValidationError(
    detected === "rerank"
      ? `model '${model}' is a reranker (a sequence-classification model), not a ${kind} model; ` +
        `serve it with --kind rerank (svc llm run) or --rerank-model (svc llm serve)`
      : `model '${model}' is not a reranker (its config.json names no ` +
        `*ForSequenceClassification architecture); serve it as ` +
        `${detected === "embedding" ? "an embedding" : "a chat"} model`,
    { param: "model" },
  );
}

/** Reads `config.json` to tell a causal LM from an encoder and a cross-encoder (reranker). */
export async function detectKind(folder: string): Promise<ModelKind> {
  const config = JSON.parse(await Deno.readTextFile(`${folder}/config.json`));
  const architectures: string[] = config.architectures ?? [];
  if (architectures.some((a) => /ForCausalLM|LMHeadModel|ForConditionalGeneration/.test(a))) {
    return "chat";
  }
  if (architectures.some((a) => a.endsWith("ForSequenceClassification"))) return "rerank";
  if (architectures.length > 0) return "embedding";
  const decoders = [
    "llama",
    "mistral",
    "qwen2",
    "qwen3",
    "phi",
    "phi3",
    "gemma",
    "gemma2",
    "gpt2",
    "smollm3",
  ];
  return decoders.includes(config.model_type) ? "chat" : "embedding";
}

/**
 * The kind of a model reference without downloading it: demo ids by name, folders by their
 * config.json, hub ids by the usual words in reranker and embedding model names (else chat;
 * `--kind` decides when the guess is wrong).
 */
export async function detectKindOf(model: string): Promise<ModelKind> {
  if (isDemoModelId(model)) return DEMO_MODEL_SPECS[model].kind;
  if (await isDirectory(model)) return await detectKind(model);
  unknownDemoModel(model);
  if (/rerank|cross-encoder|ms-marco/i.test(model)) return "rerank";
  return /embed|minilm|mpnet|bge|e5-|gte|sentence|nomic|jina/i.test(model) ? "embedding" : "chat";
}

// `org/name` as the hub spells ids: each part starts with a letter or digit and holds no "..".
function isHubIdShaped(model: string): boolean {
  return /^[A-Za-z0-9][\w.-]*\/[A-Za-z0-9][\w.-]*$/.test(model) && !model.includes("..");
}

async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await Deno.stat(path)).isDirectory;
  } catch {
    return false;
  }
}

/**
 * Builds an engine from a model reference: a local folder, a demo model id (`demo/chat`, …) or a
 * hub id (`org/name`, downloaded into the cache), on the requested device.
 *
 * @module
 */

import { ValidationError } from "../core/errors.ts";
import { getLogger } from "../core/logging.ts";
import type { Device, InferenceEngine, ModelKind } from "./types.ts";
import { type Dtype, loadModel } from "./load_model.ts";
import { resolveDevice } from "./runtime.ts";
import { ChatEngine } from "./chat/chat_engine.ts";
import type { SchedulerOptions } from "./chat/decode_scheduler.ts";
import { EmbeddingEngine } from "./embedding/embedding_engine.ts";
import type { BatcherOptions } from "./embedding/batcher.ts";
import { isDemoModelId, materializeDemoModel } from "./generated_models/demo_models.ts";
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
  revision?: string;
  onProgress?: HubProgressCallback;
  signal?: AbortSignal;
}

/** A model found on disk. */
export interface ResolvedModel {
  folder: string;
  source: "local" | "demo" | "hub";
  /** True for the generated demo models. */
  randomWeights: boolean;
}

/** Finds or fetches the folder of `model`. */
export async function resolveModelFolder(
  model: string,
  options: ModelSourceOptions & { dtype?: Dtype },
): Promise<ResolvedModel> {
  if (isDemoModelId(model)) {
    return {
      folder: await materializeDemoModel(model, options.cacheDir),
      source: "demo",
      randomWeights: true,
    };
  }
  if (await isDirectory(model)) return { folder: model, source: "local", randomWeights: false };
  if (!/^[\w.-]+\/[\w.-]+$/.test(model)) {
    throw new ValidationError(
      `model '${model}' is neither a folder, a demo model (demo/chat, demo/embed, ` +
        `demo/chat-bench, demo/embed-bench) nor a hub id like 'org/name'`,
      { param: "model" },
    );
  }
  const downloaded = await downloadModel(model, {
    cacheDir: options.cacheDir,
    dtype: options.dtype ?? "q8",
    revision: options.revision,
    endpoint: options.hubEndpoint,
    token: options.hubToken,
    offline: options.offline,
    onProgress: options.onProgress,
    signal: options.signal,
  });
  if (downloaded.warning) getLogger("engine").warn(downloaded.warning, { model });
  return { folder: downloaded.path, source: "hub", randomWeights: false };
}

/** What to serve and how. */
export interface EngineOptions extends ModelSourceOptions {
  /** Name clients use; defaults to the model reference. */
  id?: string;
  /** Chat or embedding; read from the model's config when left out. */
  kind?: ModelKind;
  device?: Device;
  /** Weights to load; default q8 on cpu/wasm, fp32 on webgpu. */
  dtype?: Dtype;
  /** Accept a software WebGPU adapter for `device: webgpu`. */
  allowFallbackAdapter?: boolean;
  /** Chat batching limits. */
  scheduler?: Partial<SchedulerOptions>;
  /** Embedding batching limits. */
  batching?: Partial<BatcherOptions>;
}

/** Loads `model` and returns a ready engine. */
export async function createEngine(
  model: string,
  options: EngineOptions,
): Promise<InferenceEngine> {
  const log = getLogger("engine");
  const choice = await resolveDevice(options.device ?? "auto", {
    allowFallbackAdapter: options.allowFallbackAdapter,
  });
  log.info(`device ${choice.device}: ${choice.reason}`, { model });
  const dtype = options.dtype ?? (choice.device === "webgpu" ? "fp32" : "q8");
  const resolved = await resolveModelFolder(model, { ...options, dtype });
  if (resolved.randomWeights) {
    log.warn(
      `model '${model}' is a generated demo model with RANDOM weights: its text is meaningless`,
    );
  }
  const kind = options.kind ?? await detectKind(resolved.folder);
  const loaded = await loadModel(resolved.folder, kind, { device: choice.device, dtype });
  const common = {
    id: options.id ?? model,
    ownedBy: resolved.source === "hub" ? model.split("/")[0] : "svc",
    randomWeights: resolved.randomWeights,
  };
  return kind === "chat"
    ? await ChatEngine.create(loaded, { ...common, scheduler: options.scheduler })
    : await EmbeddingEngine.create(loaded, { ...common, batching: options.batching });
}

/** Served when no model is named: small real models with ONNX weights on the hub. */
export const DEFAULT_MODELS: Readonly<Record<ModelKind, string>> = {
  chat: "HuggingFaceTB/SmolLM2-135M-Instruct",
  embedding: "Xenova/all-MiniLM-L6-v2",
};

/** The demo model that stands in for a default model that cannot be loaded. */
export const DEMO_FALLBACKS: Readonly<Record<ModelKind, string>> = {
  chat: "demo/chat",
  embedding: "demo/embed",
};

/**
 * Loads `model`, or when none is named the default model of `kind`. Only a default model falls
 * back: when it cannot be downloaded or loaded, the demo model of that kind is served instead,
 * with a loud warning saying why and how to choose a model. A named model never falls back.
 */
export async function createEngineOrDemo(
  model: string | undefined,
  kind: ModelKind,
  options: EngineOptions,
): Promise<InferenceEngine> {
  if (model !== undefined) return await createEngine(model, { kind, ...options });
  const fallback = DEFAULT_MODELS[kind];
  try {
    return await createEngine(fallback, { kind, ...options });
  } catch (err) {
    const demo = DEMO_FALLBACKS[kind];
    const why = err instanceof Error ? err.message : String(err);
    getLogger("engine").warn(
      `!!! could not load the default ${kind} model ${fallback}: ${why}. Serving ${demo} instead: ` +
        `a generated model with RANDOM weights whose output is meaningless. Choose a real model ` +
        `with --model <hub id or folder> (and HUB_ENDPOINT / HUB_TOKEN if needed).`,
    );
    return await createEngine(demo, { kind, ...options, id: options.id ?? demo });
  }
}

/** Reads `config.json` to tell a causal LM from an encoder. */
export async function detectKind(folder: string): Promise<ModelKind> {
  const config = JSON.parse(await Deno.readTextFile(`${folder}/config.json`));
  const architectures: string[] = config.architectures ?? [];
  if (architectures.some((a) => /ForCausalLM|LMHeadModel|ForConditionalGeneration/.test(a))) {
    return "chat";
  }
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
 * config.json, hub ids by the usual words in embedding model names (else chat; `--kind` decides
 * when the guess is wrong).
 */
export async function detectKindOf(model: string): Promise<ModelKind> {
  if (isDemoModelId(model)) return model.startsWith("demo/embed") ? "embedding" : "chat";
  if (await isDirectory(model)) return await detectKind(model);
  return /embed|minilm|mpnet|bge|e5-|gte|sentence|nomic|jina/i.test(model) ? "embedding" : "chat";
}

async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await Deno.stat(path)).isDirectory;
  } catch {
    return false;
  }
}

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
import { isDemoModelId, materializeDemoModel } from "./models/demo_models.ts";
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

async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await Deno.stat(path)).isDirectory;
  } catch {
    return false;
  }
}

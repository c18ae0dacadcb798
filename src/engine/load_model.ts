/**
 * Loads a model folder (transformers.js layout) on a chosen device: tokenizer and config in the
 * calling thread, the ONNX session in a worker (or in this thread when asked), ready for the chat
 * or embedding engine.
 *
 * @module
 */

import { ConfigurationError, errorMessage, ServiceError } from "../core/errors.ts";
import { loadRuntime, type ResolvedDevice } from "./runtime.ts";
import { type ModelSession, OnnxSession } from "./onnx_session.ts";
import { DEFAULT_INLINE_MAX_TOKENS, WorkerSession } from "./worker_session.ts";
import { type Dtype, onnxPathFor } from "./dtype.ts";
import { onnxBaseNameIn } from "./onnx_file.ts";
import { PRESENT_PREFIX } from "./families/decoder_family.ts";
import { join } from "node:path";
import type { ModelKind } from "../core/inference_types.ts";

export type { Dtype } from "./dtype.ts";

/** What a session is loaded for. */
export interface SessionSpec {
  folder: string;
  kind: ModelKind;
  device: ResolvedDevice;
  dtype: Dtype;
  /** Base name of the ONNX file: `model` (default) or `decoder_model_merged`. */
  modelFileName?: string;
}

/** The tokenizer methods the engines use (transformers.js' PreTrainedTokenizer). */
export interface Tokenizer {
  encode(text: string, options?: { add_special_tokens?: boolean }): number[];
  decode(ids: number[], options?: { skip_special_tokens?: boolean }): string;
  apply_chat_template(
    messages: unknown[],
    options: { tokenize: false; add_generation_prompt: boolean; tools?: unknown },
  ): string;
  chat_template: unknown;
  model_max_length: number;
  eos_token_id?: number;
  pad_token_id?: number;
  bos_token_id?: number;
  all_special_ids: number[];
  get_vocab(): Map<string, number> | Record<string, number>;
}

/** A loaded model. */
export interface LoadedModel {
  folder: string;
  device: ResolvedDevice;
  dtype: Dtype;
  /** Path of the ONNX file the session was loaded from. */
  modelFile: string;
  tokenizer: Tokenizer;
  session: ModelSession;
  /** The folder's config.json. */
  config: Record<string, unknown>;
  /** Reads an optional JSON file of the folder (e.g. generation_config.json); null if absent. */
  readJson(name: string): Promise<Record<string, unknown> | null>;
}

/** Options of {@link loadModel}. */
export interface LoadModelOptions {
  device: ResolvedDevice;
  dtype: Dtype;
  /** Base name of the ONNX file; found in the folder when left out (`model`, else a merged decoder). */
  modelFileName?: string;
  /**
   * Run the session in a worker. onnxruntime's `run()` blocks the calling thread, so on `cpu` and
   * `wasm` (the default there) the server's thread would stall every other request while a batch
   * runs. A `webgpu` session runs asynchronously and stays in this thread by default: a WebGPU
   * device owned by a worker is still being torn down after `terminate()`, and a process exiting
   * then crashed (SIGSEGV/SIGABRT in EGL, ~1 in 6 exits under CPU load on llvmpipe; none when the
   * exit waited for the teardown).
   */
  inWorker?: boolean;
  /**
   * For an embedding or rerank model on `cpu` in a worker: the largest run, in tokens (rows ×
   * sequence length), made in this thread by a second copy of the session while the worker is
   * idle (worker_session.ts: a short query then pays no thread hand-off, ~1 ms of a ~5 ms run on
   * a shared 2-core VM). Default {@link DEFAULT_INLINE_MAX_TOKENS}; 0 keeps every run in the
   * worker. Models whose weights exceed {@link INLINE_MAX_MODEL_BYTES} are never loaded twice.
   */
  inlineMaxTokens?: number;
}

/** The largest weights (ONNX file and its external data) loaded a second time for small runs. */
export const INLINE_MAX_MODEL_BYTES = 256 * 1024 * 1024;

/** Loads `folder` as a causal LM (`chat`), an encoder (`embedding`) or a cross-encoder (`rerank`). */
export async function loadModel(
  folder: string,
  kind: ModelKind,
  options: LoadModelOptions,
): Promise<LoadedModel> {
  const modelFileName = options.modelFileName ?? await onnxBaseNameIn(folder, options.dtype);
  const spec: SessionSpec = {
    folder,
    kind,
    device: options.device,
    dtype: options.dtype,
    modelFileName,
  };
  const readJson = (name: string) => readOptionalJson(folder, name);
  try {
    const runtime = await loadRuntime(options.device);
    const t = runtime.transformers;
    t.env.allowRemoteModels = false;
    t.env.allowLocalModels = true;
    const modelFile = join(folder, onnxPathFor(options.dtype, modelFileName));
    const inWorker = options.inWorker ?? options.device !== "webgpu";
    const openSession = async () => {
      if (!inWorker) return loadSession(spec);
      const inlineMaxTokens = options.inlineMaxTokens ?? DEFAULT_INLINE_MAX_TOKENS;
      const inline = inlineMaxTokens > 0 && await smallRunsInline(spec, modelFile)
        ? await loadSession(spec)
        : undefined;
      return WorkerSession.open(spec, { inline, inlineMaxTokens });
    };
    const [loaded, config, session] = await Promise.all([
      loadTokenizer(folder, options.device),
      readJson("config.json"),
      openSession(),
    ]);
    return {
      folder,
      device: options.device,
      dtype: options.dtype,
      modelFile,
      tokenizer: loaded,
      session,
      config: config ?? {},
      readJson,
    };
  } catch (err) {
    throw loadError(spec, err);
  }
}

/** The tokenizer of the model in `folder`, with its chat template (tokenizer threads call this). */
export async function loadTokenizer(folder: string, device: ResolvedDevice): Promise<Tokenizer> {
  const t = (await loadRuntime(device)).transformers;
  t.env.allowRemoteModels = false;
  t.env.allowLocalModels = true;
  const tokenizer = await t.AutoTokenizer.from_pretrained(folder, { local_files_only: true });
  // Recent exports keep the template in chat_template.jinja; transformers.js reads only
  // tokenizer_config.json's.
  const loaded = tokenizer as unknown as Tokenizer;
  if (!loaded.chat_template) {
    loaded.chat_template = await Deno.readTextFile(join(folder, "chat_template.jinja"))
      .catch(() => null);
  }
  return loaded;
}

/** Loads only the ONNX session of `spec`, in this thread (the worker calls this). */
export async function loadSession(spec: SessionSpec): Promise<OnnxSession> {
  const runtime = await loadRuntime(spec.device);
  const t = runtime.transformers;
  t.env.allowRemoteModels = false;
  t.env.allowLocalModels = true;
  const onGpu = spec.kind === "chat" && spec.device === "webgpu";
  const options = {
    local_files_only: true,
    device: runtime.deviceOption(spec.device),
    dtype: spec.dtype,
    model_file_name: spec.modelFileName ?? "model",
    session_options: {
      ...runtime.sessionOptions(spec.device, spec.kind),
      // A decoder on WebGPU leaves its outputs on the GPU, so the decode loop can feed each
      // step's cache to the next without a round trip through JavaScript (onnx_session.ts).
      ...(onGpu ? { preferredOutputLocation: "gpu-buffer" } : {}),
    },
  } as const;
  const model = spec.kind === "chat"
    ? await t.AutoModelForCausalLM.from_pretrained(spec.folder, options as never)
    : spec.kind === "rerank"
    ? await t.AutoModelForSequenceClassification.from_pretrained(spec.folder, options as never)
    : await t.AutoModel.from_pretrained(spec.folder, options as never);
  // deno-lint-ignore no-explicit-any
  const sessions = (model as any).sessions as Record<string, unknown>;
  const session = sessions.model ?? sessions.decoder_model_merged;
  if (!session) {
    throw new ServiceError(
      `${spec.folder} has no single ONNX model session (found: ${Object.keys(sessions)})`,
    );
  }
  // Its cache read back stays on the GPU too, for the next run to take it from there.
  // And the prefix cache keeps its blocks there (onnx_session.ts, DeviceCacheCopies).
  if (!onGpu) return new OnnxSession(session, t.Tensor);
  return new OnnxSession(session, t.Tensor, {
    reuseOnGpu: (name) => name.startsWith(PRESENT_PREFIX),
    gpuDevice: runtime.gpuDevice(),
  });
}

/**
 * True when small runs of `spec` get a copy of the session in this thread: embedding and rerank
 * models (chat decodes in the worker's loop) on native `cpu` (a WASM run blocks far longer), with
 * weights up to {@link INLINE_MAX_MODEL_BYTES}.
 */
async function smallRunsInline(spec: SessionSpec, modelFile: string): Promise<boolean> {
  if (spec.kind === "chat" || spec.device !== "cpu") return false;
  let bytes = 0;
  for (const path of [modelFile, `${modelFile}_data`, `${modelFile}.data`]) {
    try {
      bytes += (await Deno.stat(path)).size;
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound)) throw err;
    }
  }
  return bytes > 0 && bytes <= INLINE_MAX_MODEL_BYTES;
}

/** The error for a model that failed to load, with what to try. */
function loadError(spec: SessionSpec, err: unknown): ServiceError | ConfigurationError {
  if (err instanceof ServiceError) return err;
  const { kind, folder, device, dtype } = spec;
  // Without --allow-ffi a native addon (sharp, onnxruntime-node) cannot load; its own message is
  // ten lines of npm advice that does not apply. One line instead, naming the flag.
  if (/Requires ffi access|--allow-ffi/.test(errorMessage(err))) {
    return new ConfigurationError(
      `could not load the ${kind} model: its native modules (onnxruntime-node, sharp) need the ` +
        "FFI permission; run again with --allow-ffi (or -A)",
      { code: "missing_permission", cause: err },
    );
  }
  return new ServiceError(
    `could not load the ${kind} model in ${folder} (${device}, ${dtype}): ` +
      `${err instanceof Error ? err.message : err}. If it is not a ${kind} model, say which ` +
      `kind it is (--kind chat|embedding|rerank); if the weights file is missing, try another --dtype.`,
    { cause: err },
  );
}

async function readOptionalJson(folder: string, name: string) {
  try {
    return JSON.parse(await Deno.readTextFile(`${folder}/${name}`)) as Record<string, unknown>;
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return null;
    throw err;
  }
}

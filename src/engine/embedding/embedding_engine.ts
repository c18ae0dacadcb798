/**
 * The embedding engine: tokenizes inputs, gathers them into dynamic batches, runs the encoder and
 * pools each row into one (normalized) vector.
 *
 * What real ONNX exports differ in, and what the engine does about it (checked against
 * transformers.js on the generated conformance cases of the checkout's
 * fixtures/generated_models/conformance_encoders.ts):
 * - inputs: feeds `input_ids`, `attention_mask` and `token_type_ids` (zeros) when the session takes
 *   them; any other input (jina-v3's `task_id`) is refused at load with a one-line error;
 * - outputs: `sentence_embedding` when present (pooled, with its Dense layers, by the export: not
 *   pooled again), else `last_hidden_state`, else `token_embeddings`, else the first output;
 *   float16 outputs (Float16Array or raw Uint16Array bits) become float32;
 * - sentence-transformers modules: pooling from `1_Pooling/config.json` (mean, cls, lasttoken;
 *   mean with a loud warning when the folder has no pooling config), `N_Dense` modules read from
 *   safetensors and applied after pooling, `Normalize` decides the L2 normalization;
 * - dimensions: the vector size of a probe run at load (config `hidden_size` / `n_embd` /
 *   `d_model`, or the last Dense's `out_features`, disagreeing only with a warning); a shorter
 *   `dimensions` follows the model's Matryoshka recipe (nomic_bert: layer_norm, truncate,
 *   normalize; others: truncate, normalize).
 *
 * @module
 */

import { ContextLengthError, ServiceError, ValidationError } from "../../core/errors.ts";
import { getLogger } from "../../core/logging.ts";
import type {
  EmbedResult,
  EngineEmbedOptions,
  EngineHealth,
  EngineTokenizeResult,
  GenerationStream,
  InferenceEngine,
  ModelInfo,
  TokenizeInput,
} from "../../core/inference_types.ts";
import { TokenizerThread } from "../tokenizer_thread.ts";
import type { LoadedModel } from "../load_model.ts";
import type { PlainTensor } from "../onnx_session.ts";
import { type BatcherOptions, type BatcherStats, EmbeddingBatcher } from "./batcher.ts";
import {
  type AdmissionLimits,
  checkLimit,
  checkTokenIds,
  DEFAULT_ADMISSION_LIMITS,
} from "../admission_limits.ts";
import { layerNormInPlace, normalizeInPlace, poolRow, toFloat32 } from "./pooling.ts";
import { applyDense, type DenseLayer } from "./dense.ts";
import {
  hiddenSizeOf,
  loadDenseLayers,
  type MatryoshkaRecipe,
  matryoshkaRecipeOf,
  type PoolingConfig,
  readPoolingConfig,
} from "./sentence_modules.ts";

export { type PoolingConfig, readPoolingConfig } from "./sentence_modules.ts";

/** Settings of an embedding engine. */
export interface EmbeddingEngineOptions {
  id: string;
  ownedBy?: string;
  randomWeights?: boolean;
  batching?: Partial<BatcherOptions>;
  /** Per-request limits (default {@link DEFAULT_ADMISSION_LIMITS}). */
  limits?: Partial<AdmissionLimits>;
}

/**
 * Defaults: a batch of up to 64 inputs; at most 8192 inputs waiting (an idle batcher always runs
 * at once: batches form while the model is busy, see batcher.ts). The token budget
 * depends on the device, see {@link batchTokensFor}.
 */
export const DEFAULT_EMBEDDING_BATCHING: BatcherOptions = {
  maxBatchTokens: 8192,
  maxBatchSize: 64,
  maxQueue: 8192,
};

/**
 * Padded tokens per batch for a device. On a CPU a batch pays off only while it is small in
 * tokens (measured: short inputs gain up to batch 64, 200-token inputs are fastest at batch 2-4
 * and slower per text beyond; see bench/RESULTS.md), so CPU and WASM batches hold ~640 tokens.
 * A GPU gains from large batches.
 */
export function batchTokensFor(device: string): number {
  return device === "webgpu" ? DEFAULT_EMBEDDING_BATCHING.maxBatchTokens : 640;
}

/** Inputs an encoder may take that we know how to feed. */
export const SUPPORTED_ENCODER_INPUTS: readonly string[] = [
  "input_ids",
  "attention_mask",
  "token_type_ids",
];

/** Outputs we read, best first: already pooled, then token vectors. */
const TOKEN_OUTPUTS = ["last_hidden_state", "token_embeddings"];

/** How the engine turns the session's outputs into vectors. */
interface OutputPlan {
  /** The output read. */
  name: string;
  /** True when the output is `sentence_embedding` (pooled, Dense applied, by the export). */
  pooled: boolean;
  pooling: PoolingConfig;
  dense: DenseLayer[];
  matryoshka: MatryoshkaRecipe;
}

/** Checks the session's inputs and outputs and reads what post-processing the model needs. */
async function planOutputs(model: LoadedModel, id: string): Promise<OutputPlan> {
  const { inputNames, outputNames } = model.session;
  const unsupported = inputNames.filter((n) => !SUPPORTED_ENCODER_INPUTS.includes(n));
  if (unsupported.length > 0 || !inputNames.includes("input_ids")) {
    const what = unsupported.length > 0
      ? `takes the input${unsupported.length > 1 ? "s" : ""} ${unsupported.map((n) => `'${n}'`)}`
      : "takes no 'input_ids'";
    throw new ServiceError(
      `embedding model '${id}' ${what}, which the embedding engine cannot feed ` +
        `(it feeds ${SUPPORTED_ENCODER_INPUTS.join(", ")})`,
    );
  }
  const pooling = await readPoolingConfig(model);
  const pooled = outputNames.includes("sentence_embedding");
  const name = pooled
    ? "sentence_embedding"
    : TOKEN_OUTPUTS.find((n) => outputNames.includes(n)) ?? outputNames[0];
  if (!name) throw new ServiceError(`embedding model '${id}' has no outputs`);
  const log = getLogger("engine");
  if (!pooling.known && !pooled) {
    log.warn(
      `embedding model '${id}' has no sentence-transformers pooling config ` +
        `(modules.json + 1_Pooling/config.json): assuming MEAN pooling and L2 normalization, ` +
        `which is wrong for CLS- or last-token-pooled models. Add modules.json and ` +
        `1_Pooling/config.json from the original model's repository to fix it.`,
      { model: id, folder: model.folder },
    );
  } else if (!pooling.known) {
    log.warn(
      `embedding model '${id}' has no modules.json: using its sentence_embedding output ` +
        `L2-normalized`,
      { model: id },
    );
  }
  const dense = pooled || pooling.densePaths.length === 0
    ? []
    : await loadDenseLayers(model.folder, model, pooling.densePaths);
  return { name, pooled, pooling, dense, matryoshka: matryoshkaRecipeOf(model.config) };
}

/** An {@link InferenceEngine} for encoder models. */
export class EmbeddingEngine implements InferenceEngine {
  /** What it serves. */
  readonly info: ModelInfo;
  #model: LoadedModel;
  /** Tokenizer work, large inputs in a worker. */
  #tokenizer: TokenizerThread;
  #plan: OutputPlan;
  #batcher: EmbeddingBatcher;
  #vocabSize: number;
  #state: EngineHealth = { state: "ready" };

  private constructor(
    model: LoadedModel,
    plan: OutputPlan,
    dimensions: number,
    options: EmbeddingEngineOptions,
  ) {
    this.#model = model;
    this.#tokenizer = new TokenizerThread(model.tokenizer, model.folder, model.device);
    this.#plan = plan;
    const config = model.config;
    this.#vocabSize = Number(config.vocab_size) || 0;
    const maxPositions = Number(config.max_position_embeddings ?? config.n_positions ?? Infinity);
    this.info = {
      id: options.id,
      kind: "embedding",
      contextLength: Math.min(maxPositions, model.tokenizer.model_max_length),
      dimensions,
      created: Math.floor(Date.now() / 1000),
      ownedBy: options.ownedBy ?? "svc",
      randomWeights: options.randomWeights ?? false,
      limits: { ...DEFAULT_ADMISSION_LIMITS, ...options.limits },
    };
    this.#batcher = new EmbeddingBatcher(
      (rows) => this.#runBatch(rows),
      {
        ...DEFAULT_EMBEDDING_BATCHING,
        maxBatchTokens: batchTokensFor(model.device),
        ...options.batching,
      },
    );
  }

  /** Builds the engine over a loaded encoder model. */
  static async create(
    model: LoadedModel,
    options: EmbeddingEngineOptions,
  ): Promise<EmbeddingEngine> {
    try {
      const plan = await planOutputs(model, options.id);
      const configured = plan.dense.at(-1)?.outFeatures ?? hiddenSizeOf(model.config);
      // One tiny run proves the feeds work and gives the true vector size.
      const probe = await EmbeddingEngine.#run(model, plan, [probeIds(model)]);
      const dims = probe[0].length;
      if (configured !== undefined && configured !== dims) {
        getLogger("engine").warn(
          `embedding model '${options.id}': config says ${configured} dimensions, the model ` +
            `makes ${dims}; using ${dims}`,
        );
      }
      return new EmbeddingEngine(model, plan, dims, options);
    } catch (err) {
      await model.session.release().catch(() => undefined);
      if (err instanceof ServiceError) throw err;
      throw new ServiceError(
        `could not set up embedding model '${options.id}' (${model.folder}): ` +
          `${err instanceof Error ? err.message : err}`,
        { cause: err },
      );
    }
  }

  /** Whether it is ready, and its queue. */
  health(): EngineHealth {
    return this.#state;
  }

  /** Queue and batch statistics for metrics. */
  stats(): BatcherStats {
    return this.#batcher.stats();
  }

  countTokens(text: string): number {
    return this.#model.tokenizer.encode(text).length;
  }

  tokenize(input: TokenizeInput, options?: { tokenStrs?: boolean }): Promise<EngineTokenizeResult> {
    return this.#tokenizer.tokenize(input, this.info.id, options);
  }

  detokenize(ids: number[]): Promise<string> {
    return this.#tokenizer.detokenize(ids);
  }

  generate(): Promise<GenerationStream> {
    return Promise.reject(
      new ValidationError(
        `model '${this.info.id}' is an embedding model; use /v1/embeddings`,
        { param: "model", code: "wrong_model_kind" },
      ),
    );
  }

  generateAll(): Promise<GenerationStream[]> {
    return this.generate().then((stream) => [stream]);
  }

  async embed(
    inputs: (string | number[])[],
    options: EngineEmbedOptions = {},
  ): Promise<EmbedResult> {
    const { dimensions, truncate = false, signal } = options;
    const modelDims = this.info.dimensions!;
    if (dimensions !== undefined && (dimensions < 1 || dimensions > modelDims)) {
      throw new ValidationError(
        `dimensions is ${dimensions}, but model '${this.info.id}' makes vectors of ${modelDims}; ` +
          `ask for 1 to ${modelDims}`,
        { param: "dimensions" },
      );
    }
    // A request's texts are encoded together: in the tokenizer's worker when they are large.
    const texts = inputs.filter((input): input is string => typeof input === "string");
    const encoded = await this.#tokenizer.encodeAll(texts);
    let next = 0;
    const rows = inputs.map((input, index) =>
      this.#checked(typeof input === "string" ? encoded[next++] : input, input, index, truncate)
    );
    const promptTokens = rows.reduce((n, ids) => n + ids.length, 0);
    checkLimit(this.info.limits!, "maxEmbeddingTokens", promptTokens, {
      what: "tokens in the request (all inputs together)",
      param: "input",
    });
    const raw = await this.#batcher.submitAll(rows, signal);
    const vectors = raw.map((v) => this.#finish(v, dimensions));
    return { vectors, promptTokens };
  }

  // An input's ids, checked against the vocabulary and the context (cut to it with `truncate`).
  #checked(ids: number[], input: string | number[], index: number, truncate: boolean): number[] {
    const tokenizer = this.#model.tokenizer;
    if (typeof input !== "string") checkTokenIds(ids, this.#vocabSize, `input.${index}`);
    const max = this.info.contextLength;
    if (ids.length === 0) {
      throw new ValidationError(`input[${index}] is empty`, { param: `input.${index}` });
    }
    if (ids.length <= max) return ids;
    if (!truncate) {
      throw new ContextLengthError(
        `input[${index}] has ${ids.length} tokens, more than the ${max} model '${this.info.id}' ` +
          `accepts; shorten it or send "truncate": true`,
        { param: `input.${index}` },
      );
    }
    // Keep the closing special token (e.g. [SEP]) the encoder was trained to see.
    const last = ids[ids.length - 1];
    return tokenizer.all_special_ids.includes(last)
      ? [...ids.slice(0, max - 1), last]
      : ids.slice(0, max);
  }

  /**
   * Normalization and Matryoshka shortening of one raw vector (pooled, Dense applied). nomic_bert
   * documents layer_norm over the full vector, then truncation, then L2 normalization; other
   * models truncate and renormalize.
   */
  #finish(v: Float32Array, dimensions: number | undefined): Float32Array {
    const { pooling, matryoshka } = this.#plan;
    if (dimensions === undefined || dimensions >= v.length) {
      return pooling.normalize ? normalizeInPlace(v) : v;
    }
    if (matryoshka === "layer_norm") layerNormInPlace(v);
    return normalizeInPlace(v.slice(0, dimensions));
  }

  #runBatch(rows: number[][]): Promise<Float32Array[]> {
    return EmbeddingEngine.#run(this.#model, this.#plan, rows);
  }

  /** Runs one padded batch and returns each row's vector before normalization. */
  static async #run(
    model: LoadedModel,
    plan: OutputPlan,
    rows: number[][],
  ): Promise<Float32Array[]> {
    const session = model.session;
    const seq = Math.max(...rows.map((r) => r.length));
    const batch = rows.length;
    const pad = BigInt(model.tokenizer.pad_token_id ?? 0);
    const ids = new BigInt64Array(batch * seq).fill(pad);
    const mask = new BigInt64Array(batch * seq);
    rows.forEach((row, b) => {
      for (let t = 0; t < row.length; t++) ids[b * seq + t] = BigInt(row[t]);
      mask.fill(1n, b * seq, b * seq + row.length);
    });
    const dims = [batch, seq];
    const feeds: Record<string, PlainTensor> = {
      input_ids: { type: "int64", data: ids, dims },
    };
    if (session.has("attention_mask")) feeds.attention_mask = { type: "int64", data: mask, dims };
    if (session.has("token_type_ids")) {
      feeds.token_type_ids = { type: "int64", data: new BigInt64Array(batch * seq), dims };
    }
    const out = (await session.run(feeds))[plan.name];
    if (!out) throw new ServiceError(`the model returned no '${plan.name}' output`);
    const data = toFloat32(out.type, out.data);
    if (plan.pooled) {
      if (out.dims.length !== 2 || out.dims[0] !== batch) {
        throw new ServiceError(`sentence_embedding has shape [${out.dims}], not [${batch}, dim]`);
      }
      const dim = out.dims[1];
      return rows.map((_, b) => data.slice(b * dim, (b + 1) * dim));
    }
    if (out.dims.length !== 3 || out.dims[0] !== batch || out.dims[1] !== seq) {
      throw new ServiceError(
        `output '${plan.name}' has shape [${out.dims}], not [batch, sequence, hidden]`,
      );
    }
    return rows.map((row, b) => {
      let v = poolRow(data, out.dims, b, row.length, plan.pooling.mode);
      for (const layer of plan.dense) v = applyDense(layer, v);
      return v;
    });
  }

  /** Stops batching and frees the session. */
  async dispose(): Promise<void> {
    this.#state = { state: "stopped" };
    this.#tokenizer.release();
    await this.#model.session.release();
  }
}

/** A short input for the probe run at load: the tokenizer's encoding of "probe". */
function probeIds(model: LoadedModel): number[] {
  const ids = model.tokenizer.encode("probe");
  return ids.length > 0 ? ids : [model.tokenizer.pad_token_id ?? 0];
}

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
  EmbedEngine,
  EmbedResult,
  EngineEmbedOptions,
  EngineHealth,
  EngineTokenizeResult,
  ModelInfo,
  TokenizeInput,
} from "../../core/inference_types.ts";
import type { LoadedModel } from "../load_model.ts";
import type { EncodedText } from "../tokenization.ts";
import type { BatcherStats } from "./batcher.ts";
import { checkLimit, checkTokenIds, DEFAULT_ADMISSION_LIMITS } from "../admission_limits.ts";
import { EncoderCore, type EncoderEngineOptions, setUpEncoderEngine } from "./encoder_core.ts";
import { checkEncoderInputs, encoderFeeds } from "./encoder_feeds.ts";
import { layerNormInPlace, normalizeInPlace, poolRow, toFloat32 } from "./pooling.ts";
import { applyDense, type DenseLayer } from "./dense.ts";
import { truncateIds } from "../truncate_ids.ts";
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
export type EmbeddingEngineOptions = EncoderEngineOptions;

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
  const { outputNames } = model.session;
  checkEncoderInputs(model.session, `embedding model '${id}'`, "the embedding engine");
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

/** The {@link EmbedEngine} for encoder models. */
export class EmbeddingEngine implements EmbedEngine {
  /** What it serves. */
  readonly info: ModelInfo;
  /** Its model, tokenizer thread, batcher and load state: what every encoder engine has. */
  #encoder: EncoderCore<number[]>;
  #plan: OutputPlan;
  #vocabSize: number;

  private constructor(
    model: LoadedModel,
    plan: OutputPlan,
    dimensions: number,
    options: EmbeddingEngineOptions,
  ) {
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
    this.#encoder = new EncoderCore(model, (rows) => this.#runBatch(rows), options.batching);
  }

  /** Builds the engine over a loaded encoder model. */
  static async create(
    model: LoadedModel,
    options: EmbeddingEngineOptions,
  ): Promise<EmbeddingEngine> {
    return await setUpEncoderEngine(model, `embedding model '${options.id}'`, async () => {
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
    });
  }

  /** Ready until disposed. */
  health(): EngineHealth {
    return this.#encoder.health();
  }

  /** Queue and batch statistics for metrics. */
  stats(): BatcherStats {
    return this.#encoder.stats();
  }

  countTokens(text: string): number {
    return this.#encoder.countTokens(text);
  }

  tokenize(input: TokenizeInput, options?: { tokenStrs?: boolean }): Promise<EngineTokenizeResult> {
    return this.#encoder.tokenizer.tokenize(input, this.info.id, options);
  }

  detokenize(ids: number[]): Promise<string> {
    return this.#encoder.tokenizer.detokenize(ids);
  }

  async embed(
    inputs: (string | number[])[],
    options: EngineEmbedOptions = {},
  ): Promise<EmbedResult> {
    const { dimensions, signal } = options;
    const modelDims = this.info.dimensions!;
    if (dimensions !== undefined && (dimensions < 1 || dimensions > modelDims)) {
      throw new ValidationError(
        `dimensions is ${dimensions}, but model '${this.info.id}' makes vectors of ${modelDims}; ` +
          `ask for 1 to ${modelDims}`,
        { param: "dimensions" },
      );
    }
    // A request's texts are encoded together: in the tokenizer's worker when they are large, a
    // text over the limit coming back cut to what truncation keeps.
    const texts = inputs.filter((input): input is string => typeof input === "string");
    const encoded = await this.#encoder.tokenizer.encodeAll(texts, {
      maxTokens: this.#limit(options),
    });
    let next = 0;
    const rows = inputs.map((input, index) =>
      this.#checked(
        typeof input === "string" ? encoded[next++] : { ids: input, length: input.length },
        input,
        index,
        options,
      )
    );
    const promptTokens = rows.reduce((n, ids) => n + ids.length, 0);
    checkLimit(this.info.limits!, "maxEmbeddingTokens", promptTokens, {
      what: "tokens in the request (all inputs together)",
      param: "input",
    });
    const raw = await this.#encoder.batcher.submitAll(rows, signal);
    const vectors = raw.map((v) => this.#finish(v, dimensions));
    return { vectors, promptTokens };
  }

  /** Most tokens of an input: the context, or fewer when the options say so. */
  #limit(options: EngineEmbedOptions): number {
    const max = this.info.contextLength;
    return Math.min(max, options.truncateTokens ?? max);
  }

  // An input's ids, checked against the vocabulary and the context (cut as the options ask). A
  // longer text's `length` is its own, its ids may already be cut (encodeTexts' `maxTokens`).
  #checked(
    { ids, length }: EncodedText,
    input: string | number[],
    index: number,
    options: EngineEmbedOptions,
  ): number[] {
    if (typeof input !== "string") checkTokenIds(ids, this.#vocabSize, `input.${index}`);
    const max = this.info.contextLength;
    if (length === 0) {
      throw new ValidationError(`input[${index}] is empty`, { param: `input.${index}` });
    }
    const limit = this.#limit(options);
    if (length <= limit) return ids;
    if (!options.truncate && options.truncateTokens === undefined) {
      throw new ContextLengthError(
        `input[${index}] has ${length} tokens, more than the ${max} model '${this.info.id}' ` +
          `accepts; shorten it or send "truncate": true`,
        { param: `input.${index}` },
      );
    }
    // Keep the special tokens (e.g. [CLS], [SEP]) the encoder was trained to see.
    const special = this.#encoder.model.tokenizer.all_special_ids;
    return truncateIds(ids, limit, {
      keepFirst: special.includes(ids[0]),
      keepLast: special.includes(ids[ids.length - 1]),
      side: options.truncationSide,
    });
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
    return EmbeddingEngine.#run(this.#encoder.model, this.#plan, rows);
  }

  /** Runs one padded batch and returns each row's vector before normalization. */
  static async #run(
    model: LoadedModel,
    plan: OutputPlan,
    rows: number[][],
  ): Promise<Float32Array[]> {
    const { feeds, batch, seq } = encoderFeeds(model.session, rows, {
      padId: model.tokenizer.pad_token_id ?? 0,
    });
    const out = (await model.session.run(feeds))[plan.name];
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
  dispose(): Promise<void> {
    return this.#encoder.dispose();
  }
}

/** A short input for the probe run at load: the tokenizer's encoding of "probe". */
function probeIds(model: LoadedModel): number[] {
  const ids = model.tokenizer.encode("probe");
  return ids.length > 0 ? ids : [model.tokenizer.pad_token_id ?? 0];
}

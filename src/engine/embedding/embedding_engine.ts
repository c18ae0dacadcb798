/**
 * The embedding engine: tokenizes inputs, gathers them into dynamic batches, runs the encoder and
 * pools each row into one (normalized) vector.
 *
 * @module
 */

import { ContextLengthError, ValidationError } from "../../core/errors.ts";
import type {
  EmbedOptions,
  EmbedResult,
  EngineHealth,
  GenerationStream,
  InferenceEngine,
  ModelInfo,
} from "../types.ts";
import type { LoadedModel } from "../load_model.ts";
import { type BatcherOptions, type BatcherStats, EmbeddingBatcher } from "./batcher.ts";
import { normalizeInPlace, type PoolingMode, poolRow, truncateDimensions } from "./pooling.ts";

/** Settings of an embedding engine. */
export interface EmbeddingEngineOptions {
  id: string;
  ownedBy?: string;
  randomWeights?: boolean;
  batching?: Partial<BatcherOptions>;
}

/**
 * Defaults: a batch of up to 64 inputs; an idle batcher runs at once (batches form while the model
 * is busy, so waiting would only add latency); at most 8192 inputs waiting. The token budget
 * depends on the device, see {@link batchTokensFor}.
 */
export const DEFAULT_EMBEDDING_BATCHING: BatcherOptions = {
  maxBatchTokens: 8192,
  maxBatchSize: 64,
  maxWaitMs: 0,
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

/** How a model pools and whether it normalizes, from its sentence-transformers files. */
export interface PoolingConfig {
  mode: PoolingMode;
  normalize: boolean;
}

/** Reads pooling from `1_Pooling/config.json` and `modules.json`; mean + normalize otherwise. */
export async function readPoolingConfig(model: LoadedModel): Promise<PoolingConfig> {
  const modules = await model.readJson("modules.json") as unknown as
    | { type?: string; path?: string }[]
    | null;
  if (!Array.isArray(modules)) return { mode: "mean", normalize: true };
  const poolingModule = modules.find((m) => m.type?.endsWith(".Pooling"));
  const pooling = poolingModule
    ? await model.readJson(`${poolingModule.path || "1_Pooling"}/config.json`)
    : null;
  const mode: PoolingMode = pooling?.pooling_mode_cls_token
    ? "cls"
    : pooling?.pooling_mode_lasttoken
    ? "last"
    : "mean";
  return { mode, normalize: modules.some((m) => m.type?.endsWith(".Normalize")) };
}

/** An {@link InferenceEngine} for encoder models. */
export class EmbeddingEngine implements InferenceEngine {
  readonly info: ModelInfo;
  #model: LoadedModel;
  #pooling: PoolingConfig;
  #batcher: EmbeddingBatcher;
  #state: EngineHealth = { state: "ready" };

  private constructor(model: LoadedModel, pooling: PoolingConfig, options: EmbeddingEngineOptions) {
    this.#model = model;
    this.#pooling = pooling;
    const config = model.config;
    const maxPositions = Number(config.max_position_embeddings ?? Infinity);
    this.info = {
      id: options.id,
      kind: "embedding",
      contextLength: Math.min(maxPositions, model.tokenizer.model_max_length),
      dimensions: Number(config.hidden_size),
      created: Math.floor(Date.now() / 1000),
      ownedBy: options.ownedBy ?? "svc",
      randomWeights: options.randomWeights ?? false,
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
    return new EmbeddingEngine(model, await readPoolingConfig(model), options);
  }

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

  generate(): Promise<GenerationStream> {
    return Promise.reject(
      new ValidationError(
        `model '${this.info.id}' is an embedding model; use /v1/embeddings`,
        { param: "model", code: "wrong_model_kind" },
      ),
    );
  }

  async embed(inputs: (string | number[])[], options: EmbedOptions = {}): Promise<EmbedResult> {
    const { dimensions, truncate = false, signal } = options;
    const modelDims = this.info.dimensions!;
    if (dimensions !== undefined && (dimensions < 1 || dimensions > modelDims)) {
      throw new ValidationError(
        `dimensions is ${dimensions}, but model '${this.info.id}' makes vectors of ${modelDims}; ` +
          `ask for 1 to ${modelDims}`,
        { param: "dimensions" },
      );
    }
    const rows = inputs.map((input, index) => this.#tokenize(input, index, truncate));
    const pooled = await this.#batcher.submitAll(rows, signal);
    const vectors = pooled.map((v) =>
      dimensions && dimensions < modelDims ? truncateDimensions(v, dimensions) : v
    );
    return { vectors, promptTokens: rows.reduce((n, ids) => n + ids.length, 0) };
  }

  #tokenize(input: string | number[], index: number, truncate: boolean): number[] {
    const tokenizer = this.#model.tokenizer;
    const ids = typeof input === "string" ? tokenizer.encode(input) : input;
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

  async #runBatch(rows: number[][]): Promise<Float32Array[]> {
    const session = this.#model.session;
    const seq = Math.max(...rows.map((r) => r.length));
    const batch = rows.length;
    const pad = BigInt(this.#model.tokenizer.pad_token_id ?? 0);
    const ids = new BigInt64Array(batch * seq).fill(pad);
    const mask = new BigInt64Array(batch * seq);
    rows.forEach((row, b) => {
      for (let t = 0; t < row.length; t++) ids[b * seq + t] = BigInt(row[t]);
      mask.fill(1n, b * seq, b * seq + row.length);
    });
    const dims = [batch, seq];
    const out = await session.run({
      input_ids: { type: "int64", data: ids, dims },
      attention_mask: { type: "int64", data: mask, dims },
      token_type_ids: { type: "int64", data: new BigInt64Array(batch * seq), dims },
    });
    const hidden = out.last_hidden_state ?? out[session.outputNames[0]];
    const data = hidden.data as Float32Array;
    return rows.map((row, b) => {
      const v = poolRow(data, hidden.dims, b, row.length, this.#pooling.mode);
      return this.#pooling.normalize ? normalizeInPlace(v) : v;
    });
  }

  async dispose(): Promise<void> {
    this.#state = { state: "stopped" };
    await this.#model.session.release();
  }
}

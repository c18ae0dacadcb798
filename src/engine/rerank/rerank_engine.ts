/**
 * The reranker engine: a cross-encoder (`*ForSequenceClassification` with one label) scores each
 * (query, document) pair. Pairs are tokenized as the model's tokenizer pairs them
 * (`[CLS] query [SEP] document [SEP]` with token types 0 and 1 for BERT), gathered into dynamic
 * batches by the embedding batcher, and each pair's logit becomes its score through the model's
 * score function (see score_function.ts).
 *
 * What real exports differ in: `token_type_ids` is an input of BERT exports (ms-marco-MiniLM,
 * jina-reranker-v1) and not of XLM-RoBERTa ones (bge-reranker-base); the output is `logits`
 * `[batch, 1]`. Any other input is refused at load.
 *
 * @module
 */

import { ContextLengthError, ServiceError, ValidationError } from "../../core/errors.ts";
import { getLogger } from "../../core/logging.ts";
import type {
  EmbedResult,
  EngineHealth,
  EngineRerankOptions,
  EngineTokenizeResult,
  GenerationStream,
  InferenceEngine,
  ModelInfo,
  RerankResult,
  TokenizeInput,
} from "../../core/inference_types.ts";
import type { LoadedModel } from "../load_model.ts";
import type { PlainTensor } from "../onnx_session.ts";
import { type BatcherOptions, type BatcherStats, EmbeddingBatcher } from "../embedding/batcher.ts";
import {
  batchTokensFor,
  DEFAULT_EMBEDDING_BATCHING,
  SUPPORTED_ENCODER_INPUTS,
} from "../embedding/embedding_engine.ts";
import { type AdmissionLimits, checkLimit, DEFAULT_ADMISSION_LIMITS } from "../admission_limits.ts";
import { toFloat32 } from "../embedding/pooling.ts";
import { TokenizerThread } from "../tokenizer_thread.ts";
import { encodePairs } from "../tokenization.ts";
import {
  applyActivation,
  checkSingleLabel,
  type ScoreActivation,
  scoreFunctionOf,
} from "./score_function.ts";

/** Settings of a reranker engine. */
export interface RerankEngineOptions {
  id: string;
  ownedBy?: string;
  randomWeights?: boolean;
  batching?: Partial<BatcherOptions>;
  /** Per-request limits (default {@link DEFAULT_ADMISSION_LIMITS}). */
  limits?: Partial<AdmissionLimits>;
}

/** One tokenized (query, document) pair; `length` is what the batcher pads to. */
interface PairRow {
  ids: number[];
  types: number[];
  length: number;
}

/** The output read: `logits` when the export names it, else its first output. */
function logitsOutputOf(model: LoadedModel, id: string): string {
  const { inputNames, outputNames } = model.session;
  const unsupported = inputNames.filter((n) => !SUPPORTED_ENCODER_INPUTS.includes(n));
  if (unsupported.length > 0 || !inputNames.includes("input_ids")) {
    throw new ServiceError(
      `reranker '${id}' takes the inputs ${inputNames.join(", ")}; the reranker engine feeds ` +
        `${SUPPORTED_ENCODER_INPUTS.join(", ")}`,
    );
  }
  const name = outputNames.includes("logits") ? "logits" : outputNames[0];
  if (!name) throw new ServiceError(`reranker '${id}' has no outputs`);
  return name;
}

/** An {@link InferenceEngine} for cross-encoders. */
export class RerankEngine implements InferenceEngine {
  readonly info: ModelInfo;
  #model: LoadedModel;
  /** Tokenizer work, large inputs in a worker. */
  #tokenizer: TokenizerThread;
  #output: string;
  #activation: ScoreActivation;
  #batcher: EmbeddingBatcher<PairRow>;
  #state: EngineHealth = { state: "ready" };

  private constructor(model: LoadedModel, output: string, options: RerankEngineOptions) {
    this.#model = model;
    this.#tokenizer = new TokenizerThread(model.tokenizer, model.folder, model.device);
    this.#output = output;
    const config = model.config;
    const score = scoreFunctionOf(config);
    if (score.unknown) {
      getLogger("engine").warn(
        `reranker '${options.id}': config names the activation ${score.configured}, which Svc ` +
          `does not know; scoring with the sigmoid (send raw_scores for the logits)`,
      );
    }
    this.#activation = score.activation;
    const maxPositions = Number(config.max_position_embeddings ?? Infinity);
    this.info = {
      id: options.id,
      kind: "rerank",
      contextLength: Math.min(maxPositions, model.tokenizer.model_max_length),
      created: Math.floor(Date.now() / 1000),
      ownedBy: options.ownedBy ?? "svc",
      randomWeights: options.randomWeights ?? false,
      limits: { ...DEFAULT_ADMISSION_LIMITS, ...options.limits },
    };
    this.#batcher = new EmbeddingBatcher<PairRow>((rows) => this.#run(rows), {
      ...DEFAULT_EMBEDDING_BATCHING,
      maxBatchTokens: batchTokensFor(model.device),
      ...options.batching,
    });
  }

  /** Builds the engine over a loaded cross-encoder; one probe pair checks the logits' shape. */
  static async create(model: LoadedModel, options: RerankEngineOptions): Promise<RerankEngine> {
    try {
      checkSingleLabel(model.config, options.id);
      const engine = new RerankEngine(model, logitsOutputOf(model, options.id), options);
      const [probe] = encodePairs(model.tokenizer, "probe", ["probe"]);
      await engine.#run([{ ...probe, length: probe.ids.length }]);
      return engine;
    } catch (err) {
      await model.session.release().catch(() => undefined);
      if (err instanceof ServiceError) throw err;
      throw new ServiceError(
        `could not set up reranker '${options.id}' (${model.folder}): ` +
          `${err instanceof Error ? err.message : err}`,
        { cause: err },
      );
    }
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

  tokenize(input: TokenizeInput, options?: { tokenStrs?: boolean }): Promise<EngineTokenizeResult> {
    return this.#tokenizer.tokenize(input, this.info.id, options);
  }

  detokenize(ids: number[]): Promise<string> {
    return this.#tokenizer.detokenize(ids);
  }

  generate(): Promise<GenerationStream> {
    return Promise.reject(this.#wrongKind("/v1/chat/completions"));
  }

  generateAll(): Promise<GenerationStream[]> {
    return this.generate().then((stream) => [stream]);
  }

  embed(): Promise<EmbedResult> {
    return Promise.reject(this.#wrongKind("/v1/embeddings"));
  }

  async rerank(
    query: string,
    documents: string[],
    options: EngineRerankOptions = {},
  ): Promise<RerankResult> {
    if (query.trim() === "") throw new ValidationError("query is empty", { param: "query" });
    const pairs = await this.#tokenizer.pairs(query, documents);
    const rows = pairs.map((p, i) =>
      this.#fit({ ...p, length: p.ids.length }, i, options.truncate)
    );
    const promptTokens = rows.reduce((n, row) => n + row.length, 0);
    checkLimit(this.info.limits!, "maxRerankTokens", promptTokens, {
      what: "tokens in the request (all query-document pairs together)",
      param: "documents",
    });
    const logits = await this.#batcher.submitAll(rows, options.signal);
    const scores = logits.map((l) =>
      options.rawScores ? l[0] : applyActivation(l[0], this.#activation)
    );
    return { scores, promptTokens };
  }

  /** A pair within the context, or a 400; with `truncate`, cut keeping the closing token. */
  #fit(row: PairRow, index: number, truncate = false): PairRow {
    const max = this.info.contextLength;
    if (row.length <= max) return row;
    if (!truncate) {
      throw new ContextLengthError(
        `the query and documents[${index}] have ${row.length} tokens together, more than the ` +
          `${max} model '${this.info.id}' accepts; shorten them or send "truncate": true`,
        { param: `documents.${index}` },
      );
    }
    const cut = (xs: number[]) => [...xs.slice(0, max - 1), xs[xs.length - 1]];
    return { ids: cut(row.ids), types: cut(row.types), length: max };
  }

  /** Runs one padded batch; one logit per pair. */
  async #run(rows: PairRow[]): Promise<Float32Array[]> {
    const session = this.#model.session;
    const seq = Math.max(...rows.map((r) => r.length));
    const batch = rows.length;
    const pad = BigInt(this.#model.tokenizer.pad_token_id ?? 0);
    const ids = new BigInt64Array(batch * seq).fill(pad);
    const mask = new BigInt64Array(batch * seq);
    const types = new BigInt64Array(batch * seq);
    rows.forEach((row, b) => {
      for (let t = 0; t < row.length; t++) {
        ids[b * seq + t] = BigInt(row.ids[t]);
        types[b * seq + t] = BigInt(row.types[t]);
      }
      mask.fill(1n, b * seq, b * seq + row.length);
    });
    const dims = [batch, seq];
    const feeds: Record<string, PlainTensor> = { input_ids: { type: "int64", data: ids, dims } };
    if (session.has("attention_mask")) feeds.attention_mask = { type: "int64", data: mask, dims };
    if (session.has("token_type_ids")) feeds.token_type_ids = { type: "int64", data: types, dims };
    const out = (await session.run(feeds))[this.#output];
    if (!out) throw new ServiceError(`the reranker returned no '${this.#output}' output`);
    const perRow = out.dims.slice(1).reduce((a, b) => a * b, 1);
    if (out.dims[0] !== batch || perRow !== 1) {
      throw new ServiceError(
        `reranker output '${this.#output}' has shape [${out.dims}], not [${batch}, 1]`,
      );
    }
    const data = toFloat32(out.type, out.data);
    return rows.map((_, b) => data.slice(b, b + 1));
  }

  #wrongKind(use: string): ValidationError {
    return new ValidationError(
      `model '${this.info.id}' is a reranker; use /v1/rerank (not ${use})`,
      { param: "model", code: "wrong_model_kind" },
    );
  }

  async dispose(): Promise<void> {
    this.#state = { state: "stopped" };
    this.#tokenizer.release();
    await this.#model.session.release();
  }
}

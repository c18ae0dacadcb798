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
  EngineHealth,
  EngineRerankOptions,
  EngineTokenizeResult,
  ModelInfo,
  RerankerEngine,
  RerankResult,
  TokenizeInput,
} from "../../core/inference_types.ts";
import type { LoadedModel } from "../load_model.ts";
import type { BatcherStats } from "../embedding/batcher.ts";
import {
  EncoderCore,
  type EncoderEngineOptions,
  setUpEncoderEngine,
} from "../embedding/encoder_core.ts";
import { checkEncoderInputs, encoderFeeds } from "../embedding/encoder_feeds.ts";
import { checkLimit, DEFAULT_ADMISSION_LIMITS } from "../admission_limits.ts";
import { toFloat32 } from "../embedding/pooling.ts";
import { encodePairs } from "../tokenization.ts";
import { truncateIds } from "../truncate_ids.ts";
import {
  applyActivation,
  checkSingleLabel,
  type ScoreActivation,
  scoreFunctionOf,
} from "./score_function.ts";

/** Settings of a reranker engine. */
export type RerankEngineOptions = EncoderEngineOptions;

/** One tokenized (query, document) pair; `length` is what the batcher pads to. */
interface PairRow {
  ids: number[];
  types: number[];
  length: number;
}

/** The output read: `logits` when the export names it, else its first output. */
function logitsOutputOf(model: LoadedModel, id: string): string {
  checkEncoderInputs(model.session, `reranker '${id}'`, "the reranker engine");
  const { outputNames } = model.session;
  const name = outputNames.includes("logits") ? "logits" : outputNames[0];
  if (!name) throw new ServiceError(`reranker '${id}' has no outputs`);
  return name;
}

/** The {@link RerankerEngine} for cross-encoders. */
export class RerankEngine implements RerankerEngine {
  readonly info: ModelInfo;
  /** Its model, tokenizer thread, batcher and load state: what every encoder engine has. */
  #encoder: EncoderCore<PairRow>;
  #output: string;
  #activation: ScoreActivation;

  private constructor(model: LoadedModel, output: string, options: RerankEngineOptions) {
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
    this.#encoder = new EncoderCore<PairRow>(model, (rows) => this.#run(rows), options.batching);
  }

  /** Builds the engine over a loaded cross-encoder; one probe pair checks the logits' shape. */
  static async create(model: LoadedModel, options: RerankEngineOptions): Promise<RerankEngine> {
    return await setUpEncoderEngine(model, `reranker '${options.id}'`, async () => {
      checkSingleLabel(model.config, options.id);
      const engine = new RerankEngine(model, logitsOutputOf(model, options.id), options);
      await engine.#run(encodePairs(model.tokenizer, "probe", ["probe"]));
      return engine;
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

  async rerank(
    query: string,
    documents: string[],
    options: EngineRerankOptions = {},
  ): Promise<RerankResult> {
    if (query.trim() === "") throw new ValidationError("query is empty", { param: "query" });
    // Pairs over the limit come back already cut to it (a long query would make every pair long).
    const pairs = await this.#encoder.tokenizer.pairs(query, documents, {
      maxTokens: this.#limit(options),
    });
    const rows = pairs.map((p, i) => this.#fit(p, i, options));
    const promptTokens = rows.reduce((n, row) => n + row.length, 0);
    checkLimit(this.info.limits!, "maxRerankTokens", promptTokens, {
      what: "tokens in the request (all query-document pairs together)",
      param: "documents",
    });
    const logits = await this.#encoder.batcher.submitAll(rows, options.signal);
    const scores = logits.map((l) =>
      options.rawScores ? l[0] : applyActivation(l[0], this.#activation)
    );
    return { scores, promptTokens };
  }

  /** Most tokens of a pair: the context, or fewer when the options say so. */
  #limit(options: EngineRerankOptions): number {
    const max = this.info.contextLength;
    return Math.min(max, options.truncateTokens ?? max);
  }

  /**
   * A pair within the context, or a 400; cut as the options ask, keeping its special tokens. A
   * longer pair's `length` is its own, its ids may already be cut (encodePairs' `maxTokens`).
   */
  #fit(row: PairRow, index: number, options: EngineRerankOptions): PairRow {
    const max = this.info.contextLength;
    const limit = this.#limit(options);
    if (row.length <= limit) return row;
    if (!options.truncate && options.truncateTokens === undefined) {
      throw new ContextLengthError(
        `the query and documents[${index}] have ${row.length} tokens together, more than the ` +
          `${max} model '${this.info.id}' accepts; shorten them or send "truncate": true`,
        { param: `documents.${index}` },
      );
    }
    // From the end (the document's), the opening and closing tokens staying.
    const cut = (xs: number[]) => truncateIds(xs, limit, { keepFirst: true, keepLast: true });
    return { ids: cut(row.ids), types: cut(row.types), length: limit };
  }

  /** Runs one padded batch; one logit per pair. */
  async #run(rows: PairRow[]): Promise<Float32Array[]> {
    const { model } = this.#encoder;
    const { feeds, batch } = encoderFeeds(model.session, rows.map((r) => r.ids), {
      padId: model.tokenizer.pad_token_id ?? 0,
      typeIds: rows.map((r) => r.types),
    });
    const out = (await model.session.run(feeds))[this.#output];
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

  /** Stops batching and frees the session. */
  dispose(): Promise<void> {
    return this.#encoder.dispose();
  }
}

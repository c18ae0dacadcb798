/**
 * What the embedding and rerank engines share around their encoder session: the tokenizer thread,
 * the batcher that gathers rows into padded runs, the load state, freeing them together, and
 * setting an engine up so that a failure frees the session. Each engine holds one
 * {@link EncoderCore} rather than extending a base class: the engines are public classes, and a
 * base class would put its protected members (and their internal types) in their documented API.
 *
 * @module
 */

import { ServiceError } from "../../core/errors.ts";
import type { EngineHealth } from "../../core/inference_types.ts";
import type { AdmissionLimits } from "../admission_limits.ts";
import type { LoadedModel } from "../load_model.ts";
import { TokenizerThread } from "../tokenizer_thread.ts";
import {
  type BatcherOptions,
  type BatcherStats,
  type BatchRunner,
  EmbeddingBatcher,
  type TokenRow,
} from "./batcher.ts";

/** Settings of an encoder engine (embedding or rerank). */
export interface EncoderEngineOptions {
  id: string;
  ownedBy?: string;
  randomWeights?: boolean;
  batching?: Partial<BatcherOptions>;
  /** Per-request limits (default `DEFAULT_ADMISSION_LIMITS`). */
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

/**
 * Builds an engine over `model` with `build`; when that fails, frees the session and says which
 * model (`name`, e.g. `embedding model 'x'`) could not be set up, unless the error already does.
 */
export async function setUpEncoderEngine<T>(
  model: LoadedModel,
  name: string,
  build: () => Promise<T>,
): Promise<T> {
  try {
    return await build();
  } catch (err) {
    await model.session.release().catch(() => undefined);
    if (err instanceof ServiceError) throw err;
    throw new ServiceError(
      `could not set up ${name} (${model.folder}): ${err instanceof Error ? err.message : err}`,
      { cause: err },
    );
  }
}

/** An encoder engine's model, tokenizer thread and batcher, and its load state. */
export class EncoderCore<Row extends TokenRow> {
  /** The loaded model: its session, tokenizer and config. */
  readonly model: LoadedModel;
  /** Tokenizer work, large inputs in a worker. */
  readonly tokenizer: TokenizerThread;
  /** Gathers rows into batches, each one `run`. */
  readonly batcher: EmbeddingBatcher<Row>;
  #state: EngineHealth = { state: "ready" };

  /** Batches with the defaults for the model's device, then `batching`; `run` runs a batch. */
  constructor(model: LoadedModel, run: BatchRunner<Row>, batching?: Partial<BatcherOptions>) {
    this.model = model;
    this.tokenizer = new TokenizerThread(model.tokenizer, model.folder, model.device);
    this.batcher = new EmbeddingBatcher<Row>(run, {
      ...DEFAULT_EMBEDDING_BATCHING,
      maxBatchTokens: batchTokensFor(model.device),
      ...batching,
    });
  }

  /** Ready until disposed. */
  health(): EngineHealth {
    return this.#state;
  }

  /** Queue and batch statistics for metrics. */
  stats(): BatcherStats {
    return this.batcher.stats();
  }

  /** Tokens of `text`, special tokens included. */
  countTokens(text: string): number {
    return this.model.tokenizer.encode(text).length;
  }

  /** Frees the tokenizer thread and the session. */
  async dispose(): Promise<void> {
    this.#state = { state: "stopped" };
    this.tokenizer.release();
    await this.model.session.release();
  }
}

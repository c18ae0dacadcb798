/**
 * Dynamic batching of embedding work.
 *
 * Inputs from concurrent requests wait in one queue. The worker takes as many as fit a token
 * budget (longest input × batch size, since the batch is padded to its longest), preferring inputs
 * of similar length so little padding is wasted, runs them as one model call, and hands each
 * vector back to its request; a failed model call is run again input by input, so only the
 * inputs the model fails on fail.
 *
 * There is no batching window (as in TEI): an idle batcher hands what it has to the model at once
 * (one microtask later, so the rows one caller submits in the same turn go together), and only
 * inputs that arrive while a batch runs are batched, into the next one. Measured (issue 26): a
 * window only adds its length to every lone request, while under load the running batch is the
 * window.
 *
 * @module
 */

import { CancelledError, RateLimitError } from "../../core/errors.ts";

/** Limits of the batcher. */
export interface BatcherOptions {
  /** Most padded tokens (rows × longest row) in one model call. */
  maxBatchTokens: number;
  /** Most inputs in one model call. */
  maxBatchSize: number;
  /** Most inputs waiting at once; a request that would pass it is refused with a 429. */
  maxQueue: number;
}

/**
 * What the batcher batches: a row of tokens, whose `length` is what it pads to (token ids, or a
 * reranker's ids and token types together).
 */
export interface TokenRow {
  readonly length: number;
}

/** Runs one batch: rows in, one vector per row out. */
export type BatchRunner<R extends TokenRow = number[]> = (rows: R[]) => Promise<Float32Array[]>;

interface Pending<R extends TokenRow> {
  ids: R;
  signal?: AbortSignal;
  resolve(v: Float32Array): void;
  reject(e: unknown): void;
}

/** Statistics the metrics endpoint shows (the shape the server's engine metrics read). */
export interface BatcherStats {
  /** Inputs waiting. */
  queueDepth: number;
  /** Inputs in the batch running now. */
  running: number;
  /** Batches run so far. */
  batches: number;
  /** Every batch so far as (batch size, number of batches of that size). */
  batchSizes: [number, number][];
}

/** Gathers embedding (or reranking) inputs into batches. */
export class EmbeddingBatcher<R extends TokenRow = number[]> {
  #options: BatcherOptions;
  #run: BatchRunner<R>;
  #queue: Pending<R>[] = [];
  #running = false;
  #batches = 0;
  #inFlight = 0;
  #batchSizes = new Map<number, number>();

  constructor(run: BatchRunner<R>, options: BatcherOptions) {
    this.#run = run;
    this.#options = options;
  }

  /** Queue depth and batch counters. */
  stats(): BatcherStats {
    return {
      queueDepth: this.#queue.length,
      running: this.#inFlight,
      batches: this.#batches,
      batchSizes: [...this.#batchSizes],
    };
  }

  /**
   * Embeds the rows of one request (in order), or refuses all of them with a RateLimitError when
   * they do not fit the queue, so memory stays bounded under any burst.
   */
  submitAll(rows: R[], signal?: AbortSignal): Promise<Float32Array[]> {
    const { maxQueue } = this.#options;
    if (this.#queue.length > 0 && this.#queue.length + rows.length > maxQueue) {
      return Promise.reject(
        new RateLimitError(
          `the embedding queue is full (${this.#queue.length} inputs waiting); retry shortly`,
          { retryAfterSeconds: 1 },
        ),
      );
    }
    return Promise.all(rows.map((ids) => this.submit(ids, signal)));
  }

  /** Embeds one row of token ids; resolves when its batch has run. */
  submit(ids: R, signal?: AbortSignal): Promise<Float32Array> {
    if (signal?.aborted) return Promise.reject(new CancelledError());
    return new Promise((resolve, reject) => {
      const pending: Pending<R> = { ids, signal, resolve, reject };
      this.#queue.push(pending);
      // A cancelled input leaves the queue at once, not when its turn comes.
      signal?.addEventListener("abort", () => {
        const at = this.#queue.indexOf(pending);
        if (at < 0) return;
        this.#queue.splice(at, 1);
        reject(new CancelledError());
      }, { once: true });
      if (!this.#running) this.#loop();
    });
  }

  async #loop(): Promise<void> {
    this.#running = true;
    try {
      // One microtask, no timer: rows submitted in the same turn as this one join its batch.
      await Promise.resolve();
      while (this.#queue.length > 0) {
        const batch = this.#take();
        if (batch.length === 0) continue;
        this.#batches++;
        this.#batchSizes.set(batch.length, (this.#batchSizes.get(batch.length) ?? 0) + 1);
        this.#inFlight = batch.length;
        try {
          await this.#runIsolated(batch);
        } finally {
          this.#inFlight = 0;
        }
      }
    } finally {
      this.#running = false;
    }
  }

  /**
   * Runs a batch and answers its inputs. When the model call fails, runs each input alone, so an
   * input the model fails on fails only its own request, not the others batched with it.
   */
  async #runIsolated(batch: Pending<R>[]): Promise<void> {
    try {
      const vectors = await this.#run(batch.map((p) => p.ids));
      batch.forEach((p, i) => p.resolve(vectors[i]));
      return;
    } catch (err) {
      if (batch.length === 1) {
        batch[0].reject(err);
        return;
      }
    }
    for (const p of batch) {
      try {
        p.resolve((await this.#run([p.ids]))[0]);
      } catch (err) {
        p.reject(err);
      }
    }
  }

  /**
   * Removes and returns the next batch: inputs in length order around the oldest one, while the
   * padded size stays within the budget.
   */
  #take(): Pending<R>[] {
    if (this.#queue.length === 0) return [];
    const { maxBatchTokens, maxBatchSize } = this.#options;
    // The oldest input always goes, so nothing starves; its neighbours in length join it.
    const byLength = [...this.#queue].sort((a, b) => a.ids.length - b.ids.length);
    const oldest = this.#queue[0];
    let lo = byLength.indexOf(oldest);
    let hi = lo;
    let longest = oldest.ids.length;
    const fits = (len: number, count: number) => Math.max(longest, len) * count <= maxBatchTokens;
    while (hi - lo + 1 < maxBatchSize) {
      const up = byLength[hi + 1];
      const down = byLength[lo - 1];
      const count = hi - lo + 2;
      // Prefer the neighbour closer in length to the oldest input.
      const pickUp = up &&
        (!down || up.ids.length - oldest.ids.length <= oldest.ids.length - down.ids.length);
      if (pickUp && fits(up.ids.length, count)) {
        hi++;
        longest = Math.max(longest, up.ids.length);
      } else if (down && fits(down.ids.length, count)) {
        lo--;
      } else if (!pickUp && up && fits(up.ids.length, count)) {
        hi++;
        longest = Math.max(longest, up.ids.length);
      } else break;
    }
    const batch = byLength.slice(lo, hi + 1);
    const taken = new Set(batch);
    this.#queue = this.#queue.filter((p) => !taken.has(p));
    return batch;
  }
}

/**
 * Continuous batching for a causal LM.
 *
 * Waiting sequences are prefilled together (left-padded) as soon as there is room, then join the
 * running decode batch; a sequence leaves the batch the step it finishes. Each decode step runs the
 * model once for every running sequence. The key/value cache is rebuilt only when the batch
 * changes (see kv_cache.ts), otherwise each step's `present` outputs feed the next step directly.
 *
 * The scheduler knows nothing of text, sampling or stop strings: each sequence turns its logits
 * into the next token (or says it is done) through {@link ScheduledSequence.accept}.
 *
 * @module
 */

import { CancelledError, RateLimitError } from "../../core/errors.ts";
import type { ModelSession, PlainTensor } from "../onnx_session.ts";
import { assembleCache, type CacheSlice, type CacheTensor, leftPaddedMask } from "./kv_cache.ts";

/** A sequence as the scheduler sees it. */
export interface ScheduledSequence {
  readonly promptIds: readonly number[];
  readonly signal?: AbortSignal;
  /**
   * Takes the logits of the sequence's next position (a view, valid only during the call) and
   * returns the token to feed next, or `null` when the sequence is finished.
   */
  accept(logits: Float32Array): number | null;
  /** Ends the sequence with an error (cancellation included). */
  fail(err: unknown): void;
}

/** Shape of the model's cache inputs. */
export interface CacheLayout {
  /** Names of the cache inputs, e.g. `past_key_values.0.key`, in order. */
  pastNames: string[];
  /** Output name for each past input, e.g. `present.0.key`. */
  presentNames: string[];
  kvHeads: number;
  headDim: number;
  half: boolean;
}

/** Limits of the scheduler. */
export interface SchedulerOptions {
  /** Most sequences decoding at once; 1 switches batching off. */
  maxSequences: number;
  /** Most prompt tokens (padded) prefilled in one model call. */
  maxBatchTokens: number;
  /** Most sequences waiting for a place; more are refused with a 429. */
  maxQueue: number;
}

/** Counters for metrics (the shape the server's engine metrics read). */
export interface SchedulerStats {
  /** Sequences decoding now. */
  running: number;
  /** Sequences waiting for a place. */
  queueDepth: number;
  /** Decode steps run so far. */
  steps: number;
  /** Every decode step so far as (batch size, number of steps of that size). */
  batchSizes: [number, number][];
}

interface Running {
  seq: ScheduledSequence;
  /** Tokens in the cache. */
  length: number;
  /** Token to feed at the next step. */
  next: number;
}

/** Runs many sequences through one model with continuous batching. */
export class DecodeScheduler {
  #session: ModelSession;
  #layout: CacheLayout;
  #options: SchedulerOptions;
  #waiting: ScheduledSequence[] = [];
  #running: Running[] = [];
  /** Cache of the running batch; row i belongs to #running[i]. */
  #cache: CacheTensor[] | null = null;
  #loop: Promise<void> | null = null;
  #steps = 0;
  #batchSizes = new Map<number, number>();

  constructor(session: ModelSession, layout: CacheLayout, options: SchedulerOptions) {
    this.#session = session;
    this.#layout = layout;
    this.#options = options;
  }

  /** Current load, for metrics and health. */
  stats(): SchedulerStats {
    return {
      running: this.#running.length,
      queueDepth: this.#waiting.length,
      steps: this.#steps,
      batchSizes: [...this.#batchSizes],
    };
  }

  /** Queues a sequence; throws RateLimitError when the queue is full. */
  submit(seq: ScheduledSequence): void {
    if (this.#waiting.length >= this.#options.maxQueue) {
      throw new RateLimitError(
        `the server is busy: ${this.#waiting.length} requests are already waiting; retry shortly`,
        { retryAfterSeconds: 1 },
      );
    }
    this.#waiting.push(seq);
    this.#loop ??= this.#run().finally(() => (this.#loop = null));
  }

  /** Resolves once every queued and running sequence has finished. */
  async idle(): Promise<void> {
    while (this.#loop) await this.#loop;
  }

  async #run(): Promise<void> {
    while (this.#waiting.length > 0 || this.#running.length > 0) {
      try {
        await this.#admit();
        if (this.#running.length > 0) await this.#step();
      } catch (err) {
        // A failed model call fails the sequences it was running; the loop goes on for others.
        for (const r of this.#running) r.seq.fail(err);
        this.#running = [];
        this.#cache = null;
      }
    }
  }

  /** Prefills as many waiting sequences as fit and merges them into the running batch. */
  async #admit(): Promise<void> {
    this.#waiting = this.#waiting.filter((seq) => !dropIfAborted(seq));
    const room = this.#options.maxSequences - this.#running.length;
    if (room <= 0 || this.#waiting.length === 0) return;
    const admitted: ScheduledSequence[] = [];
    let longest = 0;
    for (const seq of this.#waiting) {
      if (admitted.length >= room) break;
      const len = Math.max(longest, seq.promptIds.length);
      if (admitted.length > 0 && len * (admitted.length + 1) > this.#options.maxBatchTokens) break;
      admitted.push(seq);
      longest = len;
    }
    this.#waiting.splice(0, admitted.length);
    let prefill: Record<string, PlainTensor>;
    try {
      prefill = await this.#prefill(admitted, longest);
    } catch (err) {
      for (const seq of admitted) seq.fail(err);
      return;
    }
    const [, positions, vocab] = prefill.logits.dims;
    const joined: { run: Running; slice: CacheSlice }[] = [];
    const prefillCache = this.#layout.presentNames.map((n) => toCache(prefill[n]));
    admitted.forEach((seq, row) => {
      // Left padding puts every row's last prompt token in the last position.
      const offset = (row * positions + positions - 1) * vocab;
      const next = seq.accept(prefill.logits.data.subarray(offset, offset + vocab));
      if (next === null) return;
      const length = seq.promptIds.length;
      joined.push({ run: { seq, length, next }, slice: { layers: prefillCache, row, length } });
    });
    if (joined.length === 0) return;
    const current = this.#running.map((run, row) => ({
      layers: this.#cache!,
      row,
      length: run.length,
    }));
    this.#cache = assembleCache([...current, ...joined.map((j) => j.slice)]);
    this.#running.push(...joined.map((j) => j.run));
  }

  #prefill(seqs: ScheduledSequence[], longest: number): Promise<Record<string, PlainTensor>> {
    const batch = seqs.length;
    const ids = new BigInt64Array(batch * longest);
    const positions = new BigInt64Array(batch * longest);
    seqs.forEach((seq, row) => {
      const pad = longest - seq.promptIds.length;
      seq.promptIds.forEach((id, t) => {
        ids[row * longest + pad + t] = BigInt(id);
        positions[row * longest + pad + t] = BigInt(t);
      });
    });
    const mask = leftPaddedMask(seqs.map((s) => s.promptIds.length), longest, 0);
    const empty = this.#layout.pastNames.map(() => ({
      data: this.#layout.half ? new Uint16Array(0) : new Float32Array(0),
      dims: [batch, this.#layout.kvHeads, 0, this.#layout.headDim] as const,
    }));
    return this.#session.run(this.#feeds(
      { data: ids, dims: [batch, longest] },
      mask,
      { data: positions, dims: [batch, longest] },
      empty,
    ));
  }

  /** One decode step for every running sequence. */
  async #step(): Promise<void> {
    // Cancelled sequences leave before the step, so cancellation costs at most one step.
    if (this.#running.some((r) => r.seq.signal?.aborted)) {
      this.#keep(this.#running.map((r) => !dropIfAborted(r.seq)));
      if (this.#running.length === 0) return;
    }
    const batch = this.#running.length;
    const length = this.#cache![0].dims[2];
    const ids = BigInt64Array.from(this.#running, (r) => BigInt(r.next));
    const positions = BigInt64Array.from(this.#running, (r) => BigInt(r.length));
    const mask = leftPaddedMask(this.#running.map((r) => r.length), length, 1);
    const out = await this.#session.run(this.#feeds(
      { data: ids, dims: [batch, 1] },
      mask,
      { data: positions, dims: [batch, 1] },
      this.#cache!,
    ));
    this.#steps++;
    this.#batchSizes.set(batch, (this.#batchSizes.get(batch) ?? 0) + 1);
    this.#cache = this.#layout.presentNames.map((n) => toCache(out[n]));
    const vocab = out.logits.dims[2];
    const keep = this.#running.map((r, row) => {
      r.length++;
      const next = r.seq.accept(out.logits.data.subarray(row * vocab, (row + 1) * vocab));
      if (next === null) return false;
      r.next = next;
      return true;
    });
    if (keep.includes(false)) this.#keep(keep);
  }

  /** Keeps the running sequences whose flag is true, compacting the cache. */
  #keep(flags: boolean[]): void {
    const slices: CacheSlice[] = [];
    const running: Running[] = [];
    this.#running.forEach((r, row) => {
      if (!flags[row]) return;
      running.push(r);
      slices.push({ layers: this.#cache!, row, length: r.length });
    });
    this.#running = running;
    this.#cache = slices.length > 0 ? assembleCache(slices) : null;
  }

  #feeds(
    ids: { data: BigInt64Array; dims: readonly number[] },
    mask: { data: BigInt64Array; dims: readonly number[] },
    positions: { data: BigInt64Array; dims: readonly number[] },
    past: readonly CacheTensor[],
  ): Record<string, PlainTensor> {
    const feeds: Record<string, PlainTensor> = {
      input_ids: { type: "int64", ...ids },
      attention_mask: { type: "int64", ...mask },
      position_ids: { type: "int64", ...positions },
    };
    // Exports that take it compute logits for the last position only: prefill skips the rest.
    if (this.#session.has("num_logits_to_keep")) {
      feeds.num_logits_to_keep = { type: "int64", data: BigInt64Array.of(1n), dims: [] };
    }
    const type = this.#layout.half ? "float16" : "float32";
    this.#layout.pastNames.forEach((name, i) => {
      feeds[name] = { type, data: past[i].data, dims: past[i].dims };
    });
    return feeds;
  }
}

function toCache(t: PlainTensor): CacheTensor {
  return { data: t.data, dims: t.dims as unknown as CacheTensor["dims"] };
}

function dropIfAborted(seq: ScheduledSequence): boolean {
  if (!seq.signal?.aborted) return false;
  seq.fail(new CancelledError());
  return true;
}

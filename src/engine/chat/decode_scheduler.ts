/**
 * Continuous batching for a causal LM.
 *
 * Waiting sequences are prefilled together (left-padded) as soon as there is room, then join the
 * running decode batch; a sequence leaves the batch the step it finishes. A prompt longer than
 * {@link SchedulerOptions.prefillChunk} that arrives while others decode is prefilled a chunk at a
 * time, one chunk between two decode steps, so it delays the running streams' next token by at
 * most one chunk instead of its whole prefill. Each decode step runs the
 * model once for every running sequence. The key/value cache is rebuilt only when the batch
 * changes (see kv_cache.ts), otherwise each step's `present` outputs feed the next step directly.
 * The prefix cache (prefix_cache.ts) keeps the cache of every prompt once prefilled and of every
 * sequence once it leaves; a waiting sequence whose prompt starts with cached blocks is prefilled
 * alone, from the end of its cached prefix.
 * What the model takes and whether rows of different lengths may share a batch come from its
 * {@link DecoderPlan} (families/).
 *
 * Requests share the batch fairly: the queue takes the first sequence of every request before
 * the second of any (round-robin by request), and one request may hold at most three quarters of
 * the batch, so a small request's first token does not wait for a big request's sequences (n=64,
 * or many prompts) to finish.
 *
 * The scheduler knows nothing of text, sampling or stop strings: each sequence turns its logits
 * into the next token (or says it is done) through {@link ScheduledSequence.accept}.
 *
 * @module
 */

import { RateLimitError, ValidationError } from "../../core/errors.ts";
import { sleep } from "../../core/sleep.ts";
import { type ModelSession, type PlainTensor, runScored, type ScoredRun } from "../onnx_session.ts";
import type { LogitsScoring } from "../decoding/log_softmax.ts";
import type { DecoderPlan } from "../families/decoder_family.ts";
import type { CacheTensor } from "./kv_cache.ts";
import { type PrefillJob, runPrefill, startPrefill } from "./prefill.ts";
import { DEFAULT_PREFIX_CACHE_BYTES, PREFIX_BLOCK_TOKENS, PrefixCache } from "./prefix_cache.ts";
import {
  DEFAULT_MAX_PREFILL_LOGITS,
  type ScheduledSequence,
  type SchedulerOptions,
  type SchedulerStats,
} from "./scheduler_types.ts";
import { RequestQueue, type Shares } from "./_request_queue.ts";
import { dropIfAborted, type Prefilled, RunningBatch } from "./_running_batch.ts";

// The types moved to scheduler_types.ts; importers of this module still find them here.
export type { ScheduledSequence, SchedulerOptions, SchedulerStats } from "./scheduler_types.ts";
export { DEFAULT_MAX_PREFILL_LOGITS } from "./scheduler_types.ts";

/** Runs many sequences through one model with continuous batching. */
export class DecodeScheduler {
  #session: ModelSession;
  #plan: DecoderPlan;
  #options: SchedulerOptions;
  /** Sequences waiting for a place, fair between requests. */
  #queue = new RequestQueue();
  /** The sequences decoding, their cache and decode steps. */
  #batch: RunningBatch;
  /** The scheduling loop under way; `#looping` says whether it still runs. */
  #loop: Promise<void> = Promise.resolve();
  #looping = false;
  /** The chunked prefill under way, if any (one prompt; the queue waits behind it). */
  #job: PrefillJob<ScheduledSequence> | null = null;
  #prefixes: PrefixCache | null;
  /** Sequences the admission under way took from the queue: failed with it should it throw. */
  #taken: ScheduledSequence[] = [];
  /** Settles when the last {@link runAside} call queued is done. */
  #asideTurn: Promise<void> = Promise.resolve();
  /** When the last {@link runAside} call ended and how long it ran (ms). */
  #lastAside = { end: 0, ms: 0 };

  constructor(session: ModelSession, plan: DecoderPlan, options: SchedulerOptions) {
    this.#session = session;
    this.#plan = plan;
    this.#options = options;
    const bytes = options.prefixCacheBytes ?? DEFAULT_PREFIX_CACHE_BYTES;
    this.#prefixes = bytes > 0 && plan.batching !== "single"
      ? new PrefixCache(bytes, PREFIX_BLOCK_TOKENS, session.deviceCopies)
      : null;
    this.#batch = new RunningBatch(session, plan, this.#prefixes);
  }

  /** Current load, for metrics and health. */
  stats(): SchedulerStats {
    return {
      running: this.#batch.rows.length + (this.#job?.seqs.length ?? 0),
      queueDepth: this.#queue.waiting.length,
      steps: this.#batch.steps,
      batchSizes: [...this.#batch.batchSizes],
      ...(this.#prefixes ? { prefixCache: this.#prefixes.stats() } : {}),
    };
  }

  /**
   * Throws unless `count` sequences fit the queue now: a RateLimitError when it is too full, a
   * ValidationError when they never could. Callers check before building the sequences.
   */
  checkRoom(count: number): void {
    const { maxQueue } = this.#options;
    if (count > maxQueue) {
      throw new ValidationError(
        `the request asks for ${count} sequences (prompts × n), more than this engine ` +
          `queues (${maxQueue}; the engine's --max-queue flag raises it)`,
        { param: "n", code: "invalid_value" },
      );
    }
    const waiting = this.#queue.waiting.length;
    if (waiting + count > maxQueue) {
      throw new RateLimitError(
        `the server is busy: ${waiting} sequences are already waiting; retry shortly`,
        { retryAfterSeconds: 1 },
      );
    }
  }

  /** Queues the sequences of one request, all or none (refused as {@link checkRoom} says). */
  submitAll(seqs: readonly ScheduledSequence[]): void {
    this.checkRoom(seqs.length);
    this.#queue.add(seqs);
    // A decode loop ends for them when they can join (else at the step a sequence leaves).
    if (this.#batch.rows.length < this.#most()) this.#batch.stopLoop();
    if (!this.#looping) this.#loop = this.#run();
  }

  /**
   * One model call outside the batch (a prompt's log-probabilities), its logits scored where the
   * session lives. Such calls go one at a time, however many prompts are being scored, and between
   * two of them the running and waiting sequences get the model for as long as the last one took
   * (or until none is left): they lose at most half the model's time to scoring, and a short chat
   * waits for one scoring call instead of one per model call of its own. A decode loop running in
   * the worker ends first, so the call goes between two decode steps, like a prefill chunk.
   */
  async runAside(feeds: Record<string, PlainTensor>, scoring: LogitsScoring): Promise<ScoredRun> {
    const before = this.#asideTurn;
    let done!: () => void;
    this.#asideTurn = new Promise((resolve) => done = resolve);
    try {
      await before;
      await this.#batchShare();
      this.#batch.stopLoop();
      const start = performance.now();
      try {
        return await runScored(this.#session, feeds, scoring);
      } finally {
        const end = performance.now();
        this.#lastAside = { end, ms: end - start };
      }
    } finally {
      done();
    }
  }

  /** Waits while the scheduling loop runs, until it has had the time the last aside call took. */
  async #batchShare(): Promise<void> {
    const until = this.#lastAside.end + this.#lastAside.ms;
    while (this.#looping && performance.now() < until) {
      const wake = new AbortController();
      await Promise.race([sleep(until - performance.now(), wake.signal), this.#loop]);
      wake.abort();
    }
  }

  /**
   * Keeps in the prefix cache the cache of `ids` that {@link runAside} calls built (row 0, from
   * its first column), so a generation from a prompt just scored prefills only its last token.
   * Kept now, not at the next admission: none may come (a prompt scored alone).
   */
  rememberAside(ids: readonly number[], cache: readonly CacheTensor[]): void {
    this.#prefixes?.insert(ids, { layers: cache, row: 0, start: 0 });
  }

  /** Resolves once every queued and running sequence has finished. */
  async idle(): Promise<void> {
    while (this.#looping) await this.#loop;
  }

  async #run(): Promise<void> {
    // Set and cleared in the same synchronous steps as the loop's own condition: a sequence
    // queued once the loop has seen an empty queue starts a new loop (a flag cleared in a later
    // `.finally()` left such a sequence queued forever).
    this.#looping = true;
    try {
      while (this.#queue.waiting.length > 0 || this.#batch.rows.length > 0 || this.#job) {
        try {
          await this.#admit();
          this.#taken = [];
          if (this.#batch.rows.length > 0) {
            if (!(this.#loopable() && await this.#batch.loopSteps())) await this.#batch.step();
          }
        } catch (err) {
          // A failed model call fails the sequences it was running, and a failed admission those
          // it took; the loop goes on for the others.
          const job = new Set(this.#job?.seqs);
          for (const seq of this.#taken) if (!job.has(seq)) seq.fail(err);
          this.#batch.failAll(err);
          this.#taken = [];
        }
      }
    } finally {
      this.#looping = false;
    }
  }

  /**
   * Prefills as many waiting sequences as fit and merges them into the running batch; or, for a
   * long prompt while others decode, runs the next chunk of its prefill.
   */
  async #admit(): Promise<void> {
    this.#batch.rememberNow(); // lookups below see every sequence so far
    if (this.#job) return await this.#continueJob(this.#job);
    this.#queue.filter((seq) => !dropIfAborted(seq));
    const { batching } = this.#plan;
    const room = this.#most() - this.#batch.rows.length;
    if (room <= 0 || this.#queue.waiting.length === 0) return;
    const shares = this.#shares();
    const first = this.#queue.waiting.find(shares.fits);
    if (first === undefined) return;
    if (this.#cachedPrefix(first) > 0) return await this.#admitCached(first);
    // "aligned" batches only rows of one cache length: the running batch's, or else the first
    // waiting sequence's. The others keep their place in the queue.
    const aligned = batching === "aligned";
    let required = aligned && this.#batch.rows.length > 0 ? this.#batch.rows[0].length : undefined;
    const admitted: ScheduledSequence[] = [];
    let longest = 0;
    for (const seq of this.#queue.waiting) {
      if (admitted.length >= room) break;
      if (!shares.fits(seq)) continue;
      if (this.#cachedPrefix(seq) > 0) continue; // prefilled alone, from its cached prefix
      if (aligned) {
        required ??= seq.promptIds.length;
        if (seq.promptIds.length !== required) continue;
      }
      const len = Math.max(longest, seq.promptIds.length);
      if (admitted.length > 0 && len * (admitted.length + 1) > this.#options.maxBatchTokens) break;
      admitted.push(seq);
      shares.hold(seq);
      longest = len;
    }
    if (admitted.length === 0) return;
    const chunk = this.#options.prefillChunk;
    if (
      chunk !== undefined && batching === "padded" && this.#batch.rows.length > 0 &&
      longest * admitted.length > chunk
    ) {
      // Others are decoding: prefill at most `chunk` tokens before their next step. A long prompt
      // goes alone, in chunks; else as many short ones as fit; the rest keep their place.
      if (admitted[0].promptIds.length > chunk) {
        this.#take([admitted[0]]);
        this.#prefixes?.countLookup(admitted[0].promptIds.length);
        return await this.#continueJob(
          startPrefill(this.#plan, [admitted[0]], admitted[0].promptIds.length),
        );
      }
      let fit = 1;
      longest = admitted[0].promptIds.length;
      while (fit < admitted.length) {
        const len = Math.max(longest, admitted[fit].promptIds.length);
        if (len * (fit + 1) > chunk) break;
        longest = len;
        fit++;
      }
      admitted.length = fit;
    }
    this.#take(admitted);
    for (const seq of admitted) this.#prefixes?.countLookup(seq.promptIds.length);
    this.#batch.join(await this.#prefillIsolated(admitted, longest));
  }

  /** Each request's share of the batch (_request_queue.ts), the running and prefilling held. */
  #shares(): Shares {
    const shares = this.#queue.shares(this.#most());
    for (const r of this.#batch.rows) shares.hold(r.seq);
    for (const seq of this.#job?.seqs ?? []) shares.hold(seq);
    return shares;
  }

  /** Whether a waiting sequence could start now (the shares are counted only when one waits). */
  #admissible(): boolean {
    return this.#queue.waiting.length > 0 && this.#queue.waiting.some(this.#shares().fits);
  }

  /** Moves `seqs` from the queue to the admission under way. */
  #take(seqs: readonly ScheduledSequence[]): void {
    const taken = new Set(seqs);
    this.#queue.filter((seq) => !taken.has(seq));
    this.#taken.push(...seqs);
  }

  /**
   * Prompt tokens of `seq` the prefix cache holds and the model may start from (0 when it may not
   * join the running batch that way). At least the last prompt token is always prefilled, for its
   * logits.
   */
  #cachedPrefix(seq: ScheduledSequence): number {
    if (this.#prefixes === null) return 0;
    // An aligned batch takes only rows of its own length, in one model call.
    if (this.#plan.batching === "aligned" && this.#batch.rows.length > 0) {
      if (seq.promptIds.length !== this.#batch.rows[0].length) return 0;
    }
    return this.#prefixes.peek(seq.promptIds, seq.promptIds.length - 1);
  }

  /** Prefills `seq` alone from its cached prefix (in chunks while others decode, as any job). */
  async #admitCached(seq: ScheduledSequence): Promise<void> {
    this.#take([seq]);
    const hit = this.#prefixes!.lookup(seq.promptIds, seq.promptIds.length - 1)!;
    seq.cachedTokens = hit.tokens;
    const job = startPrefill(this.#plan, [seq], seq.promptIds.length);
    job.from = hit.tokens;
    job.cache = hit.cache;
    if (this.#plan.batching !== "padded" && this.#batch.rows.length > 0) {
      // Rows of an aligned batch must stay the same length: the rest of the prompt in one call.
      let done: { logits: Float32Array; vocab: number } | null;
      try {
        done = await this.#prefillPart(job, Infinity);
      } catch (err) {
        seq.fail(err);
        return;
      }
      return this.#batch.join([{ seqs: [seq], ...done!, cache: job.cache }]);
    }
    await this.#continueJob(job);
  }

  /**
   * Runs the next chunk of the prefill under way (all that is left once nothing else decodes) and,
   * when the prompt is done, merges it into the batch.
   */
  async #continueJob(job: PrefillJob<ScheduledSequence>): Promise<void> {
    this.#job = null;
    if (job.seqs.every(dropIfAborted)) return;
    const most = this.#batch.rows.length > 0
      ? Math.max(1, Math.floor(this.#options.prefillChunk! / job.seqs.length))
      : Infinity;
    let done: { logits: Float32Array; vocab: number } | null;
    try {
      done = await this.#prefillPart(job, most);
    } catch (err) {
      for (const seq of job.seqs) seq.fail(err);
      return;
    }
    if (done === null) this.#job = job;
    else this.#batch.join([{ seqs: job.seqs, ...done, cache: job.cache }]);
  }

  /**
   * Prefills `seqs` together; when that model call fails, prefills each alone, so a row the model
   * fails on fails only its own sequence, not the others batched with it.
   */
  async #prefillIsolated(seqs: ScheduledSequence[], longest: number): Promise<Prefilled[]> {
    try {
      return [{ seqs, ...await this.#prefill(seqs, longest) }];
    } catch (err) {
      if (seqs.length === 1) {
        seqs[0].fail(err);
        return [];
      }
    }
    const parts: Prefilled[] = [];
    for (const seq of seqs) {
      try {
        parts.push({ seqs: [seq], ...await this.#prefill([seq], seq.promptIds.length) });
      } catch (err) {
        seq.fail(err);
      }
    }
    return parts;
  }

  /**
   * Runs the prompts of `seqs` (left-padded to `longest`) and returns the logits of each row's
   * last prompt token (`[batch, vocab]`) and the cache.
   */
  async #prefill(
    seqs: ScheduledSequence[],
    longest: number,
  ): Promise<{ logits: Float32Array; vocab: number; cache: CacheTensor[] }> {
    const job = startPrefill(this.#plan, seqs, longest);
    const done = await this.#prefillPart(job, Infinity);
    return { ...done!, cache: job.cache };
  }

  /** Runs up to `most` more prompt positions of `job` (prefill.ts). */
  #prefillPart(
    job: PrefillJob,
    most: number,
  ): Promise<{ logits: Float32Array; vocab: number } | null> {
    const maxLogits = this.#options.maxPrefillLogits ?? DEFAULT_MAX_PREFILL_LOGITS;
    return runPrefill(this.#session, this.#plan, job, { most, maxLogits });
  }

  /** Most sequences that may decode at once. */
  #most(): number {
    return this.#plan.batching === "single" ? 1 : this.#options.maxSequences;
  }

  /** Whether the next steps may run as a decode loop in the model worker. */
  #loopable(): boolean {
    if (!this.#session.decodeLoop || this.#options.decodeInWorker === false) return false;
    if (this.#job || (this.#batch.rows.length < this.#most() && this.#admissible())) {
      return false; // a prefill goes between this step and the next
    }
    return this.#batch.rows.every((r) =>
      r.seq.loopSampler !== undefined && r.seq.acceptToken !== undefined &&
      r.seq.restoreSampler !== undefined && (r.seq.remainingTokens ?? 0) > 0
    );
  }
}

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

import { CancelledError, RateLimitError, ValidationError } from "../../core/errors.ts";
import { sleep } from "../../core/sleep.ts";
import { type ModelSession, type PlainTensor, runScored, type ScoredRun } from "../onnx_session.ts";
import type { LogitsScoring } from "../decoding/log_softmax.ts";
import { decoderFeeds, type DecoderPlan } from "../families/decoder_family.ts";
import { assembleCache, type CacheSlice, type CacheTensor, leftPaddedMask } from "./kv_cache.ts";
import { lastPositions, type PrefillJob, runPrefill, startPrefill, toCache } from "./prefill.ts";
import {
  type CachedRows,
  DEFAULT_PREFIX_CACHE_BYTES,
  PREFIX_BLOCK_TOKENS,
  PrefixCache,
  type PrefixCacheStats,
} from "./prefix_cache.ts";
import type { LoopSampler } from "../decode_loop.ts";
import type { SamplerState } from "../decoding/sampler.ts";

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
  /** Prompt tokens found in the prefix cache (set by the scheduler before its first token). */
  cachedTokens?: number;
  /**
   * Its sampler for the model worker to choose its tokens with (decode_loop.ts), or null when
   * only {@link accept} can; then {@link acceptToken}, {@link restoreSampler} and
   * {@link remainingTokens} are there too.
   */
  loopSampler?(): LoopSampler | null;
  /** Tokens it may still generate. */
  readonly remainingTokens?: number;
  /** As {@link accept}, for a token the worker chose with its {@link loopSampler}. */
  acceptToken?(id: number): number | null;
  /** Continues its sampler from the worker's copy at the end of a loop. */
  restoreSampler?(state: SamplerState): void;
}

/** Limits of the scheduler. */
export interface SchedulerOptions {
  /** Most sequences decoding at once; 1 switches batching off. */
  maxSequences: number;
  /** Most prompt tokens (padded) prefilled in one model call. */
  maxBatchTokens: number;
  /** Most sequences waiting for a place; more are refused with a 429. */
  maxQueue: number;
  /**
   * Most logits one prefill call may return, for models that compute them for every prompt
   * position (no `num_logits_to_keep`): longer prompts are prefilled in chunks through the cache.
   */
  maxPrefillLogits?: number;
  /**
   * Most prompt tokens (padded, all rows of the call together) prefilled between two decode steps
   * while other sequences decode; longer prompts are prefilled through the cache in chunks this
   * size, interleaved with the running batch's steps. Unset: every prefill runs whole. Applies to
   * `padded` batching only (an `aligned` batch cannot take a row whose length moved on).
   */
  prefillChunk?: number;
  /**
   * Let the model worker decode batches by itself, step after step, sampling each row with a copy
   * of its sampler and posting only token ids (decode_loop.ts), when no row needs this thread to
   * choose (constraints) or logprobs. Default true. A WebGPU session (in this thread) runs the same
   * loop in this thread, keeping the cache on the GPU between steps.
   */
  decodeInWorker?: boolean;
  /**
   * Bytes of key/value cache kept across requests for prompts that start the same way
   * (prefix_cache.ts); 0 switches the prefix cache off. Default {@link DEFAULT_PREFIX_CACHE_BYTES}.
   * Off for models batched `single` (their activations' scale depends on every token of a call).
   */
  prefixCacheBytes?: number;
}

/** 16M floats (64 MB) of prefill logits per model call unless told otherwise. */
export const DEFAULT_MAX_PREFILL_LOGITS = 1 << 24;

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
  /** The prefix cache's counters, when it is on. */
  prefixCache?: PrefixCacheStats;
}

/** Sequences prefilled in one model call: row i of the logits and cache is `seqs[i]`. */
interface Prefilled {
  seqs: ScheduledSequence[];
  logits: Float32Array;
  vocab: number;
  cache: CacheTensor[];
}

interface Running {
  seq: ScheduledSequence;
  /** Tokens in the cache. */
  length: number;
  /** Token to feed at the next step. */
  next: number;
  /** Tokens generated and fed so far (the cache holds the prompt, then these). */
  fed: number[];
}

/** Runs many sequences through one model with continuous batching. */
export class DecodeScheduler {
  #session: ModelSession;
  #plan: DecoderPlan;
  #options: SchedulerOptions;
  /** Ordered by (place within its request, request arrival): round-robin over requests. */
  #waiting: ScheduledSequence[] = [];
  /** Each queued or running sequence's request and its place in that request. */
  #requestOf = new WeakMap<ScheduledSequence, { request: number; place: number }>();
  #requests = 0;
  #running: Running[] = [];
  /** Cache of the running batch; row i belongs to #running[i]. */
  #cache: CacheTensor[] | null = null;
  /** The scheduling loop under way; `#looping` says whether it still runs. */
  #loop: Promise<void> = Promise.resolve();
  #looping = false;
  /** The chunked prefill under way, if any (one prompt; the queue waits behind it). */
  #job: PrefillJob<ScheduledSequence> | null = null;
  /** Ends the decode loop under way (the worker finishes its current step first). */
  #stopLoop: (() => void) | null = null;
  #steps = 0;
  #batchSizes = new Map<number, number>();
  #prefixes: PrefixCache | null;
  /** Sequences the admission under way took from the queue: failed with it should it throw. */
  #taken: ScheduledSequence[] = [];
  /** Settles when the last {@link runAside} call queued is done. */
  #asideTurn: Promise<void> = Promise.resolve();
  /** When the last {@link runAside} call ended and how long it ran (ms). */
  #lastAside = { end: 0, ms: 0 };
  /** Caches to keep in the prefix cache: copied while the model runs its next call. */
  #toRemember: { ids: readonly number[]; rows: CachedRows }[] = [];

  constructor(session: ModelSession, plan: DecoderPlan, options: SchedulerOptions) {
    this.#session = session;
    this.#plan = plan;
    this.#options = options;
    const bytes = options.prefixCacheBytes ?? DEFAULT_PREFIX_CACHE_BYTES;
    this.#prefixes = bytes > 0 && plan.batching !== "single"
      ? new PrefixCache(bytes, PREFIX_BLOCK_TOKENS, session.deviceCopies)
      : null;
  }

  /** Current load, for metrics and health. */
  stats(): SchedulerStats {
    return {
      running: this.#running.length + (this.#job?.seqs.length ?? 0),
      queueDepth: this.#waiting.length,
      steps: this.#steps,
      batchSizes: [...this.#batchSizes],
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
    if (this.#waiting.length + count > maxQueue) {
      throw new RateLimitError(
        `the server is busy: ${this.#waiting.length} sequences are already waiting; retry shortly`,
        { retryAfterSeconds: 1 },
      );
    }
  }

  /** Queues the sequences of one request, all or none (refused as {@link checkRoom} says). */
  submitAll(seqs: readonly ScheduledSequence[]): void {
    this.checkRoom(seqs.length);
    const request = ++this.#requests;
    let at = 0;
    seqs.forEach((seq, place) => {
      this.#requestOf.set(seq, { request, place });
      // After every sequence of an earlier or equal place (the new request arrived last).
      while (at < this.#waiting.length && this.#placeOf(this.#waiting[at]) <= place) at++;
      this.#waiting.splice(at++, 0, seq);
    });
    // A decode loop ends for them when they can join (else at the step a sequence leaves).
    if (this.#running.length < this.#most()) this.#stopLoop?.();
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
      this.#stopLoop?.();
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
      while (this.#waiting.length > 0 || this.#running.length > 0 || this.#job) {
        try {
          await this.#admit();
          this.#taken = [];
          if (this.#running.length > 0) {
            if (!(this.#loopable() && await this.#loopSteps())) await this.#step();
          }
        } catch (err) {
          // A failed model call fails the sequences it was running, and a failed admission those
          // it took; the loop goes on for the others.
          const job = new Set(this.#job?.seqs);
          for (const seq of this.#taken) if (!job.has(seq)) seq.fail(err);
          for (const r of this.#running) r.seq.fail(err);
          this.#taken = [];
          this.#running = [];
          this.#cache = null;
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
    this.#rememberNow(); // lookups below see every sequence so far
    if (this.#job) return await this.#continueJob(this.#job);
    this.#waiting = this.#waiting.filter((seq) => !dropIfAborted(seq));
    const { batching } = this.#plan;
    const room = this.#most() - this.#running.length;
    if (room <= 0 || this.#waiting.length === 0) return;
    const shares = this.#shares();
    const first = this.#waiting.find(shares.fits);
    if (first === undefined) return;
    if (this.#cachedPrefix(first) > 0) return await this.#admitCached(first);
    // "aligned" batches only rows of one cache length: the running batch's, or else the first
    // waiting sequence's. The others keep their place in the queue.
    const aligned = batching === "aligned";
    let required = aligned && this.#running.length > 0 ? this.#running[0].length : undefined;
    const admitted: ScheduledSequence[] = [];
    let longest = 0;
    for (const seq of this.#waiting) {
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
      chunk !== undefined && batching === "padded" && this.#running.length > 0 &&
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
    this.#join(await this.#prefillIsolated(admitted, longest));
  }

  /** A sequence's place within its request (0 for the first). */
  #placeOf(seq: ScheduledSequence): number {
    return this.#requestOf.get(seq)?.place ?? 0;
  }

  /**
   * Whether a waiting sequence may start now: its request holds less than its share of the batch
   * (three quarters of it, so other requests always find room). `hold` counts one more started.
   */
  #shares(): { fits(seq: ScheduledSequence): boolean; hold(seq: ScheduledSequence): void } {
    const most = this.#most();
    const share = most - Math.floor(most / 4);
    const held = new Map<number, number>();
    const requestOf = (seq: ScheduledSequence) => this.#requestOf.get(seq)?.request ?? 0;
    const hold = (seq: ScheduledSequence) => {
      held.set(requestOf(seq), (held.get(requestOf(seq)) ?? 0) + 1);
    };
    for (const r of this.#running) hold(r.seq);
    for (const seq of this.#job?.seqs ?? []) hold(seq);
    return { fits: (seq) => (held.get(requestOf(seq)) ?? 0) < share, hold };
  }

  /** Whether a waiting sequence could start now (the shares are counted only when one waits). */
  #admissible(): boolean {
    return this.#waiting.length > 0 && this.#waiting.some(this.#shares().fits);
  }

  /** Moves `seqs` from the queue to the admission under way. */
  #take(seqs: readonly ScheduledSequence[]): void {
    const taken = new Set(seqs);
    this.#waiting = this.#waiting.filter((seq) => !taken.has(seq));
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
    if (this.#plan.batching === "aligned" && this.#running.length > 0) {
      if (seq.promptIds.length !== this.#running[0].length) return 0;
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
    if (this.#plan.batching !== "padded" && this.#running.length > 0) {
      // Rows of an aligned batch must stay the same length: the rest of the prompt in one call.
      let done: { logits: Float32Array; vocab: number } | null;
      try {
        done = await this.#prefillPart(job, Infinity);
      } catch (err) {
        seq.fail(err);
        return;
      }
      return this.#join([{ seqs: [seq], ...done!, cache: job.cache }]);
    }
    await this.#continueJob(job);
  }

  /** Samples each prefilled row's first token and merges the rows that go on into the batch. */
  #join(parts: Prefilled[]): void {
    const joined: { run: Running; slice: CacheSlice }[] = [];
    for (const { seqs, logits, vocab, cache } of parts) {
      seqs.forEach((seq, row) => {
        const length = seq.promptIds.length;
        this.#remember(seq.promptIds, {
          layers: cache,
          row,
          start: cache[0].dims[2] - length,
        });
        const next = settle(seq, () => seq.accept(logits.subarray(row * vocab, (row + 1) * vocab)));
        if (next === null) return;
        joined.push({ run: { seq, length, next, fed: [] }, slice: { layers: cache, row, length } });
      });
    }
    if (joined.length === 0) return;
    const current = this.#running.map((run, row) => ({
      layers: this.#cache!,
      row,
      length: run.length,
    }));
    this.#cache = assembleCache([...current, ...joined.map((j) => j.slice)]);
    this.#running.push(...joined.map((j) => j.run));
  }

  /**
   * Runs the next chunk of the prefill under way (all that is left once nothing else decodes) and,
   * when the prompt is done, merges it into the batch.
   */
  async #continueJob(job: PrefillJob<ScheduledSequence>): Promise<void> {
    this.#job = null;
    if (job.seqs.every(dropIfAborted)) return;
    const most = this.#running.length > 0
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
    else this.#join([{ seqs: job.seqs, ...done, cache: job.cache }]);
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

  /**
   * Keeps a sequence's cache in the prefix cache: later, while the model runs (the copy is off the
   * path of the first token), but before any lookup. `rows` must not be fed to the model since.
   */
  #remember(ids: readonly number[], rows: CachedRows): void {
    if (this.#prefixes) this.#toRemember.push({ ids, rows });
  }

  #rememberNow(): void {
    for (const { ids, rows } of this.#toRemember.splice(0)) this.#prefixes!.insert(ids, rows);
  }

  /** Remembers now when a cache to remember is the batch's (fed to the model next: moved away). */
  #rememberFedNow(): void {
    if (this.#toRemember.some(({ rows }) => rows.layers[0] === this.#cache?.[0])) {
      this.#rememberNow();
    }
  }

  /** Most sequences that may decode at once. */
  #most(): number {
    return this.#plan.batching === "single" ? 1 : this.#options.maxSequences;
  }

  /** Whether the next steps may run as a decode loop in the model worker. */
  #loopable(): boolean {
    if (!this.#session.decodeLoop || this.#options.decodeInWorker === false) return false;
    if (this.#job || (this.#running.length < this.#most() && this.#admissible())) {
      return false; // a prefill goes between this step and the next
    }
    return this.#running.every((r) =>
      r.seq.loopSampler !== undefined && r.seq.acceptToken !== undefined &&
      r.seq.restoreSampler !== undefined && (r.seq.remainingTokens ?? 0) > 0
    );
  }

  /** Drops cancelled sequences before a step, so cancellation costs at most one step. */
  #dropAborted(): void {
    if (this.#running.some((r) => r.seq.signal?.aborted)) {
      this.#keep(this.#running.map((r) => !dropIfAborted(r.seq)));
    }
  }

  /** The feeds of one decode step for every running sequence (the cache is handed over). */
  #stepFeeds(): Record<string, PlainTensor> {
    const batch = this.#running.length;
    const length = this.#cache![0].dims[2];
    const ids = BigInt64Array.from(this.#running, (r) => BigInt(r.next));
    const start = this.#plan.positionStart;
    const positions = BigInt64Array.from(this.#running, (r) => BigInt(r.length + start));
    const mask = leftPaddedMask(this.#running.map((r) => r.length), length, 1);
    return decoderFeeds(this.#plan, {
      ids,
      mask: mask.data,
      positions,
      batch,
      length: 1,
      pastLength: length,
      past: this.#cache!,
    });
  }

  #countStep(batch: number): void {
    this.#steps++;
    this.#batchSizes.set(batch, (this.#batchSizes.get(batch) ?? 0) + 1);
  }

  /** One decode step for every running sequence. */
  async #step(): Promise<void> {
    this.#dropAborted();
    if (this.#running.length === 0) return;
    this.#rememberFedNow();
    const running = this.#session.run(this.#stepFeeds());
    this.#rememberNow();
    const out = await running;
    this.#countStep(this.#running.length);
    this.#cache = this.#plan.cache.presentNames.map((n) => toCache(out[n]));
    const { logits, vocab } = lastPositions(out.logits);
    const keep = this.#running.map((r, row) => {
      r.length++;
      r.fed.push(r.next);
      const next = settle(
        r.seq,
        () => r.seq.accept(logits.subarray(row * vocab, (row + 1) * vocab)),
      );
      if (next === null) return false;
      r.next = next;
      return true;
    });
    if (keep.includes(false)) this.#keep(keep);
  }

  /**
   * Decode steps run by the model worker on its own (decode_loop.ts), each row's token chosen
   * there with a copy of its sampler: each step's tokens are taken here while the worker already
   * runs the next. The loop ends when a sequence finishes or is cancelled, when a waiting one can
   * join, or at the fewest tokens a row may still generate; then the cache and the samplers'
   * states come back. False (nothing run) when a row's sampler must stay in this thread.
   */
  async #loopSteps(): Promise<boolean> {
    this.#dropAborted();
    if (this.#running.length === 0) return true;
    const running = this.#running;
    const samplers: LoopSampler[] = [];
    for (const r of running) {
      const sampler = r.seq.loopSampler!();
      if (sampler === null) return false;
      samplers.push(sampler);
    }
    const { pastNames, presentNames } = this.#plan.cache;
    this.#rememberFedNow();
    const loop = this.#session.decodeLoop!({
      feeds: this.#stepFeeds(),
      pastNames,
      presentNames,
      maxSteps: Math.min(...running.map((r) => r.seq.remainingTokens!)),
      samplers,
    });
    this.#cache = null; // in the worker until the loop ends
    this.#rememberNow();
    const stop = () => loop.stop();
    this.#stopLoop = stop;
    const signals = running.flatMap((r) => r.seq.signal ?? []);
    for (const signal of signals) signal.addEventListener("abort", stop);
    const alive = running.map(() => true);
    // Steps the worker ran on a row after it finished (their columns follow the row's tokens).
    const after = running.map(() => 0);
    try {
      for (let tokens = await loop.next(); tokens !== null; tokens = await loop.next()) {
        this.#countStep(running.length);
        running.forEach((r, row) => {
          if (!alive[row]) return void after[row]++; // finished at an earlier step of this loop
          r.length++;
          r.fed.push(r.next);
          const next = settle(r.seq, () => r.seq.acceptToken!(tokens[row]));
          if (next === null) alive[row] = false;
          else r.next = next;
        });
        if (alive.includes(false)) stop();
      }
      const end = await loop.end;
      this.#cache = presentNames.map((n) => toCache(end.cache[n]));
      running.forEach((r, row) => {
        if (alive[row]) {
          const restore = () => (r.seq.restoreSampler!(end.samplers[row]), true);
          alive[row] = settle(r.seq, restore) ?? false;
        }
      });
    } finally {
      this.#stopLoop = null;
      for (const signal of signals) signal.removeEventListener("abort", stop);
      // Left by a throw: the worker's loop ends before the session runs anything else.
      stop();
      await loop.end.catch(() => {});
    }
    if (alive.includes(false)) this.#keep(alive, after);
    return true;
  }

  /**
   * Keeps the running sequences whose flag is true, compacting the cache; the others' caches go
   * to the prefix cache (`after[row]`: columns after a row's own, from loop steps past its end).
   */
  #keep(flags: boolean[], after?: readonly number[]): void {
    const slices: CacheSlice[] = [];
    const running: Running[] = [];
    const width = this.#cache![0].dims[2];
    this.#running.forEach((r, row) => {
      if (!flags[row]) {
        const start = width - (after?.[row] ?? 0) - r.length;
        this.#remember([...r.seq.promptIds, ...r.fed], {
          layers: this.#cache!,
          row,
          start,
        });
        return;
      }
      running.push(r);
      slices.push({ layers: this.#cache!, row, length: r.length });
    });
    this.#running = running;
    this.#cache = slices.length > 0 ? assembleCache(slices) : null;
  }
}

/**
 * Runs a sequence's own code (sampling, streaming): a throw fails that sequence only, which then
 * leaves the batch as if finished (null), and the others go on.
 */
function settle<T>(seq: ScheduledSequence, f: () => T | null): T | null {
  try {
    return f();
  } catch (err) {
    seq.fail(err);
    return null;
  }
}

function dropIfAborted(seq: ScheduledSequence): boolean {
  if (!seq.signal?.aborted) return false;
  seq.fail(new CancelledError());
  return true;
}

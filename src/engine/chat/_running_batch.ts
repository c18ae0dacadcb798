/**
 * The decode side of the scheduler (decode_scheduler.ts): the sequences decoding together, their
 * key/value cache, and the decode steps run for them, in this thread or as a loop in the model
 * worker (decode_loop.ts). The cache is rebuilt only when the batch changes (kv_cache.ts); a
 * sequence's cache goes to the prefix cache when it joins and when it leaves.
 *
 * @module
 */

import { CancelledError } from "../../core/errors.ts";
import type { ModelSession, PlainTensor } from "../onnx_session.ts";
import { decoderFeeds, type DecoderPlan } from "../families/decoder_family.ts";
import type { LoopSampler } from "../decode_loop.ts";
import { assembleCache, type CacheSlice, type CacheTensor, leftPaddedMask } from "./kv_cache.ts";
import { lastPositions, toCache } from "./prefill.ts";
import type { CachedRows, PrefixCache } from "./prefix_cache.ts";
import type { ScheduledSequence } from "./scheduler_types.ts";

/** Sequences prefilled in one model call: row i of the logits and cache is `seqs[i]`. */
export interface Prefilled {
  seqs: ScheduledSequence[];
  logits: Float32Array;
  vocab: number;
  cache: CacheTensor[];
}

/** A sequence of the running batch. */
export interface Running {
  seq: ScheduledSequence;
  /** Tokens in the cache. */
  length: number;
  /** Token to feed at the next step. */
  next: number;
  /** Tokens generated and fed so far (the cache holds the prompt, then these). */
  fed: number[];
}

/** The sequences decoding together and their cache; the scheduler owns one. */
export class RunningBatch {
  #session: ModelSession;
  #plan: DecoderPlan;
  #prefixes: PrefixCache | null;
  #rows: Running[] = [];
  /** Cache of the running batch; row i belongs to #rows[i]. */
  #cache: CacheTensor[] | null = null;
  /** Ends the decode loop under way (the worker finishes its current step first). */
  #stopLoop: (() => void) | null = null;
  #steps = 0;
  #batchSizes = new Map<number, number>();
  /** Caches to keep in the prefix cache: copied while the model runs its next call. */
  #toRemember: { ids: readonly number[]; rows: CachedRows }[] = [];

  constructor(session: ModelSession, plan: DecoderPlan, prefixes: PrefixCache | null) {
    this.#session = session;
    this.#plan = plan;
    this.#prefixes = prefixes;
  }

  /** The sequences decoding now, in the cache's row order. */
  get rows(): readonly Running[] {
    return this.#rows;
  }

  /** Decode steps run so far. */
  get steps(): number {
    return this.#steps;
  }

  /** Decode steps run so far by batch size. */
  get batchSizes(): ReadonlyMap<number, number> {
    return this.#batchSizes;
  }

  /** Ends the decode loop under way, if any, after its current step. */
  stopLoop(): void {
    this.#stopLoop?.();
  }

  /** Fails every running sequence with `err` and empties the batch (its model call failed). */
  failAll(err: unknown): void {
    for (const r of this.#rows) r.seq.fail(err);
    this.#rows = [];
    this.#cache = null;
  }

  /** Samples each prefilled row's first token and merges the rows that go on into the batch. */
  join(parts: Prefilled[]): void {
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
    const current = this.#rows.map((run, row) => ({
      layers: this.#cache!,
      row,
      length: run.length,
    }));
    this.#cache = assembleCache([...current, ...joined.map((j) => j.slice)]);
    this.#rows.push(...joined.map((j) => j.run));
  }

  /**
   * Keeps a sequence's cache in the prefix cache: later, while the model runs (the copy is off the
   * path of the first token), but before any lookup. `rows` must not be fed to the model since.
   */
  #remember(ids: readonly number[], rows: CachedRows): void {
    if (this.#prefixes) this.#toRemember.push({ ids, rows });
  }

  /** Keeps in the prefix cache every cache left to remember. */
  rememberNow(): void {
    for (const { ids, rows } of this.#toRemember.splice(0)) this.#prefixes!.insert(ids, rows);
  }

  /** Remembers now when a cache to remember is the batch's (fed to the model next: moved away). */
  #rememberFedNow(): void {
    if (this.#toRemember.some(({ rows }) => rows.layers[0] === this.#cache?.[0])) {
      this.rememberNow();
    }
  }

  /** Drops cancelled sequences before a step, so cancellation costs at most one step. */
  #dropAborted(): void {
    if (this.#rows.some((r) => r.seq.signal?.aborted)) {
      this.#keep(this.#rows.map((r) => !dropIfAborted(r.seq)));
    }
  }

  /** The feeds of one decode step for every running sequence (the cache is handed over). */
  #stepFeeds(): Record<string, PlainTensor> {
    const batch = this.#rows.length;
    const length = this.#cache![0].dims[2];
    const ids = BigInt64Array.from(this.#rows, (r) => BigInt(r.next));
    const start = this.#plan.positionStart;
    const positions = BigInt64Array.from(this.#rows, (r) => BigInt(r.length + start));
    const mask = leftPaddedMask(this.#rows.map((r) => r.length), length, 1);
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
  async step(): Promise<void> {
    this.#dropAborted();
    if (this.#rows.length === 0) return;
    this.#rememberFedNow();
    const running = this.#session.run(this.#stepFeeds());
    this.rememberNow();
    const out = await running;
    this.#countStep(this.#rows.length);
    this.#cache = this.#plan.cache.presentNames.map((n) => toCache(out[n]));
    const { logits, vocab } = lastPositions(out.logits);
    const keep = this.#rows.map((r, row) => {
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
  async loopSteps(): Promise<boolean> {
    this.#dropAborted();
    if (this.#rows.length === 0) return true;
    const running = this.#rows;
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
    this.rememberNow();
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
    this.#rows.forEach((r, row) => {
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
    this.#rows = running;
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

/** Fails `seq` as cancelled when its signal has aborted; says whether it did. */
export function dropIfAborted(seq: ScheduledSequence): boolean {
  if (!seq.signal?.aborted) return false;
  seq.fail(new CancelledError());
  return true;
}

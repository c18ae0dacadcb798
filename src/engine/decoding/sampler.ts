/**
 * Token selection for one sequence of a decode batch: penalties, temperature, top-k, top-p, a
 * seeded draw, and OpenAI-style log-probabilities. Pure TypeScript over a Float32Array logits row.
 *
 * Pipeline per step (the order of Hugging Face's `generate` and vLLM):
 * 1. copy the row into a shared scratch buffer (the caller's row is never mutated);
 * 2. repetition penalty, then presence/frequency penalties ({@link LogitsProcessor}), then
 *    `logitBias`, and the end tokens masked while fewer than `minTokens` were generated;
 * 3. `temperature === 0`: greedy argmax (ties go to the lowest id), steps 4-6 skipped;
 * 4. divide by `temperature`; drop tokens under `minP` times the best one's probability;
 *    5. keep the `topK` best tokens (exactly k; ties by lowest id);
 * 6. keep the smallest best-first prefix whose probability mass reaches `topP` (at least one);
 * 7. draw from what is left with the sequence's {@link Rng}.
 *
 * Log-probabilities: with `logprobsMode: "raw"` (the default) they are the log-softmax of the
 * model's raw logits, before penalties, temperature and truncation. That is what vLLM reports by
 * default (`raw_logprobs`) and matches OpenAI's API, whose logprobs do not change with temperature.
 * `logprobsMode: "processed"` reports the distribution actually sampled from instead (after
 * penalties, temperature, top-k and top-p; greedy uses temperature 1 and no truncation). Tokens
 * with zero probability are reported as -9999, OpenAI's floor, since JSON has no -Infinity.
 *
 * Cost per step is O(vocabulary) with small constants: top-k uses partial selection and top-p a
 * histogram of scaled logits, so the vocabulary is never fully sorted. Scratch buffers are shared
 * by all samplers of the process, which is safe because `sample()` is synchronous.
 *
 * @module
 */

import { ServiceError, SvcException, ValidationError } from "../../core/errors.ts";
import type { TokenFilter } from "../constrained/token_constraint.ts";
import type { SamplingParams } from "../../core/inference_types.ts";
import { LogitsProcessor } from "./logits_processor.ts";
import { Rng } from "./rng.ts";
import { selectTop } from "./_select.ts";

/** Which distribution log-probabilities describe. See the module documentation. */
export type LogprobsMode = "raw" | "processed";

/** One alternative token with its log-probability. */
export interface TokenAlternative {
  tokenId: number;
  logprob: number;
}

/** What {@link SequenceSampler.sample} chose. */
export interface SampleResult {
  tokenId: number;
  /** Log-probability of `tokenId`, present when logprobs were asked for. */
  logprob?: number;
  /** The `topLogprobs` most likely tokens, best first (ties by lowest id), when asked for. */
  topLogprobs?: TokenAlternative[];
}

/**
 * Where a {@link SequenceSampler} is: its generator's position and the tokens it chose, so that
 * a sampler made with the same parameters and options continues exactly (e.g. in the model
 * worker, decode_loop.ts, and back).
 */
export interface SamplerState {
  rng: number[];
  /** Generated token ids and their counts (the penalties' memory). */
  counts: [number, number][];
}

/** Options of {@link SequenceSampler}. */
export interface SequenceSamplerOptions {
  /** Prompt token ids, for the repetition penalty (which covers prompt and generated text). */
  promptTokens?: Iterable<number>;
  /** RNG stream of the seed, e.g. the choice index when `n > 1`, so choices differ. Default 0. */
  stream?: number;
  /** Which distribution logprobs describe. Default `"raw"`. */
  logprobsMode?: LogprobsMode;
  /** Tokens that end the sequence: masked until `minTokens` tokens were generated. */
  endIds?: Iterable<number>;
}

/** OpenAI's floor for the log-probability of an impossible token. */
export const MIN_LOGPROB = -9999;
// exp(-60) ~ 1e-26: tokens this far below the best one cannot matter to a draw.
const NEGLIGIBLE = -60;
// Buckets of scaled logits used to find the top-p cut without sorting the vocabulary.
const BUCKETS = 4096;

let work = new Float32Array(0);
let weights = new Float64Array(0);
let order = new Int32Array(0);
let edgeScratch = new Int32Array(0);
const bucketMass = new Float64Array(BUCKETS);

function ensureScratch(vocab: number): void {
  if (work.length !== vocab) {
    work = new Float32Array(vocab);
    weights = new Float64Array(vocab);
    order = new Int32Array(vocab);
    edgeScratch = new Int32Array(vocab);
  }
}

function argmax(values: Float32Array): number {
  let best = 0;
  let bestValue = values[0];
  for (let i = 1; i < values.length; i++) {
    const v = values[i];
    // Strict >: ties keep the lowest id; a NaN best is replaced by any number.
    if (v > bestValue || (bestValue !== bestValue && v === v)) {
      best = i;
      bestValue = v;
    }
  }
  return best;
}

function maxOf(values: Float32Array): number {
  let m = -Infinity;
  for (let i = 0; i < values.length; i++) if (values[i] > m) m = values[i];
  return m;
}

function clampLogprob(value: number): number {
  return value > MIN_LOGPROB ? value : MIN_LOGPROB;
}

function param(value: number | undefined, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isFinite(value)) {
    throw new ValidationError(`${name} must be a finite number, got ${value}`, { param: name });
  }
  return value;
}

/**
 * Per-sequence sampling state: its parameters, RNG and penalty counts. Create one per sequence
 * (per choice) and call {@link SequenceSampler.sample} once per decode step with that sequence's
 * logits row; the chosen token is recorded for the penalties.
 *
 * @example
 * ```ts
 * import { SequenceSampler } from "./sampler.ts";
 * const sampler = new SequenceSampler({ temperature: 0.7, topP: 0.9, seed: 1, topLogprobs: 2 });
 * const result = sampler.sample(new Float32Array([0.1, 2, 1.5, -1]));
 * console.log(result.tokenId, result.logprob, result.topLogprobs);
 * ```
 */
export class SequenceSampler {
  /** The generator this sequence draws from. */
  readonly rng: Rng;
  /** True when the sequence decodes greedily (`temperature === 0`). */
  readonly greedy: boolean;
  readonly #invTemperature: number;
  readonly #topK: number;
  readonly #topP: number;
  readonly #logprobs: boolean;
  readonly #topLogprobs: number;
  readonly #mode: LogprobsMode;
  readonly #processor: LogitsProcessor;
  readonly #bias: [number, number][];
  readonly #minP: number;
  readonly #minTokens: number;
  readonly #endIds: number[];

  constructor(params: SamplingParams = {}, options: SequenceSamplerOptions = {}) {
    const temperature = param(params.temperature, "temperature", 1);
    if (temperature < 0) {
      throw new ValidationError(
        `temperature must be 0 (greedy) or positive, got ${temperature}`,
        { param: "temperature" },
      );
    }
    const topP = param(params.topP, "top_p", 1);
    if (topP < 0 || topP > 1) {
      throw new ValidationError(`top_p must be between 0 and 1, got ${topP}`, { param: "top_p" });
    }
    const topK = param(params.topK, "top_k", 0);
    if (!Number.isInteger(topK) || topK < -1) {
      throw new ValidationError(
        `top_k must be a whole number >= 0 (0 or -1 turns it off), got ${topK}`,
        { param: "top_k" },
      );
    }
    const topLogprobs = param(params.topLogprobs, "top_logprobs", 0);
    if (!Number.isInteger(topLogprobs) || topLogprobs < 0) {
      throw new ValidationError(
        `top_logprobs must be a whole number >= 0, got ${topLogprobs}`,
        { param: "top_logprobs" },
      );
    }
    const minP = param(params.minP, "min_p", 0);
    if (minP < 0 || minP > 1) {
      throw new ValidationError(`min_p must be between 0 and 1, got ${minP}`, { param: "min_p" });
    }
    this.#minP = minP;
    this.#bias = Object.entries(params.logitBias ?? {}).map(([id, bias]) => [Number(id), bias]);
    this.#minTokens = params.minTokens ?? 0;
    this.#endIds = [...(options.endIds ?? [])];
    this.greedy = temperature === 0;
    this.#invTemperature = this.greedy ? 1 : 1 / temperature;
    this.#topK = topK > 0 ? topK : 0;
    this.#topP = topP;
    this.#topLogprobs = topLogprobs;
    this.#logprobs = params.logprobs === true || topLogprobs > 0;
    this.#mode = options.logprobsMode ?? "raw";
    this.#processor = new LogitsProcessor(params, { promptTokens: options.promptTokens });
    this.rng = new Rng(params.seed, { stream: options.stream ?? 0 });
  }

  /** True when it reports log-probabilities (which the caller then needs with each token). */
  get wantsLogprobs(): boolean {
    return this.#logprobs;
  }

  /** Its state, for a sampler of the same parameters to continue from ({@link restore}). */
  snapshot(): SamplerState {
    return { rng: this.rng.state(), counts: this.#processor.counts() };
  }

  /** Continues from a {@link snapshot} of a sampler made with the same parameters and options. */
  restore(state: SamplerState): void {
    this.rng.restore(state.rng);
    this.#processor.restore(state.counts);
  }

  /** How many tokens this sampler has produced. */
  get generatedCount(): number {
    return this.#processor.generatedCount;
  }

  /**
   * Chooses the next token from `logits` (one row, vocabulary-sized; not modified) and records it
   * for the penalties. Returns its log-probability and the top alternatives when asked for.
   *
   * With a `filter` (constrained decoding) the token is one the filter accepts: the token chosen
   * from the whole row is checked first, and only when refused is the row masked to the allowed
   * tokens and the choice made again (llama.cpp's order). Greedy and plain temperature sampling
   * give exactly the masked distribution this way; with top-k/top-p the cut is taken before the
   * mask when the first choice stands.
   */
  sample(logits: Float32Array, filter?: TokenFilter): SampleResult {
    const vocab = logits.length;
    if (vocab === 0) {
      throw new SvcException("cannot sample from an empty logits row: check the model's output");
    }
    ensureScratch(vocab);
    work.set(logits);
    if (this.#processor.active) this.#processor.apply(work);
    for (const [id, bias] of this.#bias) if (id < vocab) work[id] += bias;
    if (this.generatedCount < this.#minTokens) {
      for (const id of this.#endIds) if (id < vocab) work[id] = -Infinity;
    }

    let { tokenId, kept } = this.#choose(vocab);
    if (filter !== undefined && !filter.accepts(tokenId)) {
      applyMask(work, filter.mask());
      ({ tokenId, kept } = this.#choose(vocab));
      if (!filter.accepts(tokenId)) {
        throw new ServiceError("constrained decoding: the grammar allows no token at this point");
      }
    }
    this.#processor.record(tokenId);

    if (!this.#logprobs) return { tokenId };
    return this.#withLogprobs(logits, tokenId, kept);
  }

  // Greedy, or the draw. When truncated, order[0..kept) holds exactly the `kept` best tokens.
  #choose(vocab: number): { tokenId: number; kept: number } {
    return this.greedy ? { tokenId: argmax(work), kept: vocab } : this.#draw(vocab);
  }

  // Temperature, top-k, top-p and the draw. When truncated, the candidates are in order[0..kept).
  #draw(vocab: number): { tokenId: number; kept: number } {
    const invT = this.#invTemperature;
    const m = maxOf(work);
    if (!Number.isFinite(m)) return { tokenId: argmax(work), kept: vocab }; // all masked, or +inf
    if (this.#minP > 0) {
      // p_i >= minP * p_max  <=>  (logit_i - max) / T >= ln(minP)
      const floor = m + Math.log(this.#minP) / invT;
      for (let i = 0; i < vocab; i++) if (work[i] < floor) work[i] = -Infinity;
    }

    // Weights are stored by token id; truncated candidates are listed best first in `order`.
    if (this.#topK === 0 || this.#topK >= vocab) {
      let total = 0;
      for (let i = 0; i < vocab; i++) total += weights[i] = scaledExp(work[i], m, invT);
      if (this.#topP >= 1) {
        return { tokenId: walk(vocab, this.rng.nextFloat() * total, null), kept: vocab };
      }
      const n = this.#nucleusOverVocab(vocab, total, m);
      return { tokenId: this.#drawRanked(n), kept: n };
    }
    let n = selectTop(work, this.#topK, order);
    let total = 0;
    for (let j = 0; j < n; j++) total += weights[order[j]] = scaledExp(work[order[j]], m, invT);
    if (this.#topP < 1) n = nucleusCut(n, this.#topP * total);
    return { tokenId: this.#drawRanked(n), kept: n };
  }

  #drawRanked(n: number): number {
    let mass = 0;
    for (let j = 0; j < n; j++) mass += weights[order[j]];
    return walk(n, this.rng.nextFloat() * mass, order);
  }

  // Smallest best-first set with mass >= topP * total, without sorting the vocabulary: tokens are
  // bucketed by scaled logit, whole buckets are kept from the top until the one that crosses the
  // target, and only that bucket's members are sorted. Leaves the kept ids in order[0..n).
  #nucleusOverVocab(vocab: number, total: number, max: number): number {
    const invT = this.#invTemperature;
    let lowest = Infinity;
    for (let i = 0; i < vocab; i++) if (weights[i] > 0 && work[i] < lowest) lowest = work[i];
    const span = (max - lowest) * invT;
    const perUnit = span > 0 ? (BUCKETS - 1) / span : 0;
    const bucketOf = (value: number): number => Math.floor((max - value) * invT * perUnit);
    bucketMass.fill(0);
    for (let i = 0; i < vocab; i++) if (weights[i] > 0) bucketMass[bucketOf(work[i])] += weights[i];
    const target = this.#topP * total;
    let boundary = BUCKETS - 1;
    let cumulative = 0;
    for (let b = 0; b < BUCKETS; b++) {
      if (cumulative + bucketMass[b] >= target) {
        boundary = b;
        break;
      }
      cumulative += bucketMass[b];
    }
    let n = 0;
    let edge = 0;
    for (let i = 0; i < vocab; i++) {
      if (!(weights[i] > 0)) continue;
      const b = bucketOf(work[i]);
      if (b < boundary) order[n++] = i;
      else if (b === boundary) edgeScratch[edge++] = i;
    }
    const members = edgeScratch.subarray(0, edge);
    members.sort((a, b) => work[b] - work[a] || a - b);
    for (let j = 0; j < edge; j++) {
      order[n++] = members[j];
      cumulative += weights[members[j]];
      if (cumulative >= target) break;
    }
    return n;
  }

  #withLogprobs(raw: Float32Array, tokenId: number, kept: number): SampleResult {
    const processed = this.#mode === "processed";
    const values = processed ? work : raw;
    const scale = processed ? this.#invTemperature : 1;
    const truncated = processed && kept < values.length;
    // Log of the normalizer over the kept set (whole vocabulary unless processed and truncated).
    let m: number;
    let sum = 0;
    if (truncated) {
      m = maxOf(values); // the best token is always kept
      for (let j = 0; j < kept; j++) sum += Math.exp((values[order[j]] - m) * scale);
    } else {
      m = maxOf(values);
      for (let i = 0; i < values.length; i++) sum += Math.exp((values[i] - m) * scale);
    }
    const logNorm = Math.log(sum);
    const logprobOf = (id: number): number => clampLogprob((values[id] - m) * scale - logNorm);

    const result: SampleResult = { tokenId, logprob: logprobOf(tokenId), topLogprobs: [] };
    if (this.#topLogprobs > 0) {
      const count = selectTop(values, this.#topLogprobs, order);
      for (let j = 0; j < count; j++) {
        const id = order[j];
        // In processed mode the kept set is exactly the best `kept` ranks of the same order.
        const logprob = truncated && j >= kept ? MIN_LOGPROB : logprobOf(id);
        result.topLogprobs!.push({ tokenId: id, logprob });
      }
    }
    return result;
  }
}

// Sets every token the mask leaves out to -Infinity.
function applyMask(values: Float32Array, mask: Uint32Array): void {
  const n = values.length;
  for (let word = 0, base = 0; base < n; word++, base += 32) {
    const bits = mask[word] ?? 0;
    if (bits === 0xffffffff) continue;
    const top = Math.min(32, n - base);
    if (bits === 0) {
      values.fill(-Infinity, base, base + top);
      continue;
    }
    for (let j = 0; j < top; j++) if ((bits & (1 << j)) === 0) values[base + j] = -Infinity;
  }
}

function scaledExp(value: number, max: number, invT: number): number {
  const x = (value - max) * invT;
  return x < NEGLIGIBLE || x !== x ? 0 : Math.exp(x);
}

// Length of the smallest best-first prefix of `order[0..n)` whose weight reaches `target`.
function nucleusCut(n: number, target: number): number {
  let cumulative = 0;
  for (let j = 0; j < n; j++) {
    cumulative += weights[order[j]];
    if (cumulative >= target) return j + 1;
  }
  return n;
}

// Inverse-CDF draw over n candidates: token `ids[j]` when ids are given, else token j.
function walk(n: number, u: number, ids: Int32Array | null): number {
  let cumulative = 0;
  let last = -1;
  for (let j = 0; j < n; j++) {
    const id = ids === null ? j : ids[j];
    const w = weights[id];
    if (!(w > 0)) continue;
    last = id;
    cumulative += w;
    if (u < cumulative) return id;
  }
  // Rounding left u at the very top: the last token with weight wins.
  return last >= 0 ? last : ids === null ? 0 : ids[0];
}

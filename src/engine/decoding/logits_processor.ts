/**
 * Repetition, presence and frequency penalties on one sequence's logits row.
 *
 * - `repetitionPenalty` (Hugging Face semantics, CTRL paper): every distinct token of the prompt
 *   and of the generated text gets its logit divided by the penalty when positive, multiplied by
 *   it when negative. 1 means off.
 * - `presencePenalty` / `frequencyPenalty` (OpenAI semantics, generated tokens only):
 *   `logit -= presence * (count > 0) + frequency * count`. 0 means off.
 *
 * Cost per step is O(distinct tokens seen), never O(vocabulary): the state is a map of counts.
 *
 * @module
 */

import { ValidationError } from "../../core/errors.ts";

/** The penalty settings of one sequence (a subset of `SamplingParams`). */
export interface PenaltyParams {
  /** > 0; 1 (default) is off, > 1 discourages repeats, < 1 encourages them. */
  repetitionPenalty?: number;
  /** Subtracted once from every token generated at least once. Default 0. */
  presencePenalty?: number;
  /** Subtracted per occurrence in the generated tokens. Default 0. */
  frequencyPenalty?: number;
}

/** Options of {@link LogitsProcessor}. */
export interface LogitsProcessorOptions {
  /** The prompt's token ids: the repetition penalty applies to them as well. */
  promptTokens?: Iterable<number>;
}

/**
 * Applies the Hugging Face repetition penalty in place to each distinct id of `tokenIds`
 * (ids outside the row are ignored).
 *
 * @example
 * ```ts
 * import { applyRepetitionPenalty } from "./logits_processor.ts";
 * const row = new Float32Array([2, -2, 1]);
 * applyRepetitionPenalty(row, [0, 1, 1], 2); // row is now [1, -4, 1]
 * ```
 */
export function applyRepetitionPenalty(
  logits: Float32Array,
  tokenIds: Iterable<number>,
  penalty: number,
): void {
  if (penalty === 1) return;
  const seen = tokenIds instanceof Set ? tokenIds as Set<number> : new Set(tokenIds);
  const vocab = logits.length;
  for (const id of seen) {
    if (id < 0 || id >= vocab) continue;
    const value = logits[id];
    logits[id] = value < 0 ? value * penalty : value / penalty;
  }
}

/**
 * Applies OpenAI's presence and frequency penalties in place, given how many times each token id
 * was generated (ids outside the row are ignored).
 *
 * @example
 * ```ts
 * import { applyPresenceFrequencyPenalty } from "./logits_processor.ts";
 * const row = new Float32Array([1, 1, 1]);
 * applyPresenceFrequencyPenalty(row, new Map([[2, 3]]), { presence: 0.5, frequency: 0.1 });
 * // row[2] is now 1 - 0.5 - 0.3 = 0.2
 * ```
 */
export function applyPresenceFrequencyPenalty(
  logits: Float32Array,
  counts: ReadonlyMap<number, number>,
  options: { presence?: number; frequency?: number } = {},
): void {
  const presence = options.presence ?? 0;
  const frequency = options.frequency ?? 0;
  if (presence === 0 && frequency === 0) return;
  const vocab = logits.length;
  for (const [id, count] of counts) {
    if (count <= 0 || id < 0 || id >= vocab) continue;
    logits[id] -= presence + frequency * count;
  }
}

function checkFinite(value: number | undefined, param: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isFinite(value)) {
    throw new ValidationError(`${param} must be a finite number, got ${value}`, { param });
  }
  return value;
}

/**
 * Per-sequence penalty state: remembers the prompt's distinct tokens and how often each token was
 * generated, and applies all configured penalties to a logits row in place.
 *
 * @example
 * ```ts
 * import { LogitsProcessor } from "./logits_processor.ts";
 * const proc = new LogitsProcessor({ frequencyPenalty: 1 }, { promptTokens: [0] });
 * proc.record(1);
 * const row = new Float32Array([0, 5, 0]);
 * proc.apply(row); // row is now [0, 4, 0]: 5 - frequency 1 * count 1
 * ```
 */
export class LogitsProcessor {
  readonly #repetition: number;
  readonly #presence: number;
  readonly #frequency: number;
  // Distinct ids of prompt + generated text, kept only when the repetition penalty is on.
  readonly #seen: Set<number> | null;
  // Generated ids and how often each appeared.
  readonly #counts = new Map<number, number>();
  #generated = 0;

  constructor(params: PenaltyParams = {}, options: LogitsProcessorOptions = {}) {
    this.#repetition = checkFinite(params.repetitionPenalty, "repetition_penalty", 1);
    if (this.#repetition <= 0) {
      throw new ValidationError(
        `repetition_penalty must be greater than 0 (1 turns it off), got ${this.#repetition}`,
        { param: "repetition_penalty" },
      );
    }
    this.#presence = checkFinite(params.presencePenalty, "presence_penalty", 0);
    this.#frequency = checkFinite(params.frequencyPenalty, "frequency_penalty", 0);
    this.#seen = this.#repetition === 1 ? null : new Set(options.promptTokens ?? []);
  }

  /** True when at least one penalty changes logits. */
  get active(): boolean {
    return this.#repetition !== 1 || this.#presence !== 0 || this.#frequency !== 0;
  }

  /** How many tokens were recorded as generated. */
  get generatedCount(): number {
    return this.#generated;
  }

  /** How many times `tokenId` was generated so far. */
  countOf(tokenId: number): number {
    return this.#counts.get(tokenId) ?? 0;
  }

  /** Each generated id and how often it came, to continue elsewhere with {@link restore}. */
  counts(): [number, number][] {
    return [...this.#counts];
  }

  /** Takes the generated tokens {@link counts} returned in place of its own. */
  restore(counts: readonly (readonly [number, number])[]): void {
    this.#counts.clear();
    this.#generated = 0;
    for (const [id, count] of counts) {
      this.#counts.set(id, count);
      this.#generated += count;
      this.#seen?.add(id);
    }
  }

  /** Records one generated token. */
  record(tokenId: number): void {
    this.#generated++;
    this.#counts.set(tokenId, (this.#counts.get(tokenId) ?? 0) + 1);
    this.#seen?.add(tokenId);
  }

  /** Applies the repetition penalty, then presence/frequency, to `logits` in place. */
  apply(logits: Float32Array): void {
    if (this.#seen !== null) applyRepetitionPenalty(logits, this.#seen, this.#repetition);
    applyPresenceFrequencyPenalty(logits, this.#counts, {
      presence: this.#presence,
      frequency: this.#frequency,
    });
  }
}

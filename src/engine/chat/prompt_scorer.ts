/**
 * The chat engine's `promptLogprobs`: each prompt, rendered and checked as a generation's, runs
 * through the model between decode steps (prompt_logprobs.ts); when a generation follows, its
 * cache is then kept in the prefix cache (so `echo` with `logprobs` and `max_tokens` > 0 does not
 * run the prompt twice: its generation prefills only the last prompt token), and its tokens are
 * written out with their text.
 *
 * @module
 */

import type {
  AdmissionLimits,
  PromptInput,
  PromptScoringOptions,
  PromptTokenLogprob,
} from "../../core/inference_types.ts";
import type { Tokenizer } from "../load_model.ts";
import type { DecoderPlan } from "../families/decoder_family.ts";
import { checkPromptTokens } from "../admission_limits.ts";
import type { DecodeScheduler } from "./decode_scheduler.ts";
import { promptParam, type RenderedPrompt } from "./prompt.ts";
import { promptLogprobsOf, toPromptTokenLogprobs } from "./prompt_logprobs.ts";

/** What scoring needs beside the plan and the scheduler. */
export interface PromptScorerOptions {
  tokenizer: Tokenizer;
  limits: Readonly<AdmissionLimits>;
  /** Renders a prompt and checks it as a generation's (`param`: the field it came from). */
  render(input: PromptInput, param: string): Promise<RenderedPrompt>;
  /** Each token's own bytes by id (null: the UTF-8 of its text). */
  tokenBytes(): Promise<readonly (Uint8Array | null)[]>;
  /** Most logits one model call may return. */
  maxLogits: number;
  /**
   * Most positions one model call may run: a prefill chunk, so a request that arrives waits for
   * at most one. Also the quicker size: 128-position calls scored a 1,400-token prompt faster than
   * 341-position ones (bench/RESULTS.md).
   */
  maxChunk: number;
}

/** Scores rendered prompts on one model. */
export class PromptScorer {
  #plan: DecoderPlan;
  #scheduler: DecodeScheduler;
  #options: PromptScorerOptions;
  /** The tokens the tokenizer puts around any text (what it encodes "" as). */
  #around: readonly number[] | undefined;

  constructor(plan: DecoderPlan, scheduler: DecodeScheduler, options: PromptScorerOptions) {
    this.#plan = plan;
    this.#scheduler = scheduler;
    this.#options = options;
  }

  /**
   * Each prompt's tokens with their log-probabilities given the tokens before them (the first
   * has none), and the `topLogprobs` best alternatives. Every prompt counts against the prompt
   * token limit once per choice.
   */
  async score(
    inputs: readonly PromptInput[],
    options: PromptScoringOptions,
  ): Promise<PromptTokenLogprob[][]> {
    const { tokenizer, maxLogits, maxChunk } = this.#options;
    const prompts = await this.#checked(inputs, options.choices);
    const bytes = await this.#options.tokenBytes();
    // One text and byte list per distinct token, shared by every place it appears: a long prompt
    // with 20 alternatives per position names the same few thousand tokens a million times.
    const entries = new Map<number, { token: string; bytes: number[] }>();
    const entry = (id: number) => {
      let known = entries.get(id);
      if (known === undefined) {
        const token = tokenizer.decode([id], { skip_special_tokens: false });
        known = { token, bytes: [...(bytes[id] ?? new TextEncoder().encode(token))] };
        entries.set(id, known);
      }
      return known;
    };
    const out: PromptTokenLogprob[][] = [];
    for (const { input, ids } of prompts) {
      const { rows, cache } = await promptLogprobsOf(
        (feeds, scoring) => this.#scheduler.runAside(feeds, scoring),
        this.#plan,
        ids,
        {
          top: options.topLogprobs,
          maxLogits,
          maxChunk,
          signal: options.signal,
        },
      );
      if (cache !== null && options.generates) {
        this.#scheduler.rememberAside(ids.slice(0, rows.length), cache);
      }
      const tokens = toPromptTokenLogprobs(ids, rows, entry);
      if ("prompt" in input) {
        this.#around ??= tokenizer.encode("");
        const { before, after } = addedAround(ids, this.#around);
        for (let i = 0; i < tokens.length; i++) {
          if (i < before || i >= tokens.length - after) tokens[i].added = true;
        }
      }
      out.push(tokens);
    }
    return out;
  }

  /**
   * Each prompt's token count, checked as {@link score} checks it, running no model (`echo`
   * with `max_tokens: 0` and no `logprobs` answers the prompt alone).
   */
  async check(inputs: readonly PromptInput[], choices?: number): Promise<number[]> {
    return (await this.#checked(inputs, choices)).map((p) => p.ids.length);
  }

  // Renders each prompt, checked as a generation's; all count `choices` times against the limit.
  async #checked(
    inputs: readonly PromptInput[],
    choices = 1,
  ): Promise<{ input: PromptInput; ids: number[] }[]> {
    const prompts: { input: PromptInput; ids: number[] }[] = [];
    for (const input of inputs) {
      const { ids } = await this.#options.render(input, promptParam(input, inputs));
      prompts.push({ input, ids });
    }
    if (inputs.length > 0) {
      const total = prompts.reduce((sum, p) => sum + p.ids.length, 0) * choices;
      checkPromptTokens(this.#options.limits, total, promptParam(inputs[0]));
    }
    return prompts;
  }
}

/**
 * How many of a text prompt's `ids` the tokenizer put before and after its text, `around` being
 * all it puts around a text (`[BOS]`; BERT's `[CLS]` before and `[SEP]` after): the split of
 * `around` that `ids` begins and ends with, most before first (a text may itself end with the
 * BOS token's text).
 *
 * @example
 * ```ts
 * import { addedAround } from "./prompt_scorer.ts";
 * addedAround([1, 7, 8], [1]); // { before: 1, after: 0 }
 * addedAround([101, 7, 102], [101, 102]); // { before: 1, after: 1 }
 * ```
 */
export function addedAround(
  ids: readonly number[],
  around: readonly number[],
): { before: number; after: number } {
  if (ids.length >= around.length) {
    for (let before = around.length; before >= 0; before--) {
      const after = around.length - before;
      const starts = around.slice(0, before).every((id, i) => ids[i] === id);
      const ends = around.slice(before).every((id, i) => ids[ids.length - after + i] === id);
      if (starts && ends) return { before, after };
    }
  }
  return { before: 0, after: 0 };
}

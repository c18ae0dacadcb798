/**
 * Prompts' own log-probabilities from any chat engine (legacy completions' `echo` with
 * `logprobs`): its `promptLogprobs`, or the one 400 of an engine without it; and their checked
 * token counts (`echo` with `max_tokens: 0` alone).
 *
 * @module
 */

import { ValidationError } from "../core/errors.ts";
import type {
  GenerationEngine,
  PromptInput,
  PromptScoringOptions,
  PromptTokenLogprob,
} from "../core/inference_types.ts";

/**
 * `engine.promptLogprobs(inputs, options)`, or a 400 naming `echo` when the engine has none.
 *
 * @example
 * ```ts ignore
 * const [tokens] = await scorePrompts(engine, [{ prompt: "Hello" }], { topLogprobs: 1 });
 * ```
 */
export async function scorePrompts(
  engine: GenerationEngine,
  inputs: readonly PromptInput[],
  options: PromptScoringOptions,
): Promise<PromptTokenLogprob[][]> {
  if (engine.promptLogprobs === undefined) {
    throw new ValidationError(
      `model '${engine.info.id}' cannot compute a prompt's log-probabilities: leave out echo`,
      { param: "echo" },
    );
  }
  return await engine.promptLogprobs(inputs, options);
}

/**
 * Each prompt's token count, checked as a generation's: `engine.checkPrompts`, which runs no
 * model, or the lengths of {@link scorePrompts} for an engine without it.
 *
 * @example
 * ```ts ignore
 * const [count] = await promptTokenCounts(engine, [{ prompt: "Hello" }], { choices: 2 });
 * ```
 */
export async function promptTokenCounts(
  engine: GenerationEngine,
  inputs: readonly PromptInput[],
  options: { choices?: number; signal?: AbortSignal } = {},
): Promise<number[]> {
  if (engine.checkPrompts !== undefined) {
    return await engine.checkPrompts(inputs, { choices: options.choices });
  }
  const scored = await scorePrompts(engine, inputs, { ...options, topLogprobs: 0 });
  return scored.map((tokens) => tokens.length);
}

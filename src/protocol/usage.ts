/**
 * The `usage` object of OpenAI responses.
 *
 * @module
 */
import type { Usage } from "../core/inference_types.ts";

/** `usage` on the wire. */
export interface WireUsage {
  /** Tokens of the prompt. */
  prompt_tokens: number;
  /** Tokens generated. */
  completion_tokens: number;
  /** Their sum. */
  total_tokens: number;
  /** `cached_tokens`: prompt tokens served from the engine's prefix cache. */
  prompt_tokens_details?: { cached_tokens: number };
}

/**
 * Converts engine token counts to the wire `usage` object.
 *
 * @example
 * ```ts
 * import { buildUsage } from "./usage.ts";
 * buildUsage({ promptTokens: 3, completionTokens: 2 }).total_tokens; // 5
 * ```
 */
export function buildUsage(usage: Usage): WireUsage {
  return {
    prompt_tokens: usage.promptTokens,
    completion_tokens: usage.completionTokens,
    total_tokens: usage.promptTokens + usage.completionTokens,
    prompt_tokens_details: { cached_tokens: usage.cachedTokens ?? 0 },
  };
}

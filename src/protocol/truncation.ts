/**
 * How a request asks for over-long inputs to be cut, on embeddings, rerank and score: TEI's
 * `truncate` (to the model's maximum) and vLLM's `truncate_prompt_tokens` (-1: the maximum; n: at
 * most n tokens), and vLLM's `truncation_side` for either (`right`, the default, keeps an input's
 * first tokens; `left` its last).
 *
 * @module
 */
import { z } from "zod";
import { ValidationError } from "../core/errors.ts";

/** The request fields, as every encoder request spells them. */
export interface TruncationFields {
  /** TEI's: cut inputs longer than the model accepts instead of failing. */
  truncate?: boolean | null;
  /** vLLM's: -1 cuts to the model's maximum, n to at most n tokens. */
  truncate_prompt_tokens?: number | null;
  /** vLLM's: which end a cut removes (`right`, the default: the end). */
  truncation_side?: "left" | "right" | null;
}

/** zod shapes of {@link TruncationFields}, to spread into a request schema. */
export const TRUNCATION_SCHEMA_FIELDS = {
  truncate: z.boolean().nullish(),
  truncate_prompt_tokens: z.int().min(-1).refine((n) => n !== 0, {
    error: "must be -1 (the model's maximum) or a positive number of tokens",
  }).nullish(),
  truncation_side: z.enum(["left", "right"]).nullish(),
};

/** What the engine is asked to do (the fields of its embed and rerank options). */
export interface Truncation {
  truncate?: true;
  truncateTokens?: number;
  truncationSide?: "left";
}

/**
 * The engine options for `req` on a model of `maxTokens`. A `truncate_prompt_tokens` above it is
 * a 400, as vLLM answers, rather than a silent cut to the maximum.
 *
 * @example
 * ```ts
 * import { truncationOf } from "./truncation.ts";
 * truncationOf({ truncate_prompt_tokens: 128 }, 512); // { truncate: true, truncateTokens: 128 }
 * ```
 */
export function truncationOf(req: TruncationFields, maxTokens: number): Truncation {
  const cut = req.truncate_prompt_tokens;
  if (cut != null && cut > maxTokens) {
    throw new ValidationError(
      `truncate_prompt_tokens ${cut} is more than the model's maximum of ${maxTokens} tokens; ` +
        `pass at most ${maxTokens}, or -1 for the maximum`,
      { param: "truncate_prompt_tokens", code: "invalid_value" },
    );
  }
  if (cut == null && req.truncate !== true) return {};
  return {
    truncate: true,
    ...(cut != null && cut > 0 && cut < maxTokens ? { truncateTokens: cut } : {}),
    ...(req.truncation_side === "left" ? { truncationSide: "left" } : {}),
  };
}

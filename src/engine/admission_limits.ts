/**
 * How much work one request may ask of an engine, checked before any of it is queued, and the
 * check that token ids given by a client exist in the model's vocabulary. Every refusal is a 400
 * that names the field, the limit and the `svc llm run` flag that raises it.
 *
 * @module
 */

import { ValidationError } from "../core/errors.ts";
import type { AdmissionLimits } from "../core/inference_types.ts";

export type { AdmissionLimits };

/**
 * Defaults. `n` ≤ 128, 20 alternatives per token, 2048 messages and 2048 embedding inputs are
 * OpenAI's limits (20 alternatives also vLLM's `--max-logprobs`); 256 sequences is what the chat
 * queue holds by default, so one request can fill it but never more; 65,536 tokens per request
 * bounds a request's prefill or embedding work to about a minute on two CPU cores with the small
 * default models (TEI's `--max-batch-tokens` is 16,384 per batch; OpenAI allows 300,000 per
 * embeddings request).
 * 1000 documents per rerank request is Cohere's recommended maximum; each pair repeats the query,
 * so rerank tokens get the same bound as embedding tokens. 262,144 generated tokens is 128
 * choices of 2,048 tokens, the demo models' whole context; at this machine's ~130 tokens/s with
 * 16 streams that is about half an hour of one engine, so a larger ask must name `max_tokens`.
 */
export const DEFAULT_ADMISSION_LIMITS: Readonly<AdmissionLimits> = {
  maxPrompts: 128,
  maxN: 128,
  maxMessages: 2048,
  maxSequences: 256,
  maxPromptTokens: 65_536,
  maxGeneratedTokens: 262_144,
  maxTopLogprobs: 20,
  maxEmbeddingInputs: 2048,
  maxEmbeddingTokens: 65_536,
  maxRerankDocuments: 1000,
  maxRerankTokens: 65_536,
};

/** The `svc llm run` / `svc llm serve` flag of each limit. */
export const ADMISSION_LIMIT_FLAGS: Readonly<Record<keyof AdmissionLimits, string>> = {
  maxPrompts: "max-prompts",
  maxN: "max-n",
  maxMessages: "max-messages",
  maxSequences: "max-request-sequences",
  maxPromptTokens: "max-prompt-tokens",
  maxGeneratedTokens: "max-generated-tokens",
  maxTopLogprobs: "max-top-logprobs",
  maxEmbeddingInputs: "max-embedding-inputs",
  maxEmbeddingTokens: "max-embedding-tokens",
  maxRerankDocuments: "max-rerank-documents",
  maxRerankTokens: "max-rerank-tokens",
};

/**
 * Throws a 400 when `value` is over the limit `key`: "`what`: `value`, more than this server's
 * limit of N (the engine's --flag flag raises it)".
 *
 * @example
 * ```ts
 * import { checkLimit, DEFAULT_ADMISSION_LIMITS } from "./admission_limits.ts";
 * checkLimit(DEFAULT_ADMISSION_LIMITS, "maxN", 4, { what: "n", param: "n" }); // fine
 * ```
 */
export function checkLimit(
  limits: Readonly<AdmissionLimits>,
  key: keyof AdmissionLimits,
  value: number,
  about: { what: string; param: string },
): void {
  if (value <= limits[key]) return;
  throw new ValidationError(
    `${about.what}: ${value}, more than this server's limit of ${limits[key]} ` +
      `(its --${ADMISSION_LIMIT_FLAGS[key]} flag raises it)`,
    { param: about.param, code: "invalid_value" },
  );
}

/**
 * {@link checkLimit} of a request's prompt tokens (`total`: every prompt counted once per choice;
 * `param`: the field of its first prompt).
 *
 * @example
 * ```ts
 * import { checkPromptTokens, DEFAULT_ADMISSION_LIMITS } from "./admission_limits.ts";
 * checkPromptTokens(DEFAULT_ADMISSION_LIMITS, 12, "prompt"); // fine
 * ```
 */
export function checkPromptTokens(
  limits: Readonly<AdmissionLimits>,
  total: number,
  param: string,
): void {
  checkLimit(limits, "maxPromptTokens", total, {
    what: "prompt tokens of the request (every prompt counted once per choice)",
    param,
  });
}

/**
 * {@link checkLimit} of the messages of a request body as it arrived, before it is validated: its
 * `messages`, or a Responses request's `input` items (`field`). Validating 200,000 messages (6 MB)
 * held the server's thread ~0.25-0.5 s.
 *
 * @example
 * ```ts
 * import { checkMessageCount, DEFAULT_ADMISSION_LIMITS } from "./admission_limits.ts";
 * checkMessageCount(DEFAULT_ADMISSION_LIMITS, { messages: [{ role: "user", content: "hi" }] });
 * ```
 */
export function checkMessageCount(
  limits: Readonly<AdmissionLimits>,
  body: unknown,
  field: "messages" | "input" = "messages",
): void {
  const list = typeof body === "object" && body !== null
    ? (body as Record<string, unknown>)[field]
    : undefined;
  if (!Array.isArray(list)) return; // validation names what is wrong
  checkLimit(limits, "maxMessages", list.length, {
    what: field === "messages" ? "messages" : "input items",
    param: field,
  });
}

/**
 * Throws a 400 naming `param` when an id is not a token of a vocabulary of `vocabSize` ids (the
 * model would fail on it, failing the whole batch it runs in). A size of 0 means unknown: then
 * only whole, non-negative ids pass.
 *
 * @example
 * ```ts
 * import { checkTokenIds } from "./admission_limits.ts";
 * checkTokenIds([1, 2, 3], 4096, "prompt"); // fine
 * ```
 */
export function checkTokenIds(ids: readonly number[], vocabSize: number, param: string): void {
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i];
    if (Number.isSafeInteger(id) && id >= 0 && (vocabSize <= 0 || id < vocabSize)) continue;
    const range = vocabSize > 0 ? `ids 0 to ${vocabSize - 1}` : "whole numbers from 0";
    throw new ValidationError(
      `${param} holds the token id ${id} at position ${i}, which is not in the model's ` +
        `vocabulary (${range})`,
      { param, code: "invalid_value" },
    );
  }
}

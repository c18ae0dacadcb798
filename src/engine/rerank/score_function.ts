/**
 * How a cross-encoder's logit becomes its relevance score, read from its config.json the way
 * sentence-transformers' CrossEncoder (and vLLM after it) reads it: the activation named by
 * `sentence_transformers.activation_fn` or `sbert_ce_default_activation_function`, else the
 * sigmoid for a single-label model (bge-reranker, jina-reranker: scores in [0, 1]). The ms-marco
 * cross-encoders name Identity: their scores are the raw logits. TEI's `raw_scores` (our
 * `raw_scores` too) skips the activation whatever the config says.
 *
 * @module
 */

import { ServiceError } from "../../core/errors.ts";

/** The activations rerankers use. */
export type ScoreActivation = "sigmoid" | "identity" | "tanh";

/** What the config says, and whether it said it (an unknown name falls back to the sigmoid). */
export interface ScoreFunction {
  activation: ScoreActivation;
  /** The class name in the config, when one was there. */
  configured?: string;
  /** True when the config named an activation we do not know. */
  unknown?: boolean;
}

const CLASS_NAMES: Record<string, ScoreActivation> = {
  Sigmoid: "sigmoid",
  Identity: "identity",
  Tanh: "tanh",
};

/**
 * The score function of a reranker's config.
 *
 * @example
 * ```ts
 * import { scoreFunctionOf } from "./score_function.ts";
 * scoreFunctionOf({ sbert_ce_default_activation_function: "torch.nn.modules.linear.Identity" });
 * // { activation: "identity", configured: "torch.nn.modules.linear.Identity" }
 * ```
 */
export function scoreFunctionOf(config: Record<string, unknown>): ScoreFunction {
  const st = config.sentence_transformers as { activation_fn?: unknown } | undefined;
  const named = st?.activation_fn ?? config.sbert_ce_default_activation_function;
  if (typeof named !== "string") return { activation: "sigmoid" };
  const activation = CLASS_NAMES[named.split(".").at(-1) ?? ""];
  return activation
    ? { activation, configured: named }
    : { activation: "sigmoid", configured: named, unknown: true };
}

/**
 * Number of labels of a sequence-classification config (`num_labels`, else the size of
 * `id2label`, else 1); a reranker must have exactly one.
 */
export function checkSingleLabel(config: Record<string, unknown>, id: string): void {
  const id2label = config.id2label as Record<string, unknown> | undefined;
  const labels = Number(config.num_labels ?? (id2label ? Object.keys(id2label).length : 1));
  if (labels !== 1) {
    throw new ServiceError(
      `model '${id}' is a classifier with ${labels} labels; a reranker scores each (query, ` +
        `document) pair with one logit (num_labels 1)`,
    );
  }
}

/** Applies `activation` to a logit. */
export function applyActivation(logit: number, activation: ScoreActivation): number {
  if (activation === "sigmoid") return 1 / (1 + Math.exp(-logit));
  if (activation === "tanh") return Math.tanh(logit);
  return logit;
}

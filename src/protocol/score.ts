/**
 * vLLM's score API, `POST /score` (also `/v1/score`): request `{model?, text_1, text_2}` where
 * each side is a text or a list of texts, paired 1:1, 1:N (one `text_1` against every `text_2`) or
 * N:N (pair by pair); answer `{id, object: "list", created, model, data: [{index, object: "score",
 * score}], usage}` with one score per pair, in request order. Served by the rerank engine.
 *
 * @module
 */
import { z } from "zod";
import { ValidationError } from "../core/errors.ts";
import { parseRequest } from "./validate.ts";

/** A validated score request. */
export interface ScoreRequest {
  /** Left out: the server's one reranker (vLLM's default: the served model). */
  model?: string | null;
  text_1: string | string[];
  text_2: string | string[];
  /** Cut pairs longer than the model accepts instead of failing (default false). */
  truncate?: boolean | null;
  /** vLLM's (and OpenAI's `user`): accepted and ignored. */
  user?: string | null;
  priority?: number | null;
  request_id?: string | null;
}

/** One scored pair. */
export interface ScoreWireData {
  /** Position of the pair in the request. */
  index: number;
  object: "score";
  score: number;
}

/** The score answer. */
export interface ScoreResponse {
  id: string;
  object: "list";
  created: number;
  model: string;
  data: ScoreWireData[];
  usage: { prompt_tokens: number; total_tokens: number; completion_tokens: number };
}

const TEXTS = z.union([
  z.string(),
  z.array(z.string()).min(1, { error: "is empty; send at least one text" }),
], { error: "expected a string or a list of strings" });

/** zod schema of {@link ScoreRequest}. */
export const SCORE_REQUEST_SCHEMA: z.ZodType<ScoreRequest> = z.strictObject({
  model: z.string().min(1).nullish(),
  text_1: TEXTS,
  text_2: TEXTS,
  truncate: z.boolean().nullish(),
  user: z.string().nullish(),
  priority: z.int().nullish(),
  request_id: z.string().nullish(),
});

/**
 * Validates a score body.
 *
 * @example
 * ```ts
 * import { parseScoreRequest } from "./score.ts";
 * parseScoreRequest({ text_1: "q", text_2: ["a", "b"] }).text_2.length; // 2
 * ```
 */
export function parseScoreRequest(body: unknown): ScoreRequest {
  return parseRequest(SCORE_REQUEST_SCHEMA, body);
}

/** One (query, document) pair to score, as the request numbers it. */
export interface ScorePair {
  text1: string;
  text2: string;
}

/**
 * The request's pairs, as vLLM pairs them: 1:1, 1:N, or N:N by position; lists of other lengths
 * are a 400 naming `text_2`.
 *
 * @example
 * ```ts
 * import { scorePairs } from "./score.ts";
 * scorePairs({ text_1: "q", text_2: ["a", "b"] });
 * // [{ text1: "q", text2: "a" }, { text1: "q", text2: "b" }]
 * ```
 */
export function scorePairs(req: Pick<ScoreRequest, "text_1" | "text_2">): ScorePair[] {
  const first = typeof req.text_1 === "string" ? [req.text_1] : req.text_1;
  const second = typeof req.text_2 === "string" ? [req.text_2] : req.text_2;
  if (first.length !== 1 && first.length !== second.length) {
    throw new ValidationError(
      `text_1 has ${first.length} texts and text_2 ${second.length}: pair them 1:1, 1:N (one ` +
        "text_1) or N:N (lists of the same length)",
      { param: "text_2", code: "invalid_value" },
    );
  }
  return second.map((text2, i) => ({ text1: first.length === 1 ? first[0] : first[i], text2 }));
}

/**
 * The answer from the model that scored (`model`): one entry per pair, in request order.
 *
 * @example
 * ```ts
 * import { buildScoreResponse } from "./score.ts";
 * buildScoreResponse([0.2, 0.9], { model: "m", promptTokens: 12 }).data[1];
 * // { index: 1, object: "score", score: 0.9 }
 * ```
 */
export function buildScoreResponse(
  scores: readonly number[],
  about: { model: string; promptTokens: number },
): ScoreResponse {
  return {
    id: `score-${crypto.randomUUID().replaceAll("-", "")}`,
    object: "list",
    created: Math.floor(Date.now() / 1000),
    model: about.model,
    data: scores.map((score, index) => ({ index, object: "score", score })),
    usage: {
      prompt_tokens: about.promptTokens,
      total_tokens: about.promptTokens,
      completion_tokens: 0,
    },
  };
}

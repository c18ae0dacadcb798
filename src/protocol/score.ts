/**
 * vLLM's score API, `POST /score` (also `/v1/score`): request `{model?, queries, documents}` (or
 * vLLM's other names for the two sides: `queries`/`items`, `data_1`/`data_2`, `text_1`/`text_2`)
 * where each side is a text or a list of texts, paired 1:1, 1:N (one query against every document)
 * or N:N (pair by pair); answer `{id, object: "list", created, model, data: [{index, object:
 * "score", score}], usage}` with one score per pair, in request order. Served by the rerank engine.
 *
 * @module
 */
import { z } from "zod";
import { ValidationError } from "../core/errors.ts";
import { ACTIVATION_SCHEMA_FIELDS, type ActivationFields } from "./rerank.ts";
import { TRUNCATION_SCHEMA_FIELDS, type TruncationFields } from "./truncation.ts";
import { parseRequest } from "./validate.ts";

/** A text, or a list of texts. */
export type ScoreSide = string | string[];

/** A validated score request: exactly one of the pairs of side names is given. */
export interface ScoreRequest extends TruncationFields, ActivationFields {
  /** Left out: the server's one reranker (vLLM's default: the served model). */
  model?: string | null;
  queries?: ScoreSide;
  documents?: ScoreSide;
  items?: ScoreSide;
  data_1?: ScoreSide;
  data_2?: ScoreSide;
  text_1?: ScoreSide;
  text_2?: ScoreSide;
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

/** vLLM's names for the two sides, in the order it reads them. */
const SIDE_NAMES = [
  ["queries", "documents"],
  ["queries", "items"],
  ["data_1", "data_2"],
  ["text_1", "text_2"],
] as const;

type SideName = (typeof SIDE_NAMES)[number][number];

/** zod schema of {@link ScoreRequest}. */
export const SCORE_REQUEST_SCHEMA: z.ZodType<ScoreRequest> = z.strictObject({
  model: z.string().min(1).nullish(),
  queries: TEXTS.optional(),
  documents: TEXTS.optional(),
  items: TEXTS.optional(),
  data_1: TEXTS.optional(),
  data_2: TEXTS.optional(),
  text_1: TEXTS.optional(),
  text_2: TEXTS.optional(),
  ...TRUNCATION_SCHEMA_FIELDS,
  ...ACTIVATION_SCHEMA_FIELDS,
  user: z.string().nullish(),
  priority: z.int().nullish(),
  request_id: z.string().nullish(),
}).superRefine((req, ctx) => {
  const given = SIDE_NAMES.filter(([a, b]) => req[a] !== undefined && req[b] !== undefined);
  const sent = (Object.keys(req) as SideName[]).filter((k) => SIDE_NAMES.flat().includes(k));
  if (given.length === 1 && sent.length === 2) return;
  const param = given.length === 0
    ? (sent[0] ?? "queries")
    : sent.find((k) => !(given[0] as readonly SideName[]).includes(k))!;
  ctx.addIssue({
    code: "custom",
    path: [param],
    message: `send the two sides to score as exactly one of ${
      SIDE_NAMES.map(([a, b]) => `${a} and ${b}`).join(", ")
    } (got ${sent.length === 0 ? "none" : sent.join(", ")})`,
  });
});

/**
 * Validates a score body.
 *
 * @example
 * ```ts
 * import { parseScoreRequest } from "./score.ts";
 * parseScoreRequest({ queries: "q", documents: ["a", "b"] }).documents?.length; // 2
 * ```
 */
export function parseScoreRequest(body: unknown): ScoreRequest {
  return parseRequest(SCORE_REQUEST_SCHEMA, body);
}

/** The two sides of a score request and the names the request gave them. */
export interface ScoreSides {
  first: string[];
  second: string[];
  /** e.g. `["queries", "documents"]`: what errors call them. */
  names: readonly [SideName, SideName];
}

/**
 * The request's two sides, whichever names it used.
 *
 * @example
 * ```ts
 * import { scoreSides } from "./score.ts";
 * scoreSides({ text_1: "q", text_2: ["a", "b"] });
 * // { first: ["q"], second: ["a", "b"], names: ["text_1", "text_2"] }
 * ```
 */
export function scoreSides(req: ScoreRequest): ScoreSides {
  const names = SIDE_NAMES.find(([a, b]) => req[a] !== undefined && req[b] !== undefined);
  if (names === undefined) {
    throw new ValidationError("the request has no two sides to score", { param: "queries" });
  }
  const list = (side: ScoreSide | undefined) => typeof side === "string" ? [side] : side!;
  return { first: list(req[names[0]]), second: list(req[names[1]]), names };
}

/** One (query, document) pair to score, as the request numbers it. */
export interface ScorePair {
  text1: string;
  text2: string;
}

/**
 * The pairs, as vLLM pairs them: 1:1, 1:N, or N:N by position; lists of other lengths are a 400
 * naming the second side.
 *
 * @example
 * ```ts
 * import { scorePairs } from "./score.ts";
 * scorePairs({ first: ["q"], second: ["a", "b"], names: ["queries", "documents"] });
 * // [{ text1: "q", text2: "a" }, { text1: "q", text2: "b" }]
 * ```
 */
export function scorePairs({ first, second, names: [one, two] }: ScoreSides): ScorePair[] {
  if (first.length !== 1 && first.length !== second.length) {
    throw new ValidationError(
      `${one} has ${first.length} texts and ${two} ${second.length}: pair them 1:1, 1:N (one ` +
        `text in ${one}) or N:N (lists of the same length)`,
      { param: two, code: "invalid_value" },
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

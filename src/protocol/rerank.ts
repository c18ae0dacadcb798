/**
 * `POST /v1/rerank` in the shape TEI, Jina, vLLM and Cohere clients share: request
 * `{model, query, documents, top_n?, return_documents?}` (documents as strings or `{text}`
 * objects; TEI's `raw_scores` and `truncate`, and vLLM's `use_activation` and
 * `truncate_prompt_tokens`, as extensions), answer
 * `{id, model, results: [{index, relevance_score, document?: {text}}], usage: {total_tokens}}`
 * with results sorted by score, best first.
 *
 * @module
 */
import { z } from "zod";
import { ValidationError } from "../core/errors.ts";
import { TRUNCATION_SCHEMA_FIELDS, type TruncationFields } from "./truncation.ts";
import { parseRequest } from "./validate.ts";

/**
 * Whether scores are the model's logits rather than in [0, 1]: TEI's `raw_scores: true`, vLLM's
 * `use_activation: false` (and the older `activation`/`softmax: false` it still reads).
 */
export interface ActivationFields {
  raw_scores?: boolean | null;
  use_activation?: boolean | null;
  activation?: boolean | null;
  softmax?: boolean | null;
}

/** zod shapes of {@link ActivationFields}, to spread into a request schema. */
export const ACTIVATION_SCHEMA_FIELDS = {
  raw_scores: z.boolean().nullish(),
  use_activation: z.boolean().nullish(),
  activation: z.boolean().nullish(),
  softmax: z.boolean().nullish(),
};

/**
 * Whether the request asks for raw logits; fields that disagree are a 400 naming the second.
 *
 * @example
 * ```ts
 * import { wantsRawScores } from "./rerank.ts";
 * wantsRawScores({ use_activation: false }); // true
 * ```
 */
export function wantsRawScores(req: ActivationFields): boolean {
  const asked = [
    ["raw_scores", req.raw_scores],
    ["use_activation", req.use_activation == null ? null : !req.use_activation],
    ["activation", req.activation == null ? null : !req.activation],
    ["softmax", req.softmax == null ? null : !req.softmax],
  ].filter((a): a is [string, boolean] => a[1] != null);
  const disagreeing = asked.find(([, raw]) => raw !== asked[0][1]);
  if (disagreeing !== undefined) {
    throw new ValidationError(
      `${disagreeing[0]} disagrees with ${asked[0][0]}: send one of raw_scores (true: logits) ` +
        "or use_activation (false: logits)",
      { param: disagreeing[0], code: "invalid_value" },
    );
  }
  return asked[0]?.[1] ?? false;
}

/** A validated rerank request. */
export interface RerankRequest extends TruncationFields, ActivationFields {
  /** Left out: the server's one reranker (vLLM's default: the served model). */
  model?: string | null;
  query: string;
  documents: (string | { text: string })[];
  /** Answer only the best N (default, or 0 as vLLM reads it: every document). */
  top_n?: number | null;
  /** Echo each document's text in its result (default true, as Jina and vLLM do). */
  return_documents?: boolean | null;
  /** vLLM's (and OpenAI's `user`): accepted and ignored (one queue, no request ids to honour). */
  user?: string | null;
  priority?: number | null;
  request_id?: string | null;
}

/** One scored document. */
export interface RerankWireResult {
  /** Position of the document in the request. */
  index: number;
  relevance_score: number;
  document?: { text: string };
}

/** The rerank answer. */
export interface RerankResponse {
  id: string;
  model: string;
  results: RerankWireResult[];
  usage: { total_tokens: number };
}

/** zod schema of {@link RerankRequest}. */
export const RERANK_REQUEST_SCHEMA: z.ZodType<RerankRequest> = z.strictObject({
  model: z.string().min(1).nullish(),
  query: z.string(),
  documents: z.array(
    z.union([z.string(), z.strictObject({ text: z.string() })], {
      error: "expected a string or an object with text",
    }),
  ).min(1, { error: "documents is empty; send at least one document to rank" }),
  top_n: z.int().min(0).nullish(),
  return_documents: z.boolean().nullish(),
  ...TRUNCATION_SCHEMA_FIELDS,
  ...ACTIVATION_SCHEMA_FIELDS,
  user: z.string().nullish(),
  priority: z.int().nullish(),
  request_id: z.string().nullish(),
});

/**
 * Validates a rerank body.
 *
 * @example
 * ```ts
 * import { parseRerankRequest } from "./rerank.ts";
 * const req = parseRerankRequest({ model: "m", query: "q", documents: ["a", { text: "b" }] });
 * req.documents.length; // 2
 * ```
 */
export function parseRerankRequest(body: unknown): RerankRequest {
  return parseRequest(RERANK_REQUEST_SCHEMA, body);
}

/**
 * The texts of the request's documents, in order.
 *
 * @example
 * ```ts
 * import { documentTexts } from "./rerank.ts";
 * documentTexts(["a", { text: "b" }]); // ["a", "b"]
 * ```
 */
export function documentTexts(documents: RerankRequest["documents"]): string[] {
  return documents.map((d) => typeof d === "string" ? d : d.text);
}

/**
 * The answer from the model that scored (`model`): results sorted by score (best first; ties
 * keep request order), cut to `top_n` (0 or left out: all of them).
 *
 * @example
 * ```ts
 * import { buildRerankResponse } from "./rerank.ts";
 * const req = { model: "m", query: "q", documents: ["a", "b"] };
 * buildRerankResponse(req, [0.1, 0.9], { model: "m", totalTokens: 6 }).results[0];
 * // { index: 1, relevance_score: 0.9, document: { text: "b" } }
 * ```
 */
export function buildRerankResponse(
  req: RerankRequest,
  scores: readonly number[],
  about: { model: string; totalTokens: number },
): RerankResponse {
  const texts = documentTexts(req.documents);
  const withText = req.return_documents ?? true;
  const results = scores
    .map((score, index) => ({ index, score }))
    .sort((a, b) => b.score - a.score || a.index - b.index)
    .slice(0, req.top_n || scores.length)
    .map(({ index, score }) => ({
      index,
      relevance_score: score,
      ...(withText ? { document: { text: texts[index] } } : {}),
    }));
  return {
    id: `rerank-${crypto.randomUUID().replaceAll("-", "")}`,
    model: about.model,
    results,
    usage: { total_tokens: about.totalTokens },
  };
}

/**
 * `POST /v1/rerank` (and `/rerank`, where TEI and Jina clients call it, and `/v2/rerank`, where
 * Cohere's v2 clients do, as vLLM serves it): scores each document against the query with a
 * reranker engine and answers them best first. `POST /score` (also `/v1/score`): vLLM's score API
 * on the same engine, one score per (`queries`, `documents`) pair in request order. `model` may be
 * left out where one reranker is served (as vLLM defaults to its served model).
 *
 * @module
 */
import { SvcException, ValidationError } from "../core/errors.ts";
import type { EngineRerankOptions, RerankerEngine } from "../core/inference_types.ts";
import { checkLimit, DEFAULT_ADMISSION_LIMITS } from "../engine/admission_limits.ts";
import {
  type ActivationFields,
  buildRerankResponse,
  documentTexts,
  parseRerankRequest,
  wantsRawScores,
} from "../protocol/rerank.ts";
import {
  buildScoreResponse,
  parseScoreRequest,
  type ScorePair,
  scorePairs,
  type ScoreSides,
  scoreSides,
} from "../protocol/score.ts";
import { type TruncationFields, truncationOf } from "../protocol/truncation.ts";
import { type GenerationRouteDeps, RequestAbort } from "./_generation.ts";
import type { RouteDefinition } from "../http/http_app.ts";
import { jsonResponse } from "../http/json_response.ts";

/**
 * The rerank routes.
 *
 * @example
 * ```ts
 * import { rerankRoutes } from "./rerank_route.ts";
 * import { EngineRegistry } from "./engine_registry.ts";
 * const routes = rerankRoutes({ engines: new EngineRegistry([]), recordUsage: () => {} });
 * ```
 */
export function rerankRoutes(deps: GenerationRouteDeps): RouteDefinition[] {
  const handler: RouteDefinition["handler"] = async (ctx) => {
    const req = parseRerankRequest(await ctx.readJson());
    const engine = deps.engines.resolve(req.model, "rerank");
    const limits = engine.info.limits ?? DEFAULT_ADMISSION_LIMITS;
    checkLimit(limits, "maxRerankDocuments", req.documents.length, {
      what: "documents",
      param: "documents",
    });
    const documents = documentTexts(req.documents);
    const abort = new RequestAbort(ctx.signal);
    let result;
    try {
      result = await engine.rerank(req.query, documents, pairOptions(req, engine, abort.signal));
    } catch (err) {
      throw abort.explain(err);
    }
    deps.recordUsage(engine.info.id, { promptTokens: result.promptTokens, completionTokens: 0 });
    return jsonResponse(
      buildRerankResponse(req, result.scores, {
        model: engine.info.id,
        totalTokens: result.promptTokens,
      }),
    );
  };
  const score: RouteDefinition["handler"] = async (ctx) => {
    const req = parseScoreRequest(await ctx.readJson());
    const sides = scoreSides(req);
    const pairs = scorePairs(sides);
    const engine = deps.engines.resolve(req.model, "rerank");
    const limits = engine.info.limits ?? DEFAULT_ADMISSION_LIMITS;
    checkLimit(limits, "maxRerankDocuments", pairs.length, {
      what: "pairs",
      param: sides.names[1],
    });
    const abort = new RequestAbort(ctx.signal);
    let result;
    try {
      result = await scoreAll(engine, pairs, sides, pairOptions(req, engine, abort.signal));
    } catch (err) {
      throw abort.explain(err);
    }
    deps.recordUsage(engine.info.id, { promptTokens: result.promptTokens, completionTokens: 0 });
    return jsonResponse(
      buildScoreResponse(result.scores, {
        model: engine.info.id,
        promptTokens: result.promptTokens,
      }),
    );
  };
  return [
    { method: "POST", path: "/v1/rerank", handler },
    { method: "POST", path: "/rerank", handler },
    // Cohere's v2 path: the same request (Cohere's v2 clients send model, query, documents and
    // top_n) and vLLM's answer for it, the same as /v1/rerank's.
    { method: "POST", path: "/v2/rerank", handler },
    { method: "POST", path: "/score", handler: score },
    { method: "POST", path: "/v1/score", handler: score },
  ];
}

// The engine options of a rerank or score request: logits or scores, and how pairs are cut (from
// the document's end only: cutting the start would cut the query first).
function pairOptions(
  req: TruncationFields & ActivationFields,
  engine: RerankerEngine,
  signal: AbortSignal,
): EngineRerankOptions {
  const rawScores = wantsRawScores(req);
  if (req.truncation_side === "left") {
    throw new ValidationError(
      "truncation_side 'left' is not supported for query-document pairs: a pair is cut from the " +
        "document's end; leave truncation_side out or send 'right'",
      { param: "truncation_side", code: "invalid_value" },
    );
  }
  const { truncate, truncateTokens } = truncationOf(req, engine.info.contextLength);
  return {
    rawScores,
    ...(truncate ? { truncate } : {}),
    ...(truncateTokens ? { truncateTokens } : {}),
    signal,
  };
}

// Scores every pair: one engine call per distinct first text with its second texts (a 1:N request
// is one call), each score put back at its pair's index. An error naming a document or the query
// is renamed to the pair's side as the request named it (`documents.i`, `queries[.i]`).
async function scoreAll(
  engine: RerankerEngine,
  pairs: ScorePair[],
  { first, names: [one, two] }: ScoreSides,
  options: EngineRerankOptions,
): Promise<{ scores: number[]; promptTokens: number }> {
  const groups = new Map<string, number[]>();
  pairs.forEach(({ text1 }, i) => groups.set(text1, [...(groups.get(text1) ?? []), i]));
  const scores = new Array<number>(pairs.length);
  let promptTokens = 0;
  await Promise.all([...groups].map(async ([text1, indices]) => {
    let result;
    try {
      result = await engine.rerank(text1, indices.map((i) => pairs[i].text2), options);
    } catch (err) {
      throw renamed(err, (param) => {
        const doc = /^documents\.(\d+)$/.exec(param);
        if (doc !== null) return `${two}.${indices[Number(doc[1])]}`;
        if (param === "query") return first.length > 1 ? `${one}.${indices[0]}` : one;
        return param === "documents" ? two : param;
      });
    }
    indices.forEach((pair, j) => scores[pair] = result.scores[j]);
    promptTokens += result.promptTokens;
  }));
  return { scores, promptTokens };
}

// The same error naming the score API's field instead of the rerank API's.
function renamed(err: unknown, rename: (param: string) => string): unknown {
  if (!(err instanceof SvcException) || err.param === null) return err;
  const param = rename(err.param);
  if (param === err.param) return err;
  const Same = err.constructor as new (
    message: string,
    options: { param: string; code: string; status: number; cause: unknown },
  ) => SvcException;
  const message = err.message.replace(/documents\[\d+\]/, param).replace(/^query /, `${param} `);
  return new Same(message, { param, code: err.code, status: err.status, cause: err });
}

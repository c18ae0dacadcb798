/**
 * `POST /v1/rerank` (and `/rerank`, where TEI and Jina clients call it, and `/v2/rerank`, where
 * Cohere's v2 clients do, as vLLM serves it): scores each document against the query with a
 * reranker engine and answers them best first. `POST /score` (also `/v1/score`): vLLM's score API
 * on the same engine, one score per (`text_1`, `text_2`) pair in request order. `model` may be
 * left out where one reranker is served (as vLLM defaults to its served model).
 *
 * @module
 */
import { SvcException } from "../core/errors.ts";
import type { RerankerEngine } from "../core/inference_types.ts";
import { checkLimit, DEFAULT_ADMISSION_LIMITS } from "../engine/admission_limits.ts";
import { buildRerankResponse, documentTexts, parseRerankRequest } from "../protocol/rerank.ts";
import {
  buildScoreResponse,
  parseScoreRequest,
  type ScorePair,
  scorePairs,
} from "../protocol/score.ts";
import { type GenerationRouteDeps, RequestAbort } from "./_generation.ts";
import type { RouteDefinition } from "../http/http_app.ts";
import { jsonBytesResponse } from "../http/http1/known_body.ts";

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
      result = await engine.rerank(req.query, documents, {
        rawScores: req.raw_scores ?? false,
        truncate: req.truncate ?? false,
        signal: abort.signal,
      });
    } catch (err) {
      throw abort.explain(err);
    }
    deps.recordUsage(engine.info.id, { promptTokens: result.promptTokens, completionTokens: 0 });
    return jsonBytesResponse(
      buildRerankResponse(req, result.scores, {
        model: engine.info.id,
        totalTokens: result.promptTokens,
      }),
    );
  };
  const score: RouteDefinition["handler"] = async (ctx) => {
    const req = parseScoreRequest(await ctx.readJson());
    const pairs = scorePairs(req);
    const engine = deps.engines.resolve(req.model, "rerank");
    const limits = engine.info.limits ?? DEFAULT_ADMISSION_LIMITS;
    checkLimit(limits, "maxRerankDocuments", pairs.length, { what: "pairs", param: "text_2" });
    const abort = new RequestAbort(ctx.signal);
    let result;
    try {
      result = await scoreAll(engine, pairs, {
        truncate: req.truncate ?? false,
        signal: abort.signal,
        manyFirst: typeof req.text_1 !== "string" && req.text_1.length > 1,
      });
    } catch (err) {
      throw abort.explain(err);
    }
    deps.recordUsage(engine.info.id, { promptTokens: result.promptTokens, completionTokens: 0 });
    return jsonBytesResponse(
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

// Scores every pair: one engine call per distinct text_1 with its text_2s (a 1:N request is one
// call), each score put back at its pair's index. An error naming a document or the query is
// renamed to the pair's `text_2.i` / `text_1[.i]`.
async function scoreAll(
  engine: RerankerEngine,
  pairs: ScorePair[],
  options: { truncate: boolean; signal: AbortSignal; manyFirst: boolean },
): Promise<{ scores: number[]; promptTokens: number }> {
  const groups = new Map<string, number[]>();
  pairs.forEach(({ text1 }, i) => groups.set(text1, [...(groups.get(text1) ?? []), i]));
  const scores = new Array<number>(pairs.length);
  let promptTokens = 0;
  await Promise.all([...groups].map(async ([text1, indices]) => {
    let result;
    try {
      result = await engine.rerank(text1, indices.map((i) => pairs[i].text2), {
        truncate: options.truncate,
        signal: options.signal,
      });
    } catch (err) {
      throw renamed(err, (param) => {
        const doc = /^documents\.(\d+)$/.exec(param);
        if (doc !== null) return `text_2.${indices[Number(doc[1])]}`;
        if (param === "query") return options.manyFirst ? `text_1.${indices[0]}` : "text_1";
        return param === "documents" ? "text_2" : param;
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

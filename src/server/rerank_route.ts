/**
 * `POST /v1/rerank` (and `/rerank`, where TEI and Jina clients call it): scores each document
 * against the query with a reranker engine and answers them best first. `model` may be left out
 * where one reranker is served (as vLLM defaults to its served model).
 *
 * @module
 */
import { checkLimit, DEFAULT_ADMISSION_LIMITS } from "../engine/admission_limits.ts";
import { buildRerankResponse, documentTexts, parseRerankRequest } from "../protocol/rerank.ts";
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
    const model = req.model ?? deps.engines.defaultModel("rerank");
    const engine = deps.engines.resolve(model, "rerank");
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
  return [
    { method: "POST", path: "/v1/rerank", handler },
    { method: "POST", path: "/rerank", handler },
  ];
}

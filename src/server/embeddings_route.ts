/**
 * `POST /v1/embeddings`: float or base64 vectors, `dimensions`, truncation, usage.
 *
 * @module
 */
import { ServiceError } from "../core/errors.ts";
import { checkLimit, DEFAULT_ADMISSION_LIMITS } from "../engine/admission_limits.ts";
import { parseEmbeddingRequest, toEmbeddingJob } from "../protocol/embedding_request.ts";
import { buildEmbeddingList } from "../protocol/embedding_response.ts";
import { RequestAbort } from "./_generation.ts";
import type { GenerationRouteDeps } from "./_generation.ts";
import type { RouteDefinition } from "../http/http_app.ts";
import { jsonBytesResponse } from "../http/http1/known_body.ts";

/**
 * The embeddings route.
 *
 * @example
 * ```ts
 * import { embeddingsRoute } from "./embeddings_route.ts";
 * import { EngineRegistry } from "./engine_registry.ts";
 * const route = embeddingsRoute({ engines: new EngineRegistry([]), recordUsage: () => {} });
 * ```
 */
export function embeddingsRoute(deps: GenerationRouteDeps): RouteDefinition {
  return {
    method: "POST",
    path: "/v1/embeddings",
    handler: async (ctx) => {
      const req = parseEmbeddingRequest(await ctx.readJson());
      const engine = deps.engines.resolve(req.model, "embedding");
      const { inputs, options, encodingFormat } = toEmbeddingJob(req, {
        dimensions: engine.info.dimensions,
        maxTokens: engine.info.contextLength,
      });
      const limits = engine.info.limits ?? DEFAULT_ADMISSION_LIMITS;
      checkLimit(limits, "maxEmbeddingInputs", inputs.length, { what: "inputs", param: "input" });
      const abort = new RequestAbort(ctx.signal);
      let result;
      try {
        result = await engine.embed(inputs, { ...options, signal: abort.signal });
      } catch (err) {
        throw abort.explain(err);
      }
      if (result.vectors.length !== inputs.length) {
        throw new ServiceError(
          `the engine returned ${result.vectors.length} vectors for ${inputs.length} inputs`,
        );
      }
      deps.recordUsage(engine.info.id, { promptTokens: result.promptTokens, completionTokens: 0 });
      return jsonBytesResponse(buildEmbeddingList(engine.info.id, result.vectors, {
        promptTokens: result.promptTokens,
        encodingFormat,
      }));
    },
  };
}

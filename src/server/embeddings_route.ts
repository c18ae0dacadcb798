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
import { jsonResponse } from "../http/json_response.ts";
import type { EmbedEngine } from "../core/inference_types.ts";
import { ValidationError } from "../core/errors.ts";

// vLLM's `add_special_tokens: false`: texts become their token ids without [CLS]/[SEP] (token-id
// inputs are embedded as sent either way).
async function withoutSpecialTokens(
  engine: EmbedEngine,
  inputs: (string | number[])[],
): Promise<(string | number[])[]> {
  const tokenize = engine.tokenize?.bind(engine);
  if (tokenize === undefined) {
    throw new ValidationError(
      `model '${engine.info.id}' cannot tokenize here: leave out add_special_tokens`,
      { param: "add_special_tokens" },
    );
  }
  return await Promise.all(inputs.map(async (input, i) => {
    if (typeof input !== "string") return input;
    const { tokens } = await tokenize({ prompt: input, addSpecialTokens: false });
    if (tokens.length === 0) {
      const param = `input.${i}`;
      throw new ValidationError(
        `${param} has no tokens without the special tokens (add_special_tokens is false), ` +
          "and a model cannot embed nothing; send text or leave out add_special_tokens",
        { param, code: "invalid_value" },
      );
    }
    return tokens;
  }));
}

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
      const job = toEmbeddingJob(req, {
        id: engine.info.id,
        dimensions: engine.info.dimensions,
        maxTokens: engine.info.contextLength,
      });
      const { options, encodingFormat } = job;
      const limits = engine.info.limits ?? DEFAULT_ADMISSION_LIMITS;
      checkLimit(limits, "maxEmbeddingInputs", job.inputs.length, {
        what: "inputs",
        param: "input",
      });
      const inputs = req.add_special_tokens === false
        ? await withoutSpecialTokens(engine, job.inputs)
        : job.inputs;
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
      return jsonResponse(buildEmbeddingList(engine.info.id, result.vectors, {
        promptTokens: result.promptTokens,
        encodingFormat,
      }));
    },
  };
}

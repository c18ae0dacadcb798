/**
 * `POST /tokenize` and `POST /detokenize` (vLLM's and llama.cpp's paths, also under `/v1`):
 * a model's own tokenizer, for clients that count tokens against the context before sending.
 * Any kind of model: chat, embedding or reranker. `model` may be left out where one model with a
 * tokenizer is served (as vLLM defaults to its served model).
 *
 * @module
 */
import { ValidationError } from "../core/errors.ts";
import {
  buildTokenizeResponse,
  parseDetokenizeRequest,
  parseTokenizeRequest,
  toTokenizeInput,
} from "../protocol/tokenize.ts";
import type { EngineRegistry } from "./engine_registry.ts";
import type { RouteDefinition } from "../http/http_app.ts";
import { jsonResponse } from "../http/json_response.ts";
import { checkMessageCount } from "../engine/admission_limits.ts";
import type { EngineBase } from "../core/inference_types.ts";

/** An engine of any kind whose tokenizer this server can use. */
type TokenizingEngine = EngineBase & Required<Pick<EngineBase, "tokenize" | "detokenize">>;

/**
 * The tokenizer routes.
 *
 * @example
 * ```ts
 * import { tokenizeRoutes } from "./tokenize_routes.ts";
 * import { EngineRegistry } from "./engine_registry.ts";
 * const routes = tokenizeRoutes(new EngineRegistry([]));
 * ```
 */
export function tokenizeRoutes(engines: EngineRegistry): RouteDefinition[] {
  const tokenize: RouteDefinition["handler"] = async (ctx) => {
    const body = await ctx.readJson();
    checkMessageCount(engines.limitsOf(body, undefined, hasTokenizer), body);
    const req = parseTokenizeRequest(body);
    const engine = engines.resolve(req.model ?? engines.defaultModel(undefined, hasTokenizer));
    const result = await withTokenizer(engine).tokenize(toTokenizeInput(req), {
      tokenStrs: req.return_token_strs ?? false,
    });
    // Megabytes for a long prompt (ids and token strings): written a slice at a time.
    return jsonResponse(buildTokenizeResponse(result, engine.info.contextLength));
  };
  const detokenize: RouteDefinition["handler"] = async (ctx) => {
    const req = parseDetokenizeRequest(await ctx.readJson());
    const engine = engines.resolve(req.model ?? engines.defaultModel(undefined, hasTokenizer));
    return jsonResponse({ prompt: await withTokenizer(engine).detokenize(req.tokens) });
  };
  return ["", "/v1"].flatMap((prefix): RouteDefinition[] => [
    { method: "POST", path: `${prefix}/tokenize`, handler: tokenize },
    { method: "POST", path: `${prefix}/detokenize`, handler: detokenize },
  ]);
}

function withTokenizer(engine: EngineBase): TokenizingEngine {
  if (hasTokenizer(engine)) return engine;
  throw new ValidationError(`model '${engine.info.id}' has no tokenizer this server can use`, {
    param: "model",
  });
}

function hasTokenizer(engine: EngineBase): engine is TokenizingEngine {
  return engine.tokenize !== undefined && engine.detokenize !== undefined;
}

/**
 * `POST /v1/completions` (legacy): one choice per prompt × `n`, JSON or SSE.
 *
 * @module
 */
import {
  type CompletionJob,
  parseCompletionRequest,
  toCompletionJob,
} from "../protocol/completion_request.ts";
import { buildTextCompletion, type TextCompletion } from "../protocol/completion_response.ts";
import {
  type GenerationFormat,
  type GenerationRouteDeps,
  respondWithGenerations,
} from "./_generation.ts";
import type { RouteContext, RouteDefinition } from "../http/http_app.ts";

/**
 * The legacy completions route.
 *
 * @example
 * ```ts
 * import { completionsRoute } from "./completions_route.ts";
 * import { EngineRegistry } from "./engine_registry.ts";
 * const route = completionsRoute({ engines: new EngineRegistry([]), recordUsage: () => {} });
 * ```
 */
export function completionsRoute(deps: GenerationRouteDeps): RouteDefinition {
  return {
    method: "POST",
    path: "/v1/completions",
    handler: (ctx) => handleCompletions(ctx, deps),
  };
}

async function handleCompletions(ctx: RouteContext, deps: GenerationRouteDeps): Promise<Response> {
  const job = toCompletionJob(parseCompletionRequest(await ctx.readJson()));
  return await respondWithGenerations(
    ctx,
    deps,
    { ...job, topLogprobsField: "logprobs" },
    completionFormat(job),
  );
}

// The legacy wire format: each delta carries its offset in the choice's text.
function completionFormat(job: CompletionJob): GenerationFormat<TextCompletion> {
  const { includeUsage, withTopLogprobs } = job;
  const offsets = new Array<number>(job.prompts.length * job.n).fill(0);
  // With `echo`, a choice's text starts with its prompt: sent with its first piece, or its end.
  const echoed = offsets.map(() => job.echo === undefined);
  const echo = (index: number) => {
    if (echoed[index]) return "";
    echoed[index] = true;
    return job.echo![Math.floor(index / job.n)];
  };
  return {
    idPrefix: "cmpl",
    complete: (meta, results, usage) =>
      buildTextCompletion(
        meta,
        results.map((r, index) => ({
          index,
          text: echo(index) + r.text,
          finishReason: r.finishReason,
          logprobs: r.logprobs,
          withTopLogprobs,
        })),
        { usage },
      ),
    delta: (meta, index, piece, logprobs) => {
      const text = echo(index) + piece;
      const chunk = buildTextCompletion(meta, [{
        index,
        text,
        logprobs,
        textOffset: offsets[index],
        withTopLogprobs,
      }], { includeUsage });
      offsets[index] += text.length;
      return chunk;
    },
    finish: (meta, index, finishReason) =>
      buildTextCompletion(meta, [{ index, text: echo(index), finishReason }], { includeUsage }),
    usage: (meta, usage) => buildTextCompletion(meta, [], { usage }),
  };
}

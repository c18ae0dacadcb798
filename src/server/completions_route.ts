/**
 * `POST /v1/completions` (legacy): one choice per prompt × `n`, JSON or SSE.
 *
 * @module
 */
import { ServiceError } from "../core/errors.ts";
import type { GenerationStream } from "../engine/types.ts";
import {
  type CompletionJob,
  parseCompletionRequest,
  toCompletionJob,
} from "../protocol/completion_request.ts";
import type { ResponseMeta } from "../protocol/chat_response.ts";
import { buildTextCompletion, type TextCompletion } from "../protocol/completion_response.ts";
import { deriveChoiceSeed } from "../protocol/sampling.ts";
import { collectAll, mergeGenerations, RequestAbort, startGenerations } from "./_generation.ts";
import type { GenerationRouteDeps } from "./chat_route.ts";
import type { RouteContext, RouteDefinition } from "./http_app.ts";
import { sseResponse } from "./sse_response.ts";

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
  const engine = deps.engines.resolve(job.model, "chat");
  const base = job.params;
  const n = job.n;
  // Choice index = prompt index * n + j, as OpenAI numbers them.
  const jobs = job.prompts.flatMap((input) =>
    Array.from({ length: n }, (_, j) => {
      const seed = deriveChoiceSeed(base.seed, j);
      return { input, params: seed === undefined ? base : { ...base, seed } };
    })
  );
  const abort = new RequestAbort(ctx.signal);
  const streams = await startGenerations(engine, jobs, abort);
  const meta: ResponseMeta = {
    id: `cmpl-${crypto.randomUUID().replaceAll("-", "")}`,
    created: Math.floor(Date.now() / 1000),
    model: engine.info.id,
  };
  const promptTokens = streams.reduce((sum, s, i) => (i % n === 0 ? sum + s.promptTokens : sum), 0);
  const logprobs = base.logprobs === true;
  const { withTopLogprobs } = job;
  if (!job.stream) {
    const results = await collectAll(streams, { logprobs, abort });
    const usage = {
      promptTokens,
      completionTokens: results.reduce((sum, r) => sum + r.usage.completionTokens, 0),
    };
    deps.recordUsage(meta.model, usage);
    return Response.json(buildTextCompletion(
      meta,
      results.map((r, index) => ({
        index,
        text: r.text,
        finishReason: r.finishReason,
        logprobs: r.logprobs,
        withTopLogprobs,
      })),
      { usage },
    ));
  }
  return sseResponse(
    completionChunks(streams, job, { meta, promptTokens, logprobs, withTopLogprobs, deps, abort }),
    {
      abort: abort.controller,
      logger: ctx.logger,
      requestId: ctx.requestId,
      onError: ctx.countError,
    },
  );
}

async function* completionChunks(
  streams: GenerationStream[],
  job: CompletionJob,
  opts: {
    meta: ResponseMeta;
    promptTokens: number;
    logprobs: boolean;
    withTopLogprobs: boolean;
    deps: GenerationRouteDeps;
    abort: RequestAbort;
  },
): AsyncGenerator<TextCompletion, void, undefined> {
  const { meta } = opts;
  const { includeUsage } = job;
  const offsets = streams.map(() => 0);
  let completionTokens = 0;
  let finished = 0;
  try {
    for await (const { index, event } of mergeGenerations(streams)) {
      if (event.type === "delta") {
        if (event.text === "" && !event.logprobs?.length) continue;
        yield buildTextCompletion(meta, [{
          index,
          text: event.text,
          logprobs: opts.logprobs ? event.logprobs ?? [] : undefined,
          textOffset: offsets[index],
          withTopLogprobs: opts.withTopLogprobs,
        }], { includeUsage });
        offsets[index] += event.text.length;
      } else {
        completionTokens += event.usage.completionTokens;
        finished++;
        yield buildTextCompletion(meta, [{ index, text: "", finishReason: event.finishReason }], {
          includeUsage,
        });
      }
    }
  } catch (err) {
    opts.abort.abort();
    throw opts.abort.explain(err);
  }
  if (finished < streams.length) {
    throw new ServiceError("the engine ended a generation without a finish event");
  }
  const usage = { promptTokens: opts.promptTokens, completionTokens };
  opts.deps.recordUsage(meta.model, usage);
  if (includeUsage) yield buildTextCompletion(meta, [], { usage });
}

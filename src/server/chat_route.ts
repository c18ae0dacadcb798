/**
 * `POST /v1/chat/completions`: JSON or SSE, `n` choices (seeds derived per choice), usage.
 *
 * @module
 */
import type { GenerationStream } from "../engine/types.ts";
import { type ChatJob, parseChatCompletionRequest, toChatJob } from "../protocol/chat_request.ts";
import {
  buildChatCompletion,
  buildChatCompletionChunk,
  type ChatCompletionChunk,
  type ResponseMeta,
} from "../protocol/chat_response.ts";
import { deriveChoiceSeed } from "../protocol/sampling.ts";
import { collectAll, mergeGenerations, RequestAbort, startGenerations } from "./_generation.ts";
import type { RouteContext, RouteDefinition } from "./http_app.ts";
import type { EngineRegistry } from "./engine_registry.ts";
import type { UsageRecorder } from "./engine_metrics.ts";
import { sseResponse } from "./sse_response.ts";
import { ServiceError } from "../core/errors.ts";

/** What the generation routes need. */
export interface GenerationRouteDeps {
  engines: EngineRegistry;
  recordUsage: UsageRecorder;
}

/**
 * The chat completions route.
 *
 * @example
 * ```ts
 * import { chatCompletionsRoute } from "./chat_route.ts";
 * import { EngineRegistry } from "./engine_registry.ts";
 * const route = chatCompletionsRoute({ engines: new EngineRegistry([]), recordUsage: () => {} });
 * ```
 */
export function chatCompletionsRoute(deps: GenerationRouteDeps): RouteDefinition {
  return {
    method: "POST",
    path: "/v1/chat/completions",
    handler: (ctx) => handleChat(ctx, deps),
  };
}

async function handleChat(ctx: RouteContext, deps: GenerationRouteDeps): Promise<Response> {
  const job = toChatJob(parseChatCompletionRequest(await ctx.readJson()));
  const engine = deps.engines.resolve(job.model, "chat");
  const base = job.params;
  const jobs = Array.from({ length: job.n }, (_, i) => {
    const seed = deriveChoiceSeed(base.seed, i);
    return {
      input: { messages: job.messages },
      params: seed === undefined ? base : { ...base, seed },
    };
  });
  const abort = new RequestAbort(ctx.signal);
  const streams = await startGenerations(engine, jobs, abort);
  const meta: ResponseMeta = {
    id: `chatcmpl-${crypto.randomUUID().replaceAll("-", "")}`,
    created: Math.floor(Date.now() / 1000),
    model: engine.info.id,
  };
  const logprobs = base.logprobs === true;
  if (!job.stream) {
    const results = await collectAll(streams, { logprobs, abort });
    const usage = {
      promptTokens: streams[0].promptTokens,
      completionTokens: results.reduce((sum, r) => sum + r.usage.completionTokens, 0),
    };
    deps.recordUsage(meta.model, usage);
    return Response.json(buildChatCompletion(
      meta,
      results.map((r, index) => ({
        index,
        text: r.text,
        finishReason: r.finishReason,
        logprobs: r.logprobs,
      })),
      { usage },
    ));
  }
  return sseResponse(chatChunks(streams, job, { meta, logprobs, deps, abort }), {
    abort: abort.controller,
    logger: ctx.logger,
    requestId: ctx.requestId,
    onError: ctx.countError,
  });
}

async function* chatChunks(
  streams: GenerationStream[],
  job: ChatJob,
  opts: { meta: ResponseMeta; logprobs: boolean; deps: GenerationRouteDeps; abort: RequestAbort },
): AsyncGenerator<ChatCompletionChunk, void, undefined> {
  const { meta } = opts;
  const { includeUsage } = job;
  // One chunk per choice, as OpenAI does: the role first, with empty content.
  for (let index = 0; index < streams.length; index++) {
    yield buildChatCompletionChunk(meta, [{ index, role: "assistant", content: "" }], {
      includeUsage,
    });
  }
  let completionTokens = 0;
  let finished = 0;
  try {
    for await (const { index, event } of mergeGenerations(streams)) {
      if (event.type === "delta") {
        if (event.text === "" && !event.logprobs?.length) continue;
        yield buildChatCompletionChunk(meta, [{
          index,
          content: event.text,
          logprobs: opts.logprobs ? event.logprobs ?? [] : undefined,
        }], { includeUsage });
      } else {
        completionTokens += event.usage.completionTokens;
        finished++;
        yield buildChatCompletionChunk(meta, [{ index, finishReason: event.finishReason }], {
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
  const usage = { promptTokens: streams[0].promptTokens, completionTokens };
  opts.deps.recordUsage(meta.model, usage);
  if (includeUsage) yield buildChatCompletionChunk(meta, [], { usage });
}

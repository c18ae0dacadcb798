/**
 * `POST /v1/chat/completions`: JSON or SSE, `n` choices (seeds derived per choice), usage.
 *
 * @module
 */
import { type ChatJob, parseChatCompletionRequest, toChatJob } from "../protocol/chat_request.ts";
import {
  buildChatCompletion,
  buildChatCompletionChunk,
  type ChatCompletionChunk,
} from "../protocol/chat_response.ts";
import {
  type GenerationFormat,
  type GenerationRouteDeps,
  respondWithGenerations,
} from "./_generation.ts";
import type { RouteContext, RouteDefinition } from "../http/http_app.ts";
import { buildUsage } from "../protocol/usage.ts";
import { checkMessageCount } from "../engine/admission_limits.ts";

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
    handler: async (ctx) => runChatCompletion(ctx, deps, await ctx.readJson()),
  };
}

/** Answers a chat completion request body (the route's work; `/v1/responses` calls it too). */
export async function runChatCompletion(
  ctx: RouteContext,
  deps: GenerationRouteDeps,
  body: unknown,
): Promise<Response> {
  checkMessageCount(deps.engines.limitsOf(body, "chat"), body);
  const job = toChatJob(parseChatCompletionRequest(body));
  const prompts = [{
    messages: job.messages,
    ...(job.templateKwargs === undefined ? {} : { templateKwargs: job.templateKwargs }),
    ...(job.tools === undefined ? {} : { tools: job.tools }),
    ...(job.addGenerationPrompt === undefined ? {} : { addGenerationPrompt: false }),
    ...(job.continueFinalMessage === undefined ? {} : { continueFinalMessage: true }),
  }];
  return await respondWithGenerations(
    ctx,
    deps,
    { ...job, prompts, splitReasoning: true, topLogprobsField: "top_logprobs" },
    chatFormat(job),
  );
}

// The chat wire format: one chunk per choice with the role first, as OpenAI does.
function chatFormat(job: ChatJob): GenerationFormat<ChatCompletionChunk> {
  const { includeUsage } = job;
  const echo = job.echo ?? "";
  return {
    idPrefix: "chatcmpl",
    complete: (meta, results, usage) =>
      buildChatCompletion(
        meta,
        results.map((r, index) => ({
          index,
          text: echo + r.text,
          ...(r.reasoning === undefined ? {} : { reasoning: r.reasoning }),
          ...(r.toolCalls === undefined ? {} : { toolCalls: r.toolCalls }),
          finishReason: r.finishReason,
          logprobs: r.logprobs,
        })),
        { usage },
      ),
    opening: (meta, choices) =>
      Array.from(
        { length: choices },
        (_, index) =>
          buildChatCompletionChunk(meta, [{ index, role: "assistant", content: echo }], {
            includeUsage,
          }),
      ),
    // A piece of reasoning or of tool calls alone carries no `content` (as vLLM and OpenAI send it).
    delta: (meta, index, content, logprobs, reasoning, toolCalls) =>
      buildChatCompletionChunk(
        meta,
        [
          (reasoning !== undefined || toolCalls !== undefined) && content === ""
            ? { index, reasoning, logprobs, toolCalls }
            : { index, content, reasoning, logprobs, toolCalls },
        ],
        { includeUsage },
      ),
    finish: (meta, index, finishReason) =>
      buildChatCompletionChunk(meta, [{ index, finishReason }], { includeUsage }),
    usage: (meta, usage) => buildChatCompletionChunk(meta, [], { usage }),
    withUsage: (chunk, usage) => ({ ...chunk, usage: buildUsage(usage) }),
  };
}

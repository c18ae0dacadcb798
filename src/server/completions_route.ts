/**
 * `POST /v1/completions` (legacy): one choice per prompt × `n`, JSON or SSE.
 *
 * @module
 */
import {
  type CompletionJob,
  type CompletionRequest,
  parseCompletionRequest,
  toCompletionJob,
} from "../protocol/completion_request.ts";
import { ValidationError } from "../core/errors.ts";
import { buildTextCompletion, type TextCompletion } from "../protocol/completion_response.ts";
import { buildUsage } from "../protocol/usage.ts";
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
  const req = parseCompletionRequest(await ctx.readJson());
  const job = await withModelTokenizer(toCompletionJob(req), req, deps);
  return await respondWithGenerations(
    ctx,
    deps,
    { ...job, topLogprobsField: "logprobs" },
    completionFormat(job),
  );
}

/** A completion job whose echoed prompts are all text. */
type TextEchoJob = Omit<CompletionJob, "echo"> & { echo?: string[] };

// What needs the model's tokenizer, as vLLM does it: `add_special_tokens: false` (text prompts
// tokenized here, without BOS, and sent as token ids) and `echo` of token-id prompts (decoded).
async function withModelTokenizer(
  job: CompletionJob,
  req: CompletionRequest,
  deps: GenerationRouteDeps,
): Promise<TextEchoJob> {
  const plain = req.add_special_tokens === false;
  const echoIds = job.echo?.some((p) => typeof p !== "string") ?? false;
  if (!plain && !echoIds) return job as TextEchoJob;
  const engine = deps.engines.resolve(job.model ?? deps.engines.defaultModel("chat"), "chat");
  const where = (i: number) => job.prompts.length > 1 ? `prompt.${i}` : "prompt";
  const prompts = plain
    ? await Promise.all(job.prompts.map(async (p) => {
      if (!("prompt" in p)) return p;
      if (engine.tokenize === undefined) {
        throw new ValidationError(
          `model '${engine.info.id}' cannot tokenize here: leave out add_special_tokens`,
          { param: "add_special_tokens" },
        );
      }
      const { tokens } = await engine.tokenize({ prompt: p.prompt, addSpecialTokens: false });
      // An empty text stays text: the engine names it (the prompt is empty).
      return tokens.length === 0 ? p : { tokenIds: tokens };
    }))
    : job.prompts;
  const echo = job.echo === undefined ? undefined : await Promise.all(
    job.echo.map(async (p, i) => {
      if (typeof p === "string") return p;
      if (engine.detokenize === undefined) {
        throw new ValidationError(
          `model '${engine.info.id}' cannot decode token ids here: echo needs text prompts`,
          { param: "echo" },
        );
      }
      try {
        return await engine.detokenize(p);
      } catch (err) {
        if (!(err instanceof ValidationError) || err.param !== "tokens") throw err;
        throw new ValidationError(err.message.replace(/^tokens/, where(i)), {
          param: where(i),
          code: "invalid_value",
          cause: err,
        });
      }
    }),
  );
  const { echo: _ids, ...rest } = job;
  return { ...rest, prompts, ...(echo === undefined ? {} : { echo }) };
}

// The legacy wire format: each delta carries its offset in the choice's text.
function completionFormat(job: TextEchoJob): GenerationFormat<TextCompletion> {
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
    withUsage: (chunk, usage) => ({ ...chunk, usage: buildUsage(usage) }),
  };
}

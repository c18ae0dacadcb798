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
  checkGenerationLimits,
  type CollectedGeneration,
  type GenerationFormat,
  type GenerationRequest,
  type GenerationRouteDeps,
  respondWithGenerations,
} from "./_generation.ts";
import { DEFAULT_ADMISSION_LIMITS } from "../engine/admission_limits.ts";
import type { GenerationEngine, PromptTokenLogprob, Usage } from "../core/inference_types.ts";
import { promptTokenCounts, scorePrompts } from "../engine/score_prompts.ts";
import { sseResponse } from "../http/sse_response.ts";
import { jsonResponse } from "../http/json_response.ts";
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
  const parsed = toCompletionJob(req);
  // One engine for all the request does: tokenizing, scoring prompts, generating.
  const engine = deps.engines.resolve(parsed.model, "chat");
  const job = await withModelTokenizer(engine, parsed, req);
  const request: GenerationRequest = { ...job, topLogprobsField: "logprobs" };
  if (job.echoLogprobs === undefined && job.params.maxTokens !== 0) {
    return await respondWithGenerations(ctx, { ...deps, engine }, request, completionFormat(job));
  }
  checkGenerationLimits(request, engine.info.limits ?? DEFAULT_ADMISSION_LIMITS);
  // `echo` with `logprobs` (the prompt's own log-probabilities): the engine runs each prompt
  // through the model once (a generation after it starts from the prompt's cache).
  const prompts = job.echoLogprobs === undefined ? undefined : await scorePrompts(
    engine,
    job.prompts,
    {
      topLogprobs: job.echoLogprobs,
      choices: job.n,
      generates: job.params.maxTokens !== 0,
      signal: ctx.signal,
    },
  );
  const format = completionFormat(job, prompts);
  if (job.params.maxTokens !== 0) {
    return await respondWithGenerations(ctx, { ...deps, engine }, request, format);
  }
  // `max_tokens: 0`: the prompt is the answer. Without `logprobs`, tokenizing and checking it is
  // all there is to do; the model need not run.
  const counts = prompts?.map((p) => p.length) ??
    await promptTokenCounts(engine, job.prompts, { choices: job.n, signal: ctx.signal });
  const usage = { promptTokens: counts.reduce((sum, c) => sum + c, 0), completionTokens: 0 };
  return echoOnly(ctx, deps, { job, model: engine.info.id, usage }, format);
}

// `max_tokens: 0` with `echo`: each choice is its prompt (with `logprobs`, its log-probabilities),
// ended for length, as OpenAI's legacy API and vLLM answer.
function echoOnly(
  ctx: RouteContext,
  deps: GenerationRouteDeps,
  answer: { job: TextEchoJob; model: string; usage: Usage },
  format: GenerationFormat<TextCompletion>,
): Response {
  const { job, usage } = answer;
  const meta = {
    id: `${format.idPrefix}-${crypto.randomUUID().replaceAll("-", "")}`,
    created: Math.floor(Date.now() / 1000),
    model: answer.model,
  };
  const choices = job.prompts.length * job.n;
  const logprobs = job.echoLogprobs === undefined ? undefined : [];
  deps.recordUsage(meta.model, usage);
  if (!job.stream) {
    const results: CollectedGeneration[] = Array.from({ length: choices }, () => ({
      text: "",
      logprobs,
      finishReason: "length",
      usage: { promptTokens: 0, completionTokens: 0 },
    }));
    return jsonResponse(format.complete(meta, results, usage));
  }
  const out = (chunk: TextCompletion) =>
    job.continuousUsage ? format.withUsage(chunk, usage) : chunk;
  async function* chunks() {
    for (let index = 0; index < choices; index++) {
      if (logprobs) yield out(format.delta(meta, index, "", logprobs));
      yield out(format.finish(meta, index, "length"));
    }
    if (job.includeUsage) yield format.usage(meta, usage);
  }
  return sseResponse(chunks(), {
    logger: ctx.logger,
    requestId: ctx.requestId,
    onError: ctx.countError,
  });
}

/** A completion job whose echoed prompts are all text. */
type TextEchoJob = Omit<CompletionJob, "echo"> & { echo?: string[] };

// What needs the model's tokenizer, as vLLM does it: `add_special_tokens: false` (text prompts
// tokenized here, without BOS, and sent as token ids) and `echo` of token-id prompts (decoded).
async function withModelTokenizer(
  engine: GenerationEngine,
  job: CompletionJob,
  req: CompletionRequest,
): Promise<TextEchoJob> {
  const plain = req.add_special_tokens === false;
  const echoIds = job.echo?.some((p) => typeof p !== "string") ?? false;
  if (!plain && !echoIds) return job as TextEchoJob;
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

// The legacy wire format: each delta carries its offset in the choice's text. `prompts`: each
// prompt's tokens with their log-probabilities (`echo` with `logprobs`), sent with its echo.
function completionFormat(
  job: TextEchoJob,
  prompts?: readonly PromptTokenLogprob[][],
): GenerationFormat<TextCompletion> {
  const { includeUsage, withTopLogprobs } = job;
  const offsets = new Array<number>(job.prompts.length * job.n).fill(0);
  // With `echo`, a choice's text starts with its prompt: sent with its first piece, or its end;
  // the generated tokens' offsets start after it.
  const echoed = offsets.map(() => job.echo === undefined);
  const echo = (index: number) => {
    if (echoed[index]) return { text: "" };
    echoed[index] = true;
    const prompt = Math.floor(index / job.n);
    const text = job.echo![prompt];
    return {
      text,
      promptLogprobs: prompts?.[prompt],
      generatedOffset: offsets[index] + text.length,
    };
  };
  return {
    idPrefix: "cmpl",
    complete: (meta, results, usage) =>
      buildTextCompletion(
        meta,
        results.map((r, index) => {
          const { text, ...echoed } = echo(index);
          return {
            index,
            text: text + r.text,
            finishReason: r.finishReason,
            logprobs: r.logprobs,
            withTopLogprobs,
            ...echoed,
          };
        }),
        { usage },
      ),
    delta: (meta, index, piece, logprobs) => {
      const { text, ...echoed } = echo(index);
      const chunk = buildTextCompletion(meta, [{
        index,
        text: text + piece,
        logprobs,
        textOffset: offsets[index],
        withTopLogprobs,
        ...echoed,
      }], { includeUsage });
      offsets[index] += text.length + piece.length;
      return chunk;
    },
    finish: (meta, index, finishReason) => {
      const { text, ...echoed } = echo(index);
      const chunk = buildTextCompletion(meta, [{
        index,
        text,
        finishReason,
        textOffset: offsets[index],
        withTopLogprobs,
        ...echoed,
      }], { includeUsage });
      offsets[index] += text.length;
      return chunk;
    },
    usage: (meta, usage) => buildTextCompletion(meta, [], { usage }),
    withUsage: (chunk, usage) => ({ ...chunk, usage: buildUsage(usage) }),
  };
}

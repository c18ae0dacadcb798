// Running several generations of one request: start them together, collect them, or merge their
// events in arrival order; map failures caused by an abort to the abort's reason. And the part
// the generation routes (chat, legacy completions) share: from a parsed request to a JSON or SSE
// answer.
import { CancelledError, ServiceError, SvcException } from "../core/errors.ts";
import {
  type AdmissionLimits,
  checkLimit,
  DEFAULT_ADMISSION_LIMITS,
} from "../engine/admission_limits.ts";
import type {
  FinishReason,
  GenerationEngine,
  GenerationEvent,
  GenerationJob,
  GenerationStream,
  PromptInput,
  SamplingParams,
  TokenLogprob,
  ToolCall,
  Usage,
} from "../core/inference_types.ts";
import type { ResponseMeta } from "../protocol/chat_response.ts";
import { ReasoningSplitter, splitReasoning } from "../protocol/reasoning.ts";
import { deriveChoiceSeed } from "../protocol/sampling.ts";
import { type ToolCallDelta, toolCallParser } from "../protocol/tool_call_parser.ts";
import type { UsageRecorder } from "./engine_metrics.ts";
import type { EngineRegistry } from "./engine_registry.ts";
import type { RouteContext } from "../http/http_app.ts";
import { sseResponse } from "../http/sse_response.ts";
import { jsonResponse } from "../http/json_response.ts";

/** What the generation routes need. */
export interface GenerationRouteDeps {
  engines: EngineRegistry;
  recordUsage: UsageRecorder;
}

export interface CollectedGeneration {
  /** The answer (without the reasoning, when it was split off). */
  text: string;
  /** The reasoning (`<think>` block), when the request splits it and the output had one. */
  reasoning?: string;
  logprobs: TokenLogprob[] | undefined;
  finishReason: FinishReason;
  usage: Usage;
  /** The tools the model called, when it could call tools and did. */
  toolCalls?: ToolCall[];
}

/** The error to report when work stopped because `signal` fired (shutdown: a 503). */
export function abortError(signal: AbortSignal): SvcException {
  const reason = signal.reason;
  return reason instanceof SvcException ? reason : new CancelledError();
}

/** The abort of one request: fires when the client/server signal does, or when we abort. */
export class RequestAbort {
  readonly controller: AbortController = new AbortController();
  /** Pass this to the engine. */
  readonly signal: AbortSignal;
  readonly #external: AbortSignal;

  constructor(external: AbortSignal) {
    this.#external = external;
    this.signal = AbortSignal.any([external, this.controller.signal]);
  }

  /** Stops every generation of the request. */
  abort(): void {
    this.controller.abort();
  }

  /** What to throw for `err`: the abort's reason when the client or server aborted, else `err`. */
  explain(err: unknown): unknown {
    return this.#external.aborted ? abortError(this.#external) : err;
  }
}

/** Starts every job (all or none); on failure the request is aborted and the error thrown. */
export async function startGenerations(
  engine: GenerationEngine,
  jobs: readonly GenerationJob[],
  abort: RequestAbort,
): Promise<GenerationStream[]> {
  try {
    return await engine.generateAll(jobs, abort.signal);
  } catch (err) {
    abort.abort();
    throw abort.explain(err);
  }
}

/** Reads a stream to its end. */
export async function collectGeneration(
  stream: GenerationStream,
  options: { logprobs: boolean },
): Promise<CollectedGeneration> {
  let text = "";
  const logprobs: TokenLogprob[] = [];
  for await (const event of stream) {
    if (event.type === "delta") {
      text += event.text;
      if (event.logprobs) logprobs.push(...event.logprobs);
    } else {
      return {
        text,
        logprobs: options.logprobs ? logprobs : undefined,
        finishReason: event.finishReason,
        usage: event.usage,
      };
    }
  }
  throw new ServiceError("the engine ended a generation without a finish event");
}

/** Collects every stream; the first failure aborts the rest. Errors after an abort say why. */
export async function collectAll(
  streams: readonly GenerationStream[],
  options: { logprobs: boolean; abort: RequestAbort },
): Promise<CollectedGeneration[]> {
  try {
    return await Promise.all(streams.map((s) => collectGeneration(s, options)));
  } catch (err) {
    options.abort.abort();
    throw options.abort.explain(err);
  }
}

/**
 * Yields the events of every stream tagged with its index, as they arrive. Stopping early, or an
 * error in one stream, closes the others.
 */
export async function* mergeGenerations(
  streams: readonly AsyncIterable<GenerationEvent>[],
): AsyncGenerator<{ index: number; event: GenerationEvent }, void, undefined> {
  const iterators = streams.map((s) => s[Symbol.asyncIterator]());
  type Pending = Promise<{ index: number; result: IteratorResult<GenerationEvent> }>;
  const pending = new Map<number, Pending>();
  const pull = (index: number) =>
    pending.set(index, iterators[index].next().then((result) => ({ index, result })));
  iterators.forEach((_, i) => pull(i));
  try {
    while (pending.size > 0) {
      const { index, result } = await Promise.race(pending.values());
      if (result.done) {
        pending.delete(index);
      } else {
        pull(index);
        yield { index, event: result.value };
      }
    }
  } finally {
    // Streams still running (an early stop or a failure elsewhere): close them.
    for (const index of pending.keys()) {
      iterators[index].return?.().catch(() => {});
    }
    for (const p of pending.values()) p.catch(() => {});
  }
}

/** A generation request as a route parsed it (chat: one prompt, its messages). */
export interface GenerationRequest {
  /** Absent: the server's one chat model (as vLLM defaults to its served model). */
  model?: string;
  /** Each prompt gets `n` choices, numbered prompt × n + j, as OpenAI numbers them. */
  prompts: readonly PromptInput[];
  params: SamplingParams;
  n: number;
  stream: boolean;
  /** The field that asks for alternatives per token: `top_logprobs` (chat), `logprobs` (legacy). */
  topLogprobsField: string;
  /** Streams end with a chunk carrying the usage (`stream_options.include_usage`). */
  includeUsage: boolean;
  /** Every chunk carries the usage so far (vLLM's `continuous_usage_stats`). */
  continuousUsage?: boolean;
  /**
   * Split reasoning (`<think>…</think>`) from the answer where the engine's stream says the model
   * writes it (chat); raw-prompt completions keep the text whole.
   */
  splitReasoning?: boolean;
}

/** How a route writes its answers; built per request, so it may keep state (text offsets). */
export interface GenerationFormat<Chunk> {
  /** Prefix of the response id, e.g. `chatcmpl`. */
  idPrefix: string;
  /** The whole answer (no streaming). */
  complete(meta: ResponseMeta, results: readonly CollectedGeneration[], usage: Usage): unknown;
  /** Chunks sent before any text (chat: the role of each choice). */
  opening?(meta: ResponseMeta, choices: number): Iterable<Chunk>;
  /**
   * A piece of text of choice `index` (`reasoning`: a piece of its reasoning, when split;
   * `toolCalls`: pieces of the tool calls it makes, when it may call tools).
   */
  delta(
    meta: ResponseMeta,
    index: number,
    text: string,
    logprobs: TokenLogprob[] | undefined,
    reasoning?: string,
    toolCalls?: ToolCallDelta[],
  ): Chunk;
  /** Choice `index` has finished. */
  finish(meta: ResponseMeta, index: number, reason: FinishReason): Chunk;
  /** The last chunk, with the usage of the whole request. */
  usage(meta: ResponseMeta, usage: Usage): Chunk;
  /** `chunk` carrying the usage so far (`continuous_usage_stats`). */
  withUsage(chunk: Chunk, usage: Usage): Chunk;
}

/**
 * Runs a generation request on its engine (`deps.engine`, when the route resolved it already) and
 * answers with JSON or an SSE stream written by `format`; records the usage once every choice has
 * finished.
 */
export async function respondWithGenerations<Chunk>(
  ctx: RouteContext,
  deps: GenerationRouteDeps & { engine?: GenerationEngine },
  request: GenerationRequest,
  format: GenerationFormat<Chunk>,
): Promise<Response> {
  const engine = deps.engine ?? deps.engines.resolve(request.model, "chat");
  checkGenerationLimits(request, engine.info.limits ?? DEFAULT_ADMISSION_LIMITS);
  const { params, n } = request;
  // Choice j of every prompt gets its own seed (derived from the request's).
  const jobs = request.prompts.flatMap((input) =>
    Array.from({ length: n }, (_, j) => {
      const seed = deriveChoiceSeed(params.seed, j);
      return { input, params: seed === undefined ? params : { ...params, seed } };
    })
  );
  const abort = new RequestAbort(ctx.signal);
  const streams = await startGenerations(engine, jobs, abort);
  const meta: ResponseMeta = {
    id: `${format.idPrefix}-${crypto.randomUUID().replaceAll("-", "")}`,
    created: Math.floor(Date.now() / 1000),
    model: engine.info.id,
  };
  // Each prompt counts once, not once per choice.
  const promptTokens = streams.reduce((sum, s, i) => (i % n === 0 ? sum + s.promptTokens : sum), 0);
  const logprobs = params.logprobs === true;
  if (!request.stream) {
    const collected = await collectAll(streams, { logprobs, abort });
    const results = collected.map((r, i) =>
      withToolCalls(request.splitReasoning ? split(r, streams[i]) : r, streams[i])
    );
    const usage = {
      promptTokens,
      completionTokens: results.reduce((sum, r) => sum + r.usage.completionTokens, 0),
      cachedTokens: results.reduce((sum, r, i) => i % n === 0 ? sum + cachedOf(r.usage) : sum, 0),
    };
    deps.recordUsage(meta.model, usage);
    return jsonResponse(format.complete(meta, results, usage));
  }
  const chunks = streamChunks(streams, format, {
    meta,
    splitReasoning: request.splitReasoning === true,
    promptTokens,
    n,
    logprobs,
    includeUsage: request.includeUsage,
    continuousUsage: request.continuousUsage === true,
    abort,
    recordUsage: deps.recordUsage,
  });
  return sseResponse(chunks, {
    abort: abort.controller,
    logger: ctx.logger,
    requestId: ctx.requestId,
    onError: ctx.countError,
  });
}

async function* streamChunks<Chunk>(
  streams: readonly GenerationStream[],
  format: GenerationFormat<Chunk>,
  opts: {
    meta: ResponseMeta;
    splitReasoning: boolean;
    promptTokens: number;
    /** Choices per prompt: the cached prompt tokens of each prompt count once. */
    n: number;
    logprobs: boolean;
    includeUsage: boolean;
    continuousUsage: boolean;
    abort: RequestAbort;
    recordUsage: UsageRecorder;
  },
): AsyncGenerator<Chunk, void, undefined> {
  const { meta } = opts;
  // vLLM's continuous_usage_stats: each chunk carries the usage so far, every choice's generated
  // tokens added up (a delta says how many its generation has made, a finish how many in all).
  const generated = new Array<number>(streams.length).fill(0);
  const out = (chunk: Chunk): Chunk =>
    opts.continuousUsage
      ? format.withUsage(chunk, {
        promptTokens: opts.promptTokens,
        completionTokens: generated.reduce((sum, g) => sum + g, 0),
      })
      : chunk;
  if (format.opening) {
    for (const chunk of format.opening(meta, streams.length)) {
      yield out(chunk);
    }
  }
  let completionTokens = 0;
  let cachedTokens = 0;
  let finished = 0;
  const splitters = streams.map((s) =>
    opts.splitReasoning && s.reasoning ? new ReasoningSplitter(s.reasoning) : undefined
  );
  const parsers = streams.map((s) => s.toolCalls ? toolCallParser(s.toolCalls) : undefined);
  // Text held back by the splitter (a tag not yet whole) or the parser (a marker not yet whole)
  // goes out with a later chunk.
  function* piece(index: number, text: string, logprobs: TokenLogprob[] | undefined, end: boolean) {
    const splitter = splitters[index];
    const part = splitter === undefined
      ? { reasoning: "", content: text }
      : end
      ? splitter.flush()
      : splitter.push(text);
    const parser = parsers[index];
    let calls: ToolCallDelta[] | undefined;
    if (parser !== undefined) {
      const parsed = parser.push(part.content);
      const tail = end ? parser.flush() : { content: "", calls: [] };
      part.content = parsed.content + tail.content;
      calls = [...parsed.calls, ...tail.calls].map(named(streams[index].toolName));
    }
    if (part.reasoning === "" && part.content === "" && !calls?.length && !logprobs?.length) {
      return;
    }
    const reasoning = part.reasoning || undefined;
    yield out(format.delta(
      meta,
      index,
      part.content,
      logprobs,
      reasoning,
      calls?.length ? calls : undefined,
    ));
  }
  try {
    for await (const { index, event } of mergeGenerations(streams)) {
      generated[index] = event.type === "finish"
        ? event.usage.completionTokens
        : event.completionTokens ?? generated[index] + (event.logprobs?.length || 1);
      if (event.type === "delta") {
        const logprobs = opts.logprobs ? event.logprobs ?? [] : undefined;
        yield* piece(index, event.text, logprobs, false);
      } else {
        yield* piece(index, "", opts.logprobs ? [] : undefined, true);
        completionTokens += event.usage.completionTokens;
        if (index % opts.n === 0) cachedTokens += cachedOf(event.usage);
        finished++;
        const calledTools = (parsers[index]?.calls.length ?? 0) > 0;
        const reason = calledTools && event.finishReason === "stop"
          ? "tool_calls"
          : event.finishReason;
        yield out(format.finish(meta, index, reason));
      }
    }
  } catch (err) {
    opts.abort.abort();
    throw opts.abort.explain(err);
  }
  if (finished < streams.length) {
    throw new ServiceError("the engine ended a generation without a finish event");
  }
  const usage = { promptTokens: opts.promptTokens, completionTokens, cachedTokens };
  opts.recordUsage(meta.model, usage);
  if (opts.includeUsage) yield format.usage(meta, usage);
}

/** A collected generation with its tool calls parsed out, when its model could call tools. */
function withToolCalls(result: CollectedGeneration, stream: GenerationStream): CollectedGeneration {
  if (stream.toolCalls === undefined) return result;
  const parser = toolCallParser(stream.toolCalls);
  const text = parser.push(result.text).content + parser.flush().content;
  if (parser.calls.length === 0) return { ...result, text };
  const finishReason = result.finishReason === "stop" ? "tool_calls" : result.finishReason;
  const toolCalls = parser.calls.map(named(stream.toolName));
  return { ...result, text, toolCalls, finishReason };
}

/**
 * A call (or a call's first delta) with the name `tool_choice` gave, when it gave one: the grammar
 * writes that name, so only a call cut short has another (a part of it, or none).
 */
function named(name: string | undefined) {
  return <T extends { name?: string }>(call: T): T =>
    name === undefined || call.name === undefined ? call : { ...call, name };
}

/** The engine's limits on what one request may ask, checked before anything is rendered. */
export function checkGenerationLimits(request: GenerationRequest, limits: AdmissionLimits): void {
  const { prompts, n } = request;
  checkLimit(limits, "maxPrompts", prompts.length, { what: "prompts", param: "prompt" });
  checkLimit(limits, "maxN", n, { what: "n", param: "n" });
  checkLimit(limits, "maxSequences", prompts.length * n, {
    what: "sequences the request starts (prompts × n)",
    param: "n",
  });
  checkLimit(limits, "maxTopLogprobs", request.params.topLogprobs ?? 0, {
    what: request.topLogprobsField,
    param: request.topLogprobsField,
  });
}

/** A collected generation with its reasoning split off, when its stream has reasoning tags. */
function split(result: CollectedGeneration, stream: GenerationStream): CollectedGeneration {
  if (stream.reasoning === undefined) return result;
  const { reasoning, content } = splitReasoning(result.text, stream.reasoning);
  return reasoning === undefined ? result : { ...result, text: content, reasoning };
}

function cachedOf(usage: Usage): number {
  return usage.cachedTokens ?? 0;
}

/**
 * The chat engine: renders prompts with the model's chat template, checks them against the
 * context, and runs each generation as a sequence of the continuous-batching scheduler.
 *
 * @module
 */

import { ContextLengthError, ValidationError } from "../../core/errors.ts";
import type {
  EngineHealth,
  EngineTokenizeResult,
  FinishReason,
  GenerationEngine,
  GenerationEvent,
  GenerationJob,
  GenerationStream,
  ModelInfo,
  PromptInput,
  PromptScoringOptions,
  PromptTokenLogprob,
  SamplingParams,
  TokenizeInput,
  ToolCallFormat,
  ToolDefinition,
} from "../../core/inference_types.ts";
import type { LoadedModel } from "../load_model.ts";
import {
  DecodeScheduler,
  DEFAULT_MAX_PREFILL_LOGITS,
  type SchedulerOptions,
  type SchedulerStats,
} from "./decode_scheduler.ts";
import { PromptScorer } from "./prompt_scorer.ts";
import { defaultPrefixCacheBytes } from "./prefix_cache.ts";
import { type DecoderPlan, OP_TYPES_OF_INTEREST } from "../families/decoder_family.ts";
import { planFor } from "../families/decoder_families.ts";
import { findOpTypes } from "../onnx_file.ts";
import { getLogger } from "../../core/logging.ts";
import { ChatSequence } from "./chat_sequence.ts";
import { promptParam, type RenderedPrompt, renderPrompt } from "./prompt.ts";
import { TokenizerThread } from "../tokenizer_thread.ts";
import {
  effectiveToolChoice,
  outputGrammar,
  toolCallFormatOf,
  toolCallMarkerTokens,
} from "./output_constraint.ts";
import { ConstrainedGrammar, TokenConstraint } from "../constrained/token_constraint.ts";
import { tokenBytesOf, type TokenizerJson, Vocabulary } from "../constrained/vocabulary.ts";
import {
  type AdmissionLimits,
  checkLimit,
  checkPromptTokens,
  checkTokenIds,
  DEFAULT_ADMISSION_LIMITS,
} from "../admission_limits.ts";

/** Settings of a chat engine. */
export interface ChatEngineOptions {
  id: string;
  ownedBy?: string;
  randomWeights?: boolean;
  /** Batching limits; `maxSequences: 1` switches continuous batching off. */
  scheduler?: Partial<SchedulerOptions>;
  /** Per-request limits (default {@link DEFAULT_ADMISSION_LIMITS}). */
  limits?: Partial<AdmissionLimits>;
}

/** Compiled output grammars an engine keeps (each with its cache of masks). */
const GRAMMAR_CACHE_SIZE = 32;

/**
 * Defaults: up to 16 sequences at once, 8k prompt tokens per prefill, 256 waiting, and at most 128
 * prompt tokens prefilled between two decode steps while others decode (longer prompts are
 * prefilled in chunks of 128 between the running batch's steps: on the 2-core benchmark machine
 * a 128-token chunk of the SmolLM2-135M-shaped model takes ~80 ms, 1.5 decode steps of 16).
 */
export const DEFAULT_SCHEDULER: SchedulerOptions = {
  maxSequences: 16,
  maxBatchTokens: 8192,
  maxQueue: 256,
  prefillChunk: 128,
};

/** The {@link GenerationEngine} for causal LMs. */
export class ChatEngine implements GenerationEngine {
  /** What it serves. */
  readonly info: ModelInfo;
  #model: LoadedModel;
  #scheduler: DecodeScheduler;
  /** Runs prompts for their log-probabilities (legacy completions' echo with logprobs). */
  #scorer: PromptScorer;
  #eosIds: Set<number>;
  #vocabSize: number;
  /** The tokenizer again, in a worker, for large inputs. */
  #tokenizer: TokenizerThread;
  #state: EngineHealth = { state: "ready" };
  #vocabulary: Promise<Vocabulary> | undefined;
  #tokenBytes: Promise<(Uint8Array | null)[]> | undefined;
  /** Compiled grammars by request format, most recently used last (their masks are cached). */
  #grammars = new Map<string, ConstrainedGrammar>();
  /** How this model's template has it write tool calls. */
  #toolCalls: ToolCallFormat;
  /** Special tokens of the tokenizer that are that format's markup, with their text. */
  #markerTokens: Map<number, string>;
  #markerIds: ReadonlySet<number>;

  private constructor(
    model: LoadedModel,
    plan: DecoderPlan,
    eosIds: Set<number>,
    options: ChatEngineOptions,
  ) {
    this.#model = model;
    this.#eosIds = eosIds;
    this.#vocabSize = plan.vocabSize;
    this.#tokenizer = new TokenizerThread(model.tokenizer, model.folder, model.device);
    this.#toolCalls = toolCallFormatOf(model.tokenizer.chat_template);
    this.#markerTokens = toolCallMarkerTokens(model.tokenizer, this.#toolCalls, eosIds);
    this.#markerIds = new Set(this.#markerTokens.keys());
    const config = model.config;
    this.info = {
      id: options.id,
      kind: "chat",
      contextLength: Math.min(
        Number(config.max_position_embeddings ?? Infinity),
        model.tokenizer.model_max_length,
      ),
      created: Math.floor(Date.now() / 1000),
      ownedBy: options.ownedBy ?? "svc",
      randomWeights: options.randomWeights ?? false,
      limits: { ...DEFAULT_ADMISSION_LIMITS, ...options.limits },
    };
    const scheduling: SchedulerOptions = {
      ...DEFAULT_SCHEDULER,
      prefixCacheBytes: defaultPrefixCacheBytes(model.device),
      ...options.scheduler,
    };
    this.#scheduler = new DecodeScheduler(model.session, plan, scheduling);
    this.#scorer = new PromptScorer(plan, this.#scheduler, {
      tokenizer: model.tokenizer,
      limits: this.info.limits!,
      render: (input, param) => this.#render(input, param),
      tokenBytes: () => this.#loadTokenBytes(),
      maxLogits: scheduling.maxPrefillLogits ?? DEFAULT_MAX_PREFILL_LOGITS,
      maxChunk: scheduling.prefillChunk ?? scheduling.maxBatchTokens,
    });
  }

  /**
   * Builds the engine over a loaded causal LM, or refuses (releasing its session) a model whose
   * inputs we cannot feed.
   */
  static async create(model: LoadedModel, options: ChatEngineOptions): Promise<ChatEngine> {
    let plan: DecoderPlan;
    try {
      plan = planFor({
        inputs: model.session.inputs,
        outputNames: model.session.outputNames,
        config: model.config,
        opTypes: await findOpTypes(model.modelFile, OP_TYPES_OF_INTEREST),
      }, options.id);
    } catch (err) {
      await model.session.release();
      throw err;
    }
    const log = getLogger("engine.chat");
    log.info(`model ${options.id}: ${plan.family.name} export, ${plan.batching} batching`, {
      dtype: model.dtype,
      file: model.modelFile,
    });
    if (plan.batching === "single") {
      log.warn(
        `model ${options.id} (${model.dtype}) quantizes activations with one scale per tensor, so ` +
          `batching would change results: it serves one sequence at a time. For batched serving ` +
          `choose a dtype whose file has no DynamicQuantizeLinear (e.g. --dtype q4 or fp32).`,
      );
    }
    const generation = await model.readJson("generation_config.json");
    const eos = [generation?.eos_token_id, model.config.eos_token_id, model.tokenizer.eos_token_id]
      .flat()
      .filter((id): id is number => typeof id === "number");
    const engine = new ChatEngine(model, plan, new Set(eos), options);
    // The vocabulary's bytes and trie (tools, structured outputs, logprobs) are built now, while
    // the model loads: built on the first such request, they held the server's thread 0.5-0.8 s
    // (a 49K vocabulary) and every other request waited. A failure is the first such request's.
    await engine.#loadVocabulary().catch(() => {});
    return engine;
  }

  /** Whether it is ready, and its queue. */
  health(): EngineHealth {
    return this.#state;
  }

  /** Scheduler load for metrics. */
  stats(): SchedulerStats {
    return this.#scheduler.stats();
  }

  countTokens(text: string): number {
    return this.#model.tokenizer.encode(text, { add_special_tokens: false }).length;
  }

  tokenize(input: TokenizeInput, options?: { tokenStrs?: boolean }): Promise<EngineTokenizeResult> {
    return this.#tokenizer.tokenize(input, this.info.id, options);
  }

  detokenize(ids: number[]): Promise<string> {
    return this.#tokenizer.detokenize(ids);
  }

  /** Renders and tokenizes a prompt. */
  promptIds(input: PromptInput): number[] {
    return renderPrompt(this.#model.tokenizer, input, this.info.id).ids;
  }

  generate(
    input: PromptInput,
    params: SamplingParams,
    signal?: AbortSignal,
  ): Promise<GenerationStream> {
    return this.generateAll([{ input, params }], signal).then((streams) => streams[0]);
  }

  /**
   * Renders each prompt once, checks every job against the vocabulary, the context and the
   * request's prompt token limit, builds each job's output constraint (tools, response format),
   * then queues them all together (or refuses them all).
   */
  async generateAll(
    jobs: readonly GenerationJob[],
    signal?: AbortSignal,
  ): Promise<GenerationStream[]> {
    this.#scheduler.checkRoom(jobs.length); // before any work, whatever the number of jobs
    const rendered = new Map<PromptInput, RenderedPrompt>();
    // Prompt k of several (each job of its `n` choices shares its input) is named `prompt.k`.
    const inputs = [...new Set(jobs.map((job) => job.input))];
    let total = 0;
    const checked: {
      input: PromptInput;
      prompt: RenderedPrompt;
      params: SamplingParams;
      maxNewTokens: number;
    }[] = [];
    for (const { input, params } of jobs) {
      let prompt = rendered.get(input);
      if (prompt === undefined) {
        prompt = await this.#render(input, promptParam(input, inputs));
        rendered.set(input, prompt);
      }
      total += prompt.ids.length;
      checked.push({ input, prompt, params, maxNewTokens: this.#room(prompt.ids.length, params) });
    }
    for (const { params } of jobs) {
      if (params.logitBias) {
        checkTokenIds(Object.keys(params.logitBias).map(Number), this.#vocabSize, "logit_bias");
      }
      if (params.stopTokenIds) {
        checkTokenIds(params.stopTokenIds, this.#vocabSize, "stop_token_ids");
      }
    }
    if (jobs.length > 0) {
      checkPromptTokens(this.info.limits!, total, promptParam(jobs[0].input));
      const generated = checked.reduce((sum, job) => sum + job.maxNewTokens, 0);
      const unset = jobs.some(({ params }) => params.maxTokens === undefined);
      checkLimit(this.info.limits!, "maxGeneratedTokens", generated, {
        what: "tokens the request may generate (max_tokens × n" +
          (unset ? ", max_tokens unset: the room each prompt leaves in the context" : "") + ")",
        param: "max_tokens",
      });
    }
    // Each sequence gets its own constraint state; compiling a grammar (or loading the
    // vocabulary) happens before anything is queued, so a refused schema queues nothing.
    const constraints: (TokenConstraint | undefined)[] = [];
    for (const { input, params } of jobs) {
      constraints.push(await this.#constraint(params, toolsOf(input)));
    }
    // A token's own bytes for logprobs (a piece of a multi-byte character is not whole UTF-8).
    const tokenBytes = jobs.some(({ params }) => params.logprobs || params.topLogprobs)
      ? await this.#loadTokenBytes()
      : undefined;
    const sequences = checked.map(({ input, prompt, params, maxNewTokens }, i) =>
      new ChatSequence({
        promptIds: prompt.ids,
        params,
        maxNewTokens,
        eosIds: this.#eosIds,
        tokenizer: this.#model.tokenizer,
        tokenBytes,
        signal,
        constraint: constraints[i],
        stopsOnlyInText: effectiveToolChoice(params, toolsOf(input)) !== "none",
        // Where calls are parsed, their marker tokens reach the parser whatever skip_special_tokens.
        keptSpecialIds: effectiveToolChoice(params, toolsOf(input)) === "none"
          ? undefined
          : this.#markerIds,
      })
    );
    this.#scheduler.submitAll(sequences);
    return sequences.map((sequence, i) => {
      const { input, prompt: { reasoning }, params } = checked[i];
      const constraint = constraints[i];
      const choice = effectiveToolChoice(params, toolsOf(input));
      // Output held to a grammar from its first token has no reasoning block to split off.
      const freeStart = constraint === undefined || (choice === "auto" && !params.responseFormat);
      return Object.assign(
        sequence.stream(),
        reasoning && freeStart ? { reasoning } : {},
        choice === "none" ? {} : { toolCalls: this.#toolCalls },
        typeof choice === "object" ? { toolName: choice.name } : {},
      );
    });
  }

  /**
   * Each prompt's tokens with their log-probabilities given the tokens before them (the first
   * has none), run between decode steps (prompt_scorer.ts).
   */
  promptLogprobs(
    inputs: readonly PromptInput[],
    options: PromptScoringOptions,
  ): Promise<PromptTokenLogprob[][]> {
    return this.#scorer.score(inputs, options);
  }

  /** Each prompt's token count, rendered and checked as for scoring, running no model. */
  checkPrompts(
    inputs: readonly PromptInput[],
    options: { choices?: number } = {},
  ): Promise<number[]> {
    return this.#scorer.check(inputs, options.choices);
  }

  // The constraint of one sequence; grammars are compiled once per format and kept with their masks.
  async #constraint(
    params: SamplingParams,
    tools: ToolDefinition[] | undefined,
  ): Promise<TokenConstraint | undefined> {
    const key = JSON.stringify([
      params.responseFormat,
      effectiveToolChoice(params, tools),
      params.parallelToolCalls,
      params.allowedTools,
      tools,
    ]);
    let grammar = this.#grammars.get(key);
    if (grammar === undefined) {
      const root = outputGrammar(params, tools, this.#toolCalls);
      if (root === null) return undefined;
      grammar = new ConstrainedGrammar(root, await this.#loadVocabulary());
      if (this.#grammars.size >= GRAMMAR_CACHE_SIZE) {
        this.#grammars.delete(this.#grammars.keys().next().value!);
      }
    } else {
      this.#grammars.delete(key);
    }
    this.#grammars.set(key, grammar);
    return new TokenConstraint(grammar, this.#eosIds);
  }

  #loadVocabulary(): Promise<Vocabulary> {
    return this.#vocabulary ??= this.#loadTokenBytes().then((bytes) =>
      new Vocabulary(bytes, Number(this.#model.config.vocab_size ?? 0))
    );
  }

  #loadTokenBytes(): Promise<(Uint8Array | null)[]> {
    return this.#tokenBytes ??= this.#model.readJson("tokenizer.json").then((json) => {
      const bytes = tokenBytesOf((json ?? {}) as TokenizerJson);
      // Tool-call markers that are special tokens stand for their text, so grammars can choose them.
      for (const [id, text] of this.#markerTokens) bytes[id] = new TextEncoder().encode(text);
      return bytes;
    });
  }

  /** Renders a prompt and checks it: not empty, its ids in the vocabulary, shorter than the context. */
  async #render(input: PromptInput, param: string): Promise<RenderedPrompt> {
    // A large prompt is rendered and encoded in the tokenizer's worker, off this thread.
    const prompt = await this.#tokenizer.render(input, this.info.id);
    if ("tokenIds" in input) checkTokenIds(prompt.ids, this.#vocabSize, param);
    const context = this.info.contextLength;
    if (prompt.ids.length === 0) throw new ValidationError("the prompt is empty", { param });
    if (prompt.ids.length >= context) {
      throw new ContextLengthError(
        `the prompt has ${prompt.ids.length} tokens, but model '${this.info.id}' has a context ` +
          `of ${context} tokens (prompt and completion together); shorten the prompt`,
        { param },
      );
    }
    return prompt;
  }

  /** Most tokens a prompt of `length` tokens may generate: `max_tokens`, within the context. */
  #room(length: number, params: SamplingParams): number {
    const context = this.info.contextLength;
    const room = context - length;
    if (params.maxTokens !== undefined && params.maxTokens > room) {
      throw new ContextLengthError(
        `the prompt has ${length} tokens and max_tokens asks for ${params.maxTokens}, ` +
          `more than the ${context}-token context of model '${this.info.id}'; ask for at most ${room}`,
        { param: "max_tokens" },
      );
    }
    return params.maxTokens ?? room;
  }

  /** Stops decoding and frees the session. */
  async dispose(): Promise<void> {
    this.#state = { state: "stopped" };
    await this.#scheduler.idle();
    this.#tokenizer.release();
    await this.#model.session.release();
  }
}

/** The tools a prompt offers the model (chat messages only). */
function toolsOf(input: PromptInput): ToolDefinition[] | undefined {
  return "messages" in input ? input.tools : undefined;
}

/** Collects a whole generation: text, finish reason and usage. For tests and the client. */
export async function collect(stream: AsyncIterable<GenerationEvent>): Promise<{
  text: string;
  finishReason: FinishReason;
  completionTokens: number;
}> {
  let text = "";
  for await (const event of stream) {
    if (event.type === "delta") text += event.text;
    else {return {
        text,
        finishReason: event.finishReason,
        completionTokens: event.usage.completionTokens,
      };}
  }
  throw new Error("the generation ended without a finish event");
}

/**
 * The chat engine: renders prompts with the model's chat template, checks them against the
 * context, and runs each generation as a sequence of the continuous-batching scheduler.
 *
 * @module
 */

import { ContextLengthError, ValidationError } from "../../core/errors.ts";
import type {
  EmbedResult,
  EngineHealth,
  FinishReason,
  GenerationEvent,
  GenerationStream,
  InferenceEngine,
  ModelInfo,
  PromptInput,
  SamplingParams,
  ToolDefinition,
} from "../types.ts";
import type { LoadedModel } from "../load_model.ts";
import { DecodeScheduler, type SchedulerOptions, type SchedulerStats } from "./decode_scheduler.ts";
import { type DecoderPlan, OP_TYPES_OF_INTEREST } from "../families/decoder_family.ts";
import { planFor } from "../families/decoder_families.ts";
import { findOpTypes } from "../onnx_file.ts";
import { getLogger } from "../../core/logging.ts";
import { ChatSequence } from "./chat_sequence.ts";
import { renderPrompt } from "./prompt.ts";
import { effectiveToolChoice, HERMES_TOOL_CALLS, outputGrammar } from "./output_constraint.ts";
import { ConstrainedGrammar, TokenConstraint } from "../constrained/token_constraint.ts";
import { type TokenizerJson, Vocabulary } from "../constrained/vocabulary.ts";

/** Settings of a chat engine. */
export interface ChatEngineOptions {
  id: string;
  ownedBy?: string;
  randomWeights?: boolean;
  /** Batching limits; `maxSequences: 1` switches continuous batching off. */
  scheduler?: Partial<SchedulerOptions>;
}

/** Compiled output grammars an engine keeps (each with its cache of masks). */
const GRAMMAR_CACHE_SIZE = 32;

/** Defaults: up to 16 sequences at once, 8k prompt tokens per prefill, 256 waiting. */
export const DEFAULT_SCHEDULER: SchedulerOptions = {
  maxSequences: 16,
  maxBatchTokens: 8192,
  maxQueue: 256,
};

/** An {@link InferenceEngine} for causal LMs. */
export class ChatEngine implements InferenceEngine {
  readonly info: ModelInfo;
  #model: LoadedModel;
  #scheduler: DecodeScheduler;
  #eosIds: Set<number>;
  #state: EngineHealth = { state: "ready" };
  #vocabulary: Promise<Vocabulary> | undefined;
  /** Compiled grammars by request format, most recently used last (their masks are cached). */
  #grammars = new Map<string, ConstrainedGrammar>();

  private constructor(
    model: LoadedModel,
    plan: DecoderPlan,
    eosIds: Set<number>,
    options: ChatEngineOptions,
  ) {
    this.#model = model;
    this.#eosIds = eosIds;
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
    };
    this.#scheduler = new DecodeScheduler(model.session, plan, {
      ...DEFAULT_SCHEDULER,
      ...options.scheduler,
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
    return new ChatEngine(model, plan, new Set(eos), options);
  }

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

  /** Renders and tokenizes a prompt. */
  promptIds(input: PromptInput): number[] {
    return renderPrompt(this.#model.tokenizer, input, this.info.id).ids;
  }

  async generate(
    input: PromptInput,
    params: SamplingParams,
    signal?: AbortSignal,
  ): Promise<GenerationStream> {
    const { ids: promptIds, reasoning } = renderPrompt(
      this.#model.tokenizer,
      input,
      this.info.id,
    );
    const context = this.info.contextLength;
    if (promptIds.length === 0) {
      throw new ValidationError("the prompt is empty", { param: "messages" });
    }
    if (promptIds.length >= context) {
      throw new ContextLengthError(
        `the prompt has ${promptIds.length} tokens, but model '${this.info.id}' has a context ` +
          `of ${context} tokens (prompt and completion together); shorten the prompt`,
        { param: "messages" },
      );
    }
    const room = context - promptIds.length;
    if (params.maxTokens !== undefined && params.maxTokens > room) {
      throw new ContextLengthError(
        `the prompt has ${promptIds.length} tokens and max_tokens asks for ${params.maxTokens}, ` +
          `more than model '${this.info.id}''s context of ${context} tokens; ask for at most ${room}`,
        { param: "max_tokens" },
      );
    }
    const tools = "messages" in input ? input.tools : undefined;
    const constraint = await this.#constraint(params, tools);
    const sequence = new ChatSequence({
      promptIds,
      params,
      maxNewTokens: params.maxTokens ?? room,
      eosIds: this.#eosIds,
      tokenizer: this.#model.tokenizer,
      signal,
      constraint,
    });
    this.#scheduler.submit(sequence);
    const stream: GenerationStream = sequence.stream();
    const choice = effectiveToolChoice(params, tools);
    // Output held to a grammar from its first token has no reasoning block to split off.
    const freeStart = constraint === undefined || (choice === "auto" && !params.responseFormat);
    return Object.assign(
      stream,
      reasoning && freeStart ? { reasoning } : {},
      choice === "none" ? {} : { toolCalls: HERMES_TOOL_CALLS },
    );
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
      tools,
    ]);
    let grammar = this.#grammars.get(key);
    if (grammar === undefined) {
      const root = outputGrammar(params, tools, HERMES_TOOL_CALLS);
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
    return this.#vocabulary ??= this.#model.readJson("tokenizer.json").then((json) =>
      Vocabulary.fromTokenizerJson(
        (json ?? {}) as TokenizerJson,
        Number(this.#model.config.vocab_size ?? 0),
      )
    );
  }

  embed(): Promise<EmbedResult> {
    return Promise.reject(
      new ValidationError(
        `model '${this.info.id}' is a chat model; use /v1/chat/completions or /v1/completions`,
        { param: "model", code: "wrong_model_kind" },
      ),
    );
  }

  async dispose(): Promise<void> {
    this.#state = { state: "stopped" };
    await this.#scheduler.idle();
    await this.#model.session.release();
  }
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

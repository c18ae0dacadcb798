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
  GenerationJob,
  GenerationStream,
  InferenceEngine,
  ModelInfo,
  PromptInput,
  SamplingParams,
} from "../types.ts";
import type { LoadedModel } from "../load_model.ts";
import { DecodeScheduler, type SchedulerOptions, type SchedulerStats } from "./decode_scheduler.ts";
import { type DecoderPlan, OP_TYPES_OF_INTEREST } from "../families/decoder_family.ts";
import { planFor } from "../families/decoder_families.ts";
import { findOpTypes } from "../onnx_file.ts";
import { getLogger } from "../../core/logging.ts";
import { ChatSequence } from "./chat_sequence.ts";
import { type RenderedPrompt, renderPrompt } from "./prompt.ts";
import {
  type AdmissionLimits,
  checkLimit,
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
  #vocabSize: number;
  #state: EngineHealth = { state: "ready" };

  private constructor(
    model: LoadedModel,
    plan: DecoderPlan,
    eosIds: Set<number>,
    options: ChatEngineOptions,
  ) {
    this.#model = model;
    this.#eosIds = eosIds;
    this.#vocabSize = plan.vocabSize;
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

  generate(
    input: PromptInput,
    params: SamplingParams,
    signal?: AbortSignal,
  ): Promise<GenerationStream> {
    return this.generateAll([{ input, params }], signal).then((streams) => streams[0]);
  }

  /**
   * Renders each prompt once, checks every job against the vocabulary, the context and the
   * request's prompt token limit, then queues them all together (or refuses them all).
   */
  generateAll(jobs: readonly GenerationJob[], signal?: AbortSignal): Promise<GenerationStream[]> {
    try {
      this.#scheduler.checkRoom(jobs.length); // before any work, whatever the number of jobs
      const rendered = new Map<PromptInput, RenderedPrompt>();
      let total = 0;
      const checked = jobs.map(({ input, params }) => {
        let prompt = rendered.get(input);
        if (prompt === undefined) {
          prompt = this.#render(input);
          rendered.set(input, prompt);
        }
        total += prompt.ids.length;
        return { prompt, params, maxNewTokens: this.#room(prompt.ids.length, params) };
      });
      if (jobs.length > 0) {
        checkLimit(this.info.limits!, "maxPromptTokens", total, {
          what: "prompt tokens of the request (every prompt counted once per choice)",
          param: promptParam(jobs[0].input),
        });
      }
      const sequences = checked.map(({ prompt, params, maxNewTokens }) =>
        new ChatSequence({
          promptIds: prompt.ids,
          params,
          maxNewTokens,
          eosIds: this.#eosIds,
          tokenizer: this.#model.tokenizer,
          signal,
        })
      );
      this.#scheduler.submitAll(sequences);
      return Promise.resolve(sequences.map((sequence, i) => {
        const stream = sequence.stream();
        const { reasoning } = checked[i].prompt;
        return reasoning ? Object.assign(stream, { reasoning }) : stream;
      }));
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /** Renders a prompt and checks it: not empty, its ids in the vocabulary, shorter than the context. */
  #render(input: PromptInput): RenderedPrompt {
    const prompt = renderPrompt(this.#model.tokenizer, input, this.info.id);
    const param = promptParam(input);
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
          `more than model '${this.info.id}''s context of ${context} tokens; ask for at most ${room}`,
        { param: "max_tokens" },
      );
    }
    return params.maxTokens ?? room;
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

/** The request field a prompt came from, for error messages. */
function promptParam(input: PromptInput): string {
  return "messages" in input ? "messages" : "prompt";
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

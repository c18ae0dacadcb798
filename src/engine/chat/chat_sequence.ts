/**
 * One generation as the decode scheduler runs it: samples each token with its own parameters and
 * seed, turns tokens into whole-character text, holds back and cuts stop strings, and pushes
 * events to its stream.
 *
 * @module
 */

import type {
  GenerationEvent,
  GenerationStream,
  SamplingParams,
  TokenLogprob,
} from "../../core/inference_types.ts";
import type { Tokenizer } from "../load_model.ts";
import type { ScheduledSequence } from "./decode_scheduler.ts";
import { type SampleResult, type SamplerState, SequenceSampler } from "../decoding/sampler.ts";
import type { LoopSampler } from "../decode_loop.ts";
import { type DecodeFn, TextStream } from "../decoding/text_stream.ts";
import { type StopMatch, StopMatcher } from "../decoding/stop_matcher.ts";
import { EventQueue } from "./event_queue.ts";
import type { TokenConstraint } from "../constrained/token_constraint.ts";

/** Inputs of a {@link ChatSequence}. */
export interface ChatSequenceOptions {
  promptIds: number[];
  params: SamplingParams;
  maxNewTokens: number;
  eosIds: ReadonlySet<number>;
  tokenizer: Tokenizer;
  /** Each token's own bytes by id (for logprobs); the UTF-8 of its text where null or absent. */
  tokenBytes?: readonly (Uint8Array | null)[];
  signal?: AbortSignal;
  /** Holds the output to a grammar (constrained decoding). */
  constraint?: TokenConstraint;
  /**
   * The grammar holds tool calls: stop strings apply only to free text, never inside a call's
   * markup and arguments (OpenAI's stop sequences end content, not calls).
   */
  stopsOnlyInText?: boolean;
  /**
   * Special tokens that stay in the text even when the request skips special tokens: the
   * tool-call markers (`[TOOL_CALLS]`, `<｜tool▁sep｜>` …) the tool-call parser must read. The
   * parser takes them out of the content, so the client never sees them there.
   */
  keptSpecialIds?: ReadonlySet<number>;
}

const utf8 = new TextEncoder();

/**
 * The text of generated ids: special tokens dropped when `skip` (vLLM's `skip_special_tokens`,
 * default true), except the `kept` ones, which are decoded in place like any other token.
 */
function detokenizer(tokenizer: Tokenizer, skip: boolean, kept?: ReadonlySet<number>): DecodeFn {
  if (!skip || kept === undefined || kept.size === 0) {
    return (ids) => tokenizer.decode(ids, { skip_special_tokens: skip });
  }
  const dropped = new Set(tokenizer.all_special_ids.filter((id) => !kept.has(id)));
  return (ids) => {
    const shown = ids.filter((id) => !dropped.has(id));
    // transformers.js refuses to decode no ids.
    return shown.length === 0 ? "" : tokenizer.decode(shown, { skip_special_tokens: false });
  };
}

/** A generation: a {@link ScheduledSequence} on one side, a {@link GenerationStream} on the other. */
export class ChatSequence implements ScheduledSequence {
  readonly promptIds: readonly number[];
  readonly signal: AbortSignal;
  /** Prompt tokens the scheduler found in the prefix cache. */
  cachedTokens = 0;
  #abort = new AbortController();
  #sampler: SequenceSampler;
  #text: TextStream;
  #stops: StopMatcher;
  #events: EventQueue<GenerationEvent>;
  #tokenizer: Tokenizer;
  #tokenBytes: readonly (Uint8Array | null)[];
  #eosIds: ReadonlySet<number>;
  /** Stop token ids whose own text ends the output (`include_stop_str_in_output`, as vLLM). */
  #writtenStops: ReadonlySet<number>;
  #maxNewTokens: number;
  #generated = 0;
  #wantLogprobs: boolean;
  #pendingLogprobs: TokenLogprob[] = [];
  #constraint: TokenConstraint | undefined;
  #stopsOnlyInText: boolean;
  #params: SamplingParams;

  constructor(options: ChatSequenceOptions) {
    const { promptIds, params, tokenizer } = options;
    this.promptIds = promptIds;
    this.#params = params;
    // The sequence stops on the caller's abort and when its stream is dropped.
    this.signal = options.signal
      ? AbortSignal.any([options.signal, this.#abort.signal])
      : this.#abort.signal;
    // End-of-sequence ends it unless ignored; the request's stop token ids always do.
    this.#eosIds = new Set([
      ...(params.ignoreEos ? [] : options.eosIds),
      ...(params.stopTokenIds ?? []),
    ]);
    const modelEos = params.ignoreEos ? new Set<number>() : options.eosIds;
    this.#writtenStops = new Set(
      params.includeStopStrInOutput
        ? (params.stopTokenIds ?? []).filter((id) => !modelEos.has(id))
        : [],
    );
    this.#sampler = new SequenceSampler(params, { promptTokens: promptIds, endIds: this.#eosIds });
    const decode = detokenizer(
      tokenizer,
      params.skipSpecialTokens !== false,
      options.keptSpecialIds,
    );
    // The last prompt tokens give the detokenizer context (leading spaces come out right).
    this.#text = new TextStream(decode, { contextIds: promptIds.slice(-4) });
    this.#stops = new StopMatcher(params.stop ?? []);
    this.#events = new EventQueue(() => this.#abort.abort());
    this.#tokenizer = tokenizer;
    this.#tokenBytes = options.tokenBytes ?? [];
    this.#maxNewTokens = options.maxNewTokens;
    this.#wantLogprobs = Boolean(params.logprobs || params.topLogprobs);
    this.#constraint = options.constraint;
    this.#stopsOnlyInText = options.stopsOnlyInText ?? false;
  }

  /** The consumer's side. */
  stream(): GenerationStream {
    const events = this.#events;
    const promptTokens = this.promptIds.length;
    return { promptTokens, [Symbol.asyncIterator]: () => events[Symbol.asyncIterator]() };
  }

  /**
   * Its sampler as the model worker rebuilds it (decode_loop.ts), or null when this thread must
   * choose (a constraint) or see more than the token (logprobs).
   */
  loopSampler(): LoopSampler | null {
    if (this.#constraint !== undefined || this.#sampler.wantsLogprobs) return null;
    const p = this.#params;
    const params: SamplingParams = {
      temperature: p.temperature,
      topP: p.topP,
      topK: p.topK,
      seed: p.seed,
      presencePenalty: p.presencePenalty,
      frequencyPenalty: p.frequencyPenalty,
      repetitionPenalty: p.repetitionPenalty,
      logitBias: p.logitBias,
      minP: p.minP,
      minTokens: p.minTokens,
    };
    const repetition = p.repetitionPenalty !== undefined && p.repetitionPenalty !== 1;
    return {
      params,
      ...(repetition ? { promptTokens: [...this.promptIds] } : {}),
      stream: this.#sampler.rng.stream,
      state: this.#sampler.snapshot(),
      endIds: [...this.#eosIds],
    };
  }

  /** Continues its sampler from where the model worker's copy left it. */
  restoreSampler(state: SamplerState): void {
    this.#sampler.restore(state);
  }

  /** Tokens it may still generate. */
  get remainingTokens(): number {
    return this.#maxNewTokens - this.#generated;
  }

  accept(logits: Float32Array): number | null {
    return this.#take(this.#sampler.sample(logits, this.#constraint));
  }

  /** Takes a token the model worker chose with a copy of its sampler ({@link loopSampler}). */
  acceptToken(id: number): number | null {
    return this.#take({ tokenId: id });
  }

  #take(sample: SampleResult): number | null {
    const id = sample.tokenId;
    this.#generated++;
    if (this.#eosIds.has(id)) {
      if (!this.#writtenStops.has(id)) {
        this.#finish("stop", this.#drain());
        return null;
      }
      // Its text ends the output; a stop string it completes ends it there, written too.
      const matched = this.#matchStops(this.#text.push(id));
      this.#finish(
        "stop",
        matched.stopped ? matched.text + matched.stop : matched.text + this.#drain(),
      );
      return null;
    }
    this.#constraint?.advance(id);
    if (this.#wantLogprobs) this.#pendingLogprobs.push(this.#logprob(id, sample));
    const matched = this.#matchStops(this.#text.push(id));
    if (matched.stopped) {
      this.#finish(
        "stop",
        matched.text + (this.#params.includeStopStrInOutput ? matched.stop : ""),
      );
      return null;
    }
    // A complete grammar allows only the end: stop now instead of spending a step on EOS.
    if (this.#constraint?.complete) {
      this.#finish("stop", matched.text + this.#drain());
      return null;
    }
    if (this.#generated >= this.#maxNewTokens) {
      this.#finish("length", matched.text + this.#drain());
      return null;
    }
    if (matched.text) this.#emit(matched.text);
    return id;
  }

  // Stop strings over the new text; outside free text (a tool call), what the matcher held back
  // comes out as it is.
  #matchStops(text: string): StopMatch {
    if (!this.#stopsOnlyInText || this.#constraint?.inFreeText !== false) {
      return this.#stops.push(text);
    }
    return { text: this.#stops.flush() + text, stopped: false };
  }

  /** Text still held back by the detokenizer and the stop matcher, at the end. */
  #drain(): string {
    const tail = this.#matchStops(this.#text.flush());
    if (!tail.stopped) return tail.text + this.#stops.flush();
    return tail.text + (this.#params.includeStopStrInOutput ? tail.stop : "");
  }

  fail(err: unknown): void {
    this.#events.fail(err);
  }

  #emit(text: string): void {
    const event: GenerationEvent = { type: "delta", text, completionTokens: this.#generated };
    if (this.#wantLogprobs) {
      event.logprobs = this.#pendingLogprobs;
      this.#pendingLogprobs = [];
    }
    this.#events.push(event);
  }

  #finish(finishReason: "stop" | "length", text: string): void {
    if (text || this.#pendingLogprobs.length > 0) this.#emit(text);
    this.#events.push({
      type: "finish",
      finishReason,
      usage: {
        promptTokens: this.promptIds.length,
        completionTokens: this.#generated,
        cachedTokens: this.cachedTokens,
      },
    });
    this.#events.end();
  }

  #logprob(
    id: number,
    sample: { logprob?: number; topLogprobs?: { tokenId: number; logprob: number }[] },
  ): TokenLogprob {
    const entry = (tokenId: number, logprob: number) => {
      const token = this.#tokenizer.decode([tokenId]);
      return { token, logprob, bytes: [...(this.#tokenBytes[tokenId] ?? utf8.encode(token))] };
    };
    return {
      ...entry(id, sample.logprob ?? 0),
      topLogprobs: (sample.topLogprobs ?? []).map((alt) => entry(alt.tokenId, alt.logprob)),
    };
  }
}

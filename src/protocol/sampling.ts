/**
 * Wire fields shared by chat and legacy completions (temperature, top_p, stop, n, penalties…),
 * their limits, and the conversion to the engine's {@link SamplingParams}.
 *
 * @module
 */
import type { SamplingParams } from "../core/inference_types.ts";

/**
 * Most stop sequences a request may give: OpenAI allows 4, vLLM any number, and clients written for
 * vLLM send more (lm-evaluation-harness's `until` lists); a bound still keeps each step's check cheap.
 */
export const MAX_STOP_SEQUENCES = 64;

/** Most tokens `logit_bias` (and `stop_token_ids`) may name. */
export const MAX_LOGIT_BIAS = 1024;

/** Sampling fields as they arrive on the wire (`null` is accepted wherever a field is optional). */
export interface WireSamplingFields {
  temperature?: number | null;
  top_p?: number | null;
  top_k?: number | null;
  seed?: number | null;
  max_tokens?: number | null;
  stop?: string | string[] | null;
  n?: number | null;
  presence_penalty?: number | null;
  frequency_penalty?: number | null;
  repetition_penalty?: number | null;
  stream?: boolean | null;
  /** `continuous_usage_stats` (vLLM's), with `include_usage`: every chunk carries the usage so far. */
  stream_options?: {
    include_usage?: boolean | null;
    continuous_usage_stats?: boolean | null;
  } | null;
  user?: string | null;
  /** Bias added to tokens' logits, by token id (as text), -100 to 100. */
  logit_bias?: Record<string, number> | null;
  /** vLLM: drop tokens less likely than `min_p` times the most likely one. */
  min_p?: number | null;
  /** vLLM: no end-of-sequence (or `stop_token_ids`) before this many tokens. */
  min_tokens?: number | null;
  /** vLLM: go on past end-of-sequence. */
  ignore_eos?: boolean | null;
  /** vLLM: token ids that end the generation. */
  stop_token_ids?: number[] | null;
  /** vLLM: keep the stop string at the end of the text. */
  include_stop_str_in_output?: boolean | null;
  /** vLLM: leave special tokens out of the text (default true). */
  skip_special_tokens?: boolean | null;
  /** vLLM: accepted and ignored (the tokenizer's own decoding decides). */
  spaces_between_special_tokens?: boolean | null;
}

/** Extra settings {@link toSamplingParams} cannot read from the shared fields. */
export interface SamplingExtras {
  /** Token limit that wins over `max_tokens` (chat's `max_completion_tokens`). */
  maxTokens?: number | null;
  /** Used when the request gives no limit (legacy completions default to 16, like OpenAI). */
  defaultMaxTokens?: number;
  logprobs?: boolean;
  topLogprobs?: number;
}

/**
 * Converts validated wire fields to the engine's camelCase {@link SamplingParams}, leaving out
 * everything the request did not set (so the engine's defaults apply).
 *
 * @example
 * ```ts
 * import { toSamplingParams } from "./sampling.ts";
 * toSamplingParams({ temperature: 0, stop: "\n" }); // { temperature: 0, stop: ["\n"] }
 * ```
 */
export function toSamplingParams(
  wire: WireSamplingFields,
  extras: SamplingExtras = {},
): SamplingParams {
  const params: SamplingParams = {};
  const maxTokens = extras.maxTokens ?? wire.max_tokens ?? extras.defaultMaxTokens;
  if (maxTokens != null) params.maxTokens = maxTokens;
  if (wire.temperature != null) params.temperature = wire.temperature;
  if (wire.top_p != null) params.topP = wire.top_p;
  if (wire.top_k != null) params.topK = wire.top_k < 0 ? 0 : wire.top_k;
  if (wire.seed != null) params.seed = wire.seed;
  if (wire.stop != null) {
    // An empty stop string would end every generation at once; OpenAI ignores it, so do we.
    const stop = (typeof wire.stop === "string" ? [wire.stop] : wire.stop).filter((s) => s !== "");
    if (stop.length > 0) params.stop = stop;
  }
  if (wire.presence_penalty != null) params.presencePenalty = wire.presence_penalty;
  if (wire.frequency_penalty != null) params.frequencyPenalty = wire.frequency_penalty;
  if (wire.repetition_penalty != null) params.repetitionPenalty = wire.repetition_penalty;
  if (wire.logit_bias != null && Object.keys(wire.logit_bias).length > 0) {
    params.logitBias = Object.fromEntries(
      Object.entries(wire.logit_bias).map(([id, bias]) => [Number(id), bias]),
    );
  }
  if (wire.min_p != null && wire.min_p > 0) params.minP = wire.min_p;
  if (wire.min_tokens != null && wire.min_tokens > 0) params.minTokens = wire.min_tokens;
  if (wire.ignore_eos === true) params.ignoreEos = true;
  if (wire.stop_token_ids?.length) params.stopTokenIds = wire.stop_token_ids;
  if (wire.include_stop_str_in_output === true) params.includeStopStrInOutput = true;
  if (wire.skip_special_tokens === false) params.skipSpecialTokens = false;
  if (extras.logprobs) params.logprobs = true;
  if (extras.topLogprobs != null && extras.topLogprobs > 0) {
    params.logprobs = true;
    params.topLogprobs = extras.topLogprobs;
  }
  return params;
}

/**
 * The seed of choice `index` when a request asks for `n` choices with one `seed`: choice 0 keeps
 * the seed (so `n: 1` and `n: 3` agree on the first choice), the others get distinct seeds derived
 * from it, so choices differ but the whole response is reproducible.
 *
 * @example
 * ```ts
 * import { deriveChoiceSeed } from "./sampling.ts";
 * deriveChoiceSeed(42, 0); // 42
 * deriveChoiceSeed(42, 1) === deriveChoiceSeed(42, 1); // true
 * ```
 */
export function deriveChoiceSeed(seed: number | undefined, index: number): number | undefined {
  if (seed === undefined || index === 0) return seed;
  // murmur3's fmix32 over (seed xor index * golden ratio): a bijection, so choices never collide.
  let h = (Number(BigInt.asUintN(32, BigInt(seed))) ^ Math.imul(index, 0x9e3779b9)) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/**
 * Cross-field rules every generation request follows; returns an issue or undefined. `maxTokens`:
 * the token limit in effect (chat's `max_completion_tokens` wins over `max_tokens`).
 */
export function checkSamplingFields(
  wire: WireSamplingFields,
  maxTokens: number | null | undefined = wire.max_tokens,
): { path: string[]; message: string } | undefined {
  if (wire.stream_options != null && wire.stream !== true) {
    return {
      path: ["stream_options"],
      message: "stream_options is only allowed when stream is true",
    };
  }
  if (wire.min_tokens != null && maxTokens != null && wire.min_tokens > maxTokens) {
    return {
      path: ["min_tokens"],
      message: `min_tokens (${wire.min_tokens}) must be at most the token limit (${maxTokens})`,
    };
  }
  return undefined;
}

/**
 * Whether every chunk of a stream carries the usage so far: vLLM's
 * `stream_options.continuous_usage_stats`, which applies with `include_usage`.
 *
 * @example
 * ```ts
 * import { continuousUsage } from "./sampling.ts";
 * continuousUsage({
 *   stream: true,
 *   stream_options: { include_usage: true, continuous_usage_stats: true },
 * }); // true
 * ```
 */
export function continuousUsage(
  wire: Pick<WireSamplingFields, "stream" | "stream_options">,
): boolean {
  return wire.stream === true && wire.stream_options?.include_usage === true &&
    wire.stream_options.continuous_usage_stats === true;
}

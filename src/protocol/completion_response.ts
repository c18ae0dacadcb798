/**
 * Builders of legacy `text_completion` objects (whole responses and stream chunks).
 *
 * @module
 */
import type {
  FinishReason,
  PromptTokenLogprob,
  TokenLogprob,
  Usage,
} from "../core/inference_types.ts";
import type { ResponseMeta } from "./chat_response.ts";
import { buildUsage, type WireUsage } from "./usage.ts";
import { joinLists, type JsonList, LazyJsonArray } from "./json_text.ts";

/**
 * Legacy `choices[].logprobs`. With `echo`, the prompt's tokens come first: the first of them has
 * no log-probability (null in `token_logprobs` and `top_logprobs`).
 */
export interface WireCompletionLogprobs {
  tokens: string[];
  token_logprobs: (number | null)[];
  /** Made as it is written (a long prompt's would be millions of entries at once). */
  top_logprobs: JsonList<Record<string, number> | null> | null;
  /**
   * Character offset of each token in the choice's text (a BOS token the tokenizer added to a
   * text prompt takes none: its offset is the next token's).
   */
  text_offset: number[];
}

/** One choice of a text completion (or a chunk of one). */
export interface WireCompletionChoice {
  index: number;
  text: string;
  logprobs: WireCompletionLogprobs | null;
  finish_reason: FinishReason | null;
}

/** A `text_completion` object; stream chunks have the same shape. */
export interface TextCompletion {
  id: string;
  object: "text_completion";
  created: number;
  model: string;
  system_fingerprint: null;
  choices: WireCompletionChoice[];
  usage?: WireUsage | null;
}

/** What the server knows of one choice (or of one piece of a streamed choice). */
export interface CompletionChoicePart {
  index: number;
  text: string;
  finishReason?: FinishReason;
  logprobs?: TokenLogprob[];
  /** Where `text` starts in the choice's whole text (for `text_offset` when streaming). */
  textOffset?: number;
  /** Whether to send `top_logprobs` (the request asked for `logprobs`, 0 included). */
  withTopLogprobs?: boolean;
  /** The echoed prompt's tokens (`echo` with `logprobs`), before those of `logprobs`. */
  promptLogprobs?: readonly PromptTokenLogprob[];
  /** Where the generated tokens' text starts in the choice's text (default `textOffset`). */
  generatedOffset?: number;
}

/**
 * Converts engine log-probabilities to the legacy format. Each `top_logprobs` entry holds the
 * alternatives and the sampled token itself, as OpenAI and vLLM answer ("the API will always
 * return the logprob of the sampled token, so there may be up to logprobs+1 elements"): with
 * `logprobs: 0` it holds the sampled token alone.
 *
 * @example
 * ```ts
 * import { toWireCompletionLogprobs } from "./completion_response.ts";
 * toWireCompletionLogprobs([{ token: "a", logprob: -1, bytes: [97], topLogprobs: [] }], {});
 * ```
 */
export function toWireCompletionLogprobs(
  logprobs: readonly (TokenLogprob | PromptTokenLogprob)[],
  options: { textOffset?: number; withTopLogprobs?: boolean },
): WireCompletionLogprobs {
  let offset = options.textOffset ?? 0;
  const textOffset: number[] = [];
  for (const lp of logprobs) {
    textOffset.push(offset);
    // A token the tokenizer added to a text prompt (its BOS) is not in the echoed text.
    if (!("added" in lp && lp.added)) offset += lp.token.length;
  }
  return {
    tokens: logprobs.map(legacyToken),
    token_logprobs: logprobs.map((lp) => lp.logprob),
    top_logprobs: options.withTopLogprobs
      ? new LazyJsonArray(logprobs.length, (i) => legacyTopLogprobs(logprobs[i]))
      : null,
    text_offset: textOffset,
  };
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

// The legacy format has no `bytes`: a token holding part of a character is written as its bytes,
// `bytes:\xe6\x97`, as OpenAI writes it. Memoized by byte list (and text): a prompt's
// log-probabilities share one list per distinct token among up to millions of places.
function legacyToken(lp: { token: string; bytes: number[] | null }): string {
  if (lp.bytes === null) return lp.token;
  const known = legacySpelling.get(lp.bytes);
  if (known?.token === lp.token) return known.spelt;
  let spelt: string;
  try {
    strictUtf8.decode(Uint8Array.from(lp.bytes));
    spelt = lp.token;
  } catch {
    spelt = "bytes:" + lp.bytes.map((b) => `\\x${b.toString(16).padStart(2, "0")}`).join("");
  }
  legacySpelling.set(lp.bytes, { token: lp.token, spelt });
  return spelt;
}

const legacySpelling = new WeakMap<number[], { token: string; spelt: string }>();

// The alternatives, best first, then the sampled token when it is not one of them.
// (fromEntries and hasOwn: a token may be spelt "__proto__" or "constructor"). A prompt's first
// token has none.
function legacyTopLogprobs(lp: TokenLogprob | PromptTokenLogprob): Record<string, number> | null {
  if (lp.topLogprobs === null || lp.logprob === null) return null;
  const top = Object.fromEntries(lp.topLogprobs.map((t) => [legacyToken(t), t.logprob]));
  const sampled = legacyToken(lp);
  return Object.hasOwn(top, sampled) ? top : Object.fromEntries([
    ...Object.entries(top),
    [sampled, lp.logprob],
  ]);
}

function toWireChoice(c: CompletionChoicePart): WireCompletionChoice {
  const { textOffset, withTopLogprobs } = c;
  const prompt = c.promptLogprobs
    ? toWireCompletionLogprobs(c.promptLogprobs, { textOffset, withTopLogprobs })
    : undefined;
  const generated = c.logprobs
    ? toWireCompletionLogprobs(c.logprobs, {
      textOffset: c.generatedOffset ?? textOffset,
      withTopLogprobs,
    })
    : undefined;
  return {
    index: c.index,
    text: c.text,
    logprobs: prompt && generated ? joinLogprobs(prompt, generated) : prompt ?? generated ?? null,
    finish_reason: c.finishReason ?? null,
  };
}

function joinLogprobs(
  a: WireCompletionLogprobs,
  b: WireCompletionLogprobs,
): WireCompletionLogprobs {
  return {
    tokens: [...a.tokens, ...b.tokens],
    token_logprobs: [...a.token_logprobs, ...b.token_logprobs],
    top_logprobs: a.top_logprobs && b.top_logprobs
      ? joinLists(a.top_logprobs, b.top_logprobs)
      : null,
    text_offset: [...a.text_offset, ...b.text_offset],
  };
}

/**
 * Builds a whole `text_completion` response, or (without `usage`) one stream chunk. With
 * `includeUsage` and no `usage`, the chunk carries `usage: null` as OpenAI's do.
 *
 * @example
 * ```ts
 * import { buildTextCompletion } from "./completion_response.ts";
 * buildTextCompletion(
 *   { id: "cmpl-1", created: 0, model: "m" },
 *   [{ index: 0, text: "hi", finishReason: "length" }],
 *   { usage: { promptTokens: 1, completionTokens: 1 } },
 * );
 * ```
 */
export function buildTextCompletion(
  meta: ResponseMeta,
  choices: readonly CompletionChoicePart[],
  options: { usage?: Usage; includeUsage?: boolean } = {},
): TextCompletion {
  const body: TextCompletion = {
    id: meta.id,
    object: "text_completion",
    created: meta.created,
    model: meta.model,
    system_fingerprint: null,
    choices: choices.map(toWireChoice),
  };
  if (options.usage !== undefined) body.usage = buildUsage(options.usage);
  else if (options.includeUsage) body.usage = null;
  return body;
}

/**
 * Builders of `chat.completion` and `chat.completion.chunk` objects.
 *
 * @module
 */
import type { FinishReason, TokenLogprob, Usage } from "../core/inference_types.ts";
import { buildUsage, type WireUsage } from "./usage.ts";
import type { ToolCall } from "../core/inference_types.ts";
import { toWireToolCalls, type WireToolCall } from "./tools.ts";
import type { ToolCallDelta } from "./tool_call_parser.ts";

/** Log-probability of one token on the wire (chat format). */
export interface WireTokenLogprob {
  /** The token's text. */
  token: string;
  /** Its log-probability. */
  logprob: number;
  /** Its UTF-8 bytes. */
  bytes: number[] | null;
  /** The most likely tokens at this step. */
  top_logprobs: { token: string; logprob: number; bytes: number[] | null }[];
}

/** `choices[].logprobs` of chat responses. */
export interface WireChatLogprobs {
  /** One entry per generated token. */
  content: WireTokenLogprob[] | null;
  /** Always null (no refusals). */
  refusal: null;
}

/** A `chat.completion` object. */
export interface ChatCompletion {
  /** Completion id. */
  id: string;
  /** Object type. */
  object: "chat.completion";
  /** Creation time, seconds since the epoch. */
  created: number;
  /** Model that answered. */
  model: string;
  /** Always null. */
  system_fingerprint: null;
  /** Always "default": one tier of service (`service_tier` in a request changes nothing). */
  service_tier: "default";
  /** One per `n`. */
  choices: {
    index: number;
    message: {
      role: "assistant";
      /** Null when the model only called tools. */
      content: string | null;
      /** The model's reasoning (`<think>` block), for reasoning models that wrote one. */
      reasoning_content?: string;
      refusal: null;
      /** The tools the model called. */
      tool_calls?: WireToolCall[];
    };
    logprobs: WireChatLogprobs | null;
    finish_reason: FinishReason;
  }[];
  /** Token counts. */
  usage: WireUsage;
}

/** `choices[].delta` of a chunk. */
export interface ChatDelta {
  /** Set on the first chunk. */
  role?: "assistant";
  /** Text added. */
  content?: string;
  /** A piece of the model's reasoning (reasoning models; vLLM's and DeepSeek's field). */
  reasoning_content?: string;
  /** Pieces of tool calls: index, id and name first, then fragments of the arguments. */
  tool_calls?: WireToolCallDelta[];
}

/** A piece of a tool call in a chunk, as OpenAI streams it. */
export interface WireToolCallDelta {
  /** Which tool call this piece belongs to. */
  index: number;
  /** Call id (first piece only). */
  id?: string;
  /** Set on the first piece. */
  type?: "function";
  /** Name (first piece) and a fragment of the JSON arguments. */
  function: { name?: string; arguments: string };
}

/** A `chat.completion.chunk` object (one SSE event). */
export interface ChatCompletionChunk {
  /** Completion id (the same in every chunk). */
  id: string;
  /** Object type. */
  object: "chat.completion.chunk";
  /** Creation time, seconds since the epoch. */
  created: number;
  /** Model that answered. */
  model: string;
  /** Always null. */
  system_fingerprint: null;
  /** Always "default": one tier of service (`service_tier` in a request changes nothing). */
  service_tier: "default";
  /** One per `n`. */
  choices: {
    index: number;
    delta: ChatDelta;
    logprobs: WireChatLogprobs | null;
    finish_reason: FinishReason | null;
  }[];
  /** Present (as null, then the totals) only when the client asked for `include_usage`. */
  usage?: WireUsage | null;
}

/** What the server knows of one finished choice. */
export interface ChatChoiceResult {
  index: number;
  text: string;
  /** The reasoning, when the model wrote a `<think>` block (becomes `reasoning_content`). */
  reasoning?: string;
  finishReason: FinishReason;
  /** Set when the request asked for logprobs. */
  logprobs?: TokenLogprob[];
  /** The tools the model called. */
  toolCalls?: ToolCall[];
}

/** Fields shared by every object of one response. */
export interface ResponseMeta {
  id: string;
  /** Unix seconds. */
  created: number;
  model: string;
}

/**
 * Converts engine log-probabilities to the chat wire format.
 *
 * @example
 * ```ts
 * import { toWireChatLogprobs } from "./chat_response.ts";
 * toWireChatLogprobs([{ token: "a", logprob: -1, bytes: [97], topLogprobs: [] }]).content?.length; // 1
 * ```
 */
export function toWireChatLogprobs(logprobs: readonly TokenLogprob[]): WireChatLogprobs {
  return {
    content: logprobs.map((lp) => ({
      token: lp.token,
      logprob: lp.logprob,
      bytes: lp.bytes,
      top_logprobs: lp.topLogprobs.map((t) => ({
        token: t.token,
        logprob: t.logprob,
        bytes: t.bytes,
      })),
    })),
    refusal: null,
  };
}

/**
 * Builds a complete `chat.completion` response.
 *
 * @example
 * ```ts
 * import { buildChatCompletion } from "./chat_response.ts";
 * const body = buildChatCompletion(
 *   { id: "chatcmpl-1", created: 0, model: "m" },
 *   [{ index: 0, text: "hi", finishReason: "stop" }],
 *   { usage: { promptTokens: 1, completionTokens: 1 } },
 * );
 * ```
 */
export function buildChatCompletion(
  meta: ResponseMeta,
  choices: readonly ChatChoiceResult[],
  options: { usage: Usage },
): ChatCompletion {
  return {
    id: meta.id,
    object: "chat.completion",
    created: meta.created,
    model: meta.model,
    system_fingerprint: null,
    service_tier: "default",
    choices: choices.map((c) => ({
      index: c.index,
      message: {
        role: "assistant",
        content: c.toolCalls?.length && c.text === "" ? null : c.text,
        ...(c.reasoning === undefined ? {} : { reasoning_content: c.reasoning }),
        refusal: null,
        ...(c.toolCalls?.length ? { tool_calls: toWireToolCalls(c.toolCalls) } : {}),
      },
      logprobs: c.logprobs ? toWireChatLogprobs(c.logprobs) : null,
      finish_reason: c.finishReason,
    })),
    usage: buildUsage(options.usage),
  };
}

/** One choice's part of a chunk. */
export interface ChatChunkChoice {
  index: number;
  /** Only in the first chunk of a choice. */
  role?: "assistant";
  content?: string;
  /** A piece of reasoning (becomes `delta.reasoning_content`). */
  reasoning?: string;
  logprobs?: TokenLogprob[];
  /** Pieces of tool calls (becomes `delta.tool_calls`). */
  toolCalls?: ToolCallDelta[];
  finishReason?: FinishReason;
}

/**
 * Builds one `chat.completion.chunk`. With `includeUsage`, `usage` is `null` on every chunk but the
 * last one (which has no choices), as OpenAI does.
 *
 * @example
 * ```ts
 * import { buildChatCompletionChunk } from "./chat_response.ts";
 * buildChatCompletionChunk({ id: "c", created: 0, model: "m" }, [{ index: 0, content: "h" }]);
 * ```
 */
export function buildChatCompletionChunk(
  meta: ResponseMeta,
  choices: readonly ChatChunkChoice[],
  options: { includeUsage?: boolean; usage?: Usage } = {},
): ChatCompletionChunk {
  const chunk: ChatCompletionChunk = {
    id: meta.id,
    object: "chat.completion.chunk",
    created: meta.created,
    model: meta.model,
    system_fingerprint: null,
    service_tier: "default",
    choices: choices.map((c) => {
      const delta: ChatDelta = {};
      if (c.role !== undefined) delta.role = c.role;
      if (c.reasoning !== undefined) delta.reasoning_content = c.reasoning;
      if (c.content !== undefined) delta.content = c.content;
      if (c.toolCalls !== undefined) delta.tool_calls = c.toolCalls.map(toWireToolCallDelta);
      return {
        index: c.index,
        delta,
        logprobs: c.logprobs ? toWireChatLogprobs(c.logprobs) : null,
        finish_reason: c.finishReason ?? null,
      };
    }),
  };
  if (options.usage !== undefined) chunk.usage = buildUsage(options.usage);
  else if (options.includeUsage) chunk.usage = null;
  return chunk;
}

function toWireToolCallDelta(d: ToolCallDelta): WireToolCallDelta {
  return d.name === undefined ? { index: d.index, function: { arguments: d.arguments } } : {
    index: d.index,
    id: d.id,
    type: "function",
    function: { name: d.name, arguments: d.arguments },
  };
}

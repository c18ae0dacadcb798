/**
 * `POST /v1/chat/completions` request: wire type, zod schema, and conversion to the engine's
 * {@link ChatMessage}s and {@link SamplingParams}.
 *
 * @module
 */
import { z } from "zod";
import type { ChatMessage, SamplingParams, ToolDefinition } from "../core/inference_types.ts";
import {
  checkSamplingFields,
  continuousUsage,
  toSamplingParams,
  type WireSamplingFields,
} from "./sampling.ts";
import { SAMPLING_SHAPE } from "./_sampling_shape.ts";
import { parseRequest } from "./validate.ts";
import {
  checkGuidedFields,
  GUIDED_FIELDS_SHAPE,
  guidedResponseFormat,
  type WireGuidedFields,
} from "./guided_decoding.ts";
import {
  checkToolFields,
  TOOL_CALL_SHAPE,
  TOOL_FIELDS_SHAPE,
  toolSamplingParams,
  toToolCalls,
  toToolDefinitions,
  type WireToolCall,
  type WireToolFields,
} from "./tools.ts";

/** Roles a chat message may have. */
export const CHAT_ROLES = ["system", "user", "assistant", "tool", "developer"] as const;

/** A text part of a message's content array. */
export interface WireTextPart {
  type: "text";
  text: string;
}

/** A refusal part of an assistant message's content array (its text is the refusal). */
export interface WireRefusalPart {
  type: "refusal";
  refusal: string;
}

/** One chat message on the wire. */
export interface WireChatMessage {
  role: (typeof CHAT_ROLES)[number];
  content?: string | (WireTextPart | WireRefusalPart)[] | null;
  name?: string | null;
  tool_call_id?: string | null;
  /** The tools an assistant turn called (rendered by the chat template). */
  tool_calls?: WireToolCall[] | null;
}

/** A validated chat completion request. Unknown fields are dropped, as OpenAI ignores them. */
export interface ChatCompletionRequest
  extends WireSamplingFields, WireToolFields, WireGuidedFields {
  /** Left out: the engine server's one chat model (vLLM's default: the served model). */
  model?: string | null;
  messages: WireChatMessage[];
  max_completion_tokens?: number | null;
  logprobs?: boolean | null;
  top_logprobs?: number | null;
  /**
   * Extra variables for the model's chat template (vLLM's field), e.g. `{"enable_thinking": false}`
   * for Qwen3.
   */
  chat_template_kwargs?: Record<string, JsonValue> | null;
  /** End the prompt with the assistant turn's opening (default true; vLLM's field). */
  add_generation_prompt?: boolean | null;
  /** Let the model go on writing the last (assistant) message (vLLM's field). */
  continue_final_message?: boolean | null;
  /** Start each choice with the last message's text when it is an assistant's (vLLM's field). */
  echo?: boolean | null;
  // Accepted and ignored (README, "OpenAI fields"): nothing is stored, there is one service tier,
  // the prefix cache needs no key, and output is text.
  store?: boolean | null;
  metadata?: Record<string, string> | null;
  service_tier?: string | null;
  prompt_cache_key?: string | null;
  safety_identifier?: string | null;
  prediction?: unknown;
  verbosity?: string | null;
  reasoning_effort?: string | null;
  modalities?: "text"[] | null;
  audio?: null;
  priority?: number | null;
  request_id?: string | null;
}

/** A JSON value. */
export type JsonValue =
  | string
  | number
  | boolean
  | null
  | JsonValue[]
  | { [key: string]: JsonValue };

/** How deep `chat_template_kwargs` may nest (objects and arrays). */
export const MAX_TEMPLATE_KWARGS_DEPTH = 32;

/** Nesting depth of a JSON value (a scalar is 0), found without recursion. */
function jsonDepth(value: unknown): number {
  let max = 0;
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== "object") continue;
    max = Math.max(max, depth + 1);
    if (max > MAX_TEMPLATE_KWARGS_DEPTH) return max;
    for (const child of Object.values(v)) stack.push([child, depth + 1]);
  }
  return max;
}

const TEXT_PART = z.object({
  type: z.literal("text", {
    error: 'only "text" content parts are supported by this server',
  }),
  text: z.string(),
});
const CONTENT_PART = z.discriminatedUnion("type", [
  TEXT_PART,
  z.object({ type: z.literal("refusal"), refusal: z.string() }),
], { error: 'only "text" content parts (and "refusal" in assistant messages) are supported' });

const MESSAGE = z.object({
  role: z.enum(CHAT_ROLES),
  content: z.union([z.string(), z.array(CONTENT_PART)], {
    error: "expected a string or an array of text parts",
  }).nullish(),
  name: z.string().nullish(),
  tool_call_id: z.string().nullish(),
  tool_calls: z.array(TOOL_CALL_SHAPE).nullish(),
});

/** zod schema of one chat message (also read by `/tokenize`). */
export const CHAT_MESSAGE_SCHEMA: z.ZodType<WireChatMessage> = MESSAGE;

/** zod schema of {@link ChatCompletionRequest}, with the cross-field rules. */
export const CHAT_COMPLETION_REQUEST_SCHEMA: z.ZodType<ChatCompletionRequest> = z.strictObject({
  ...SAMPLING_SHAPE,
  ...TOOL_FIELDS_SHAPE,
  ...GUIDED_FIELDS_SHAPE,
  model: z.string().min(1).nullish(),
  messages: z.array(MESSAGE).min(1),
  max_completion_tokens: z.int().min(1).nullish(),
  logprobs: z.boolean().nullish(),
  top_logprobs: z.int().min(0).nullish(),
  // Values come from JSON already; a depth limit keeps a hostile body from overflowing the stack
  // (here or in the template engine).
  add_generation_prompt: z.boolean().nullish(),
  continue_final_message: z.boolean().nullish(),
  echo: z.boolean().nullish(),
  store: z.boolean().nullish(),
  metadata: z.record(z.string().max(64), z.string().max(512)).refine(
    (m) => Object.keys(m).length <= 16,
    { error: "metadata may hold at most 16 keys" },
  ).nullish(),
  service_tier: z.enum(["auto", "default", "flex", "scale", "priority"]).nullish(),
  prompt_cache_key: z.string().nullish(),
  safety_identifier: z.string().nullish(),
  prediction: z.strictObject({
    type: z.literal("content"),
    content: z.union([z.string(), z.array(TEXT_PART)]),
  }).nullish(),
  verbosity: z.enum(["low", "medium", "high"]).nullish(),
  reasoning_effort: z.enum(["minimal", "low", "medium", "high"]).nullish(),
  modalities: z.array(z.literal("text", { error: "this server writes text only" })).nullish(),
  audio: z.null({ error: "audio output is not supported by this server" }).optional(),
  priority: z.int().nullish(),
  request_id: z.string().nullish(),
  chat_template_kwargs: z.record(z.string(), z.unknown(), {
    error: "expected an object of chat template variables",
  }).refine((v) => jsonDepth(v) <= MAX_TEMPLATE_KWARGS_DEPTH, {
    error: `chat template variables may nest at most ${MAX_TEMPLATE_KWARGS_DEPTH} levels deep`,
  }).nullish() as z.ZodType<Record<string, JsonValue> | null | undefined>,
}).superRefine((req, ctx) => {
  const samplingIssue = checkSamplingFields(req, req.max_completion_tokens ?? req.max_tokens);
  if (samplingIssue) ctx.addIssue({ code: "custom", ...samplingIssue });
  const toolIssue = checkToolFields(req);
  if (toolIssue) ctx.addIssue({ code: "custom", ...toolIssue });
  const continueIssue = continueFinalMessageIssue(req);
  if (continueIssue) {
    ctx.addIssue({ code: "custom", path: ["continue_final_message"], message: continueIssue });
  }
  if (req.top_logprobs != null && req.logprobs !== true) {
    ctx.addIssue({
      code: "custom",
      path: ["top_logprobs"],
      message: "top_logprobs requires logprobs to be true",
    });
  }
  req.messages.forEach((message, i) => {
    if (Array.isArray(message.content) && message.role !== "assistant") {
      const at = message.content.findIndex((p) => p.type === "refusal");
      if (at >= 0) {
        ctx.addIssue({
          code: "custom",
          path: ["messages", i, "content", at, "type"],
          message: 'only an assistant message may hold a "refusal" part',
        });
      }
    }
    if (message.content == null && message.role !== "assistant") {
      ctx.addIssue({
        code: "custom",
        path: ["messages", i, "content"],
        message: `a ${message.role} message needs content (a string or text parts)`,
      });
    }
  });
});

/** What is wrong with `continue_final_message` beside the other fields (also for /tokenize). */
export function continueFinalMessageIssue(req: {
  messages?: readonly WireChatMessage[] | null;
  continue_final_message?: boolean | null;
  add_generation_prompt?: boolean | null;
}): string | undefined {
  if (req.continue_final_message !== true) return undefined;
  if (req.add_generation_prompt === true) {
    return "continue_final_message and add_generation_prompt cannot both be true";
  }
  if (req.messages?.at(-1)?.role !== "assistant") {
    return "continue_final_message needs an assistant message last";
  }
  return undefined;
}

/**
 * Validates a parsed JSON body as a chat completion request; throws a `ValidationError` whose
 * `param` names the first bad field.
 *
 * @example
 * ```ts
 * import { parseChatCompletionRequest } from "./chat_request.ts";
 * const req = parseChatCompletionRequest({ model: "m", messages: [{ role: "user", content: "hi" }] });
 * ```
 */
export function parseChatCompletionRequest(body: unknown): ChatCompletionRequest {
  const req = parseRequest(CHAT_COMPLETION_REQUEST_SCHEMA, withFunctionsAsTools(body));
  checkGuidedFields(req);
  return req;
}

/**
 * OpenAI's deprecated `functions` and `function_call` as the `tools` and `tool_choice` they became
 * (calls come back as `tool_calls`), and in the history an assistant's `function_call` and a
 * `function` message as a tool call and its `tool` result. Given beside `tools`, the fields stay
 * and are refused by name.
 */
function withFunctionsAsTools(body: unknown): unknown {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return body;
  const { functions, function_call, ...rest } = body as Record<string, unknown>;
  if (Array.isArray(rest.messages)) rest.messages = withFunctionMessagesAsTools(rest.messages);
  if (functions === undefined && function_call === undefined) return rest;
  if (rest.tools != null || rest.tool_choice != null) {
    return { ...body as Record<string, unknown>, messages: rest.messages };
  }
  if (Array.isArray(functions)) {
    rest.tools = functions.map((f) => ({ type: "function", function: f }));
  } else if (functions != null) rest.tools = functions;
  if (function_call != null) {
    rest.tool_choice = typeof function_call === "object"
      ? { type: "function", function: function_call }
      : function_call;
  }
  return rest;
}

/**
 * An assistant message's `function_call` as its one tool call (id `call_fn_<index>`), and a
 * `function` message as the `tool` message answering the latest such call.
 */
export function withFunctionMessagesAsTools(messages: unknown[]): unknown[] {
  let lastCall: string | undefined;
  return messages.map((m, i) => {
    if (typeof m !== "object" || m === null) return m;
    const { function_call, ...message } = m as Record<string, unknown>;
    if (message.role === "assistant" && function_call != null && message.tool_calls == null) {
      lastCall = `call_fn_${i}`;
      return {
        ...message,
        tool_calls: [{ id: lastCall, type: "function", function: function_call }],
      };
    }
    if (message.role === "function") {
      return { ...message, role: "tool", ...(lastCall ? { tool_call_id: lastCall } : {}) };
    }
    return function_call === undefined ? m : message;
  });
}

/**
 * Converts wire messages to engine messages: text parts are joined with newlines, `null` content
 * (an assistant turn that only called tools) becomes "".
 *
 * @example
 * ```ts
 * import { toChatMessages } from "./chat_request.ts";
 * toChatMessages([{ role: "user", content: [{ type: "text", text: "hi" }] }]);
 * // [{ role: "user", content: "hi" }]
 * ```
 */
export function toChatMessages(messages: readonly WireChatMessage[]): ChatMessage[] {
  return messages.map((m) => {
    const content = m.content == null
      ? ""
      : typeof m.content === "string"
      ? m.content
      : m.content.map((p) => p.type === "text" ? p.text : p.refusal).join("\n");
    const out: ChatMessage = { role: m.role, content };
    if (m.name != null) out.name = m.name;
    if (m.tool_call_id != null) out.toolCallId = m.tool_call_id;
    if (m.tool_calls?.length) out.toolCalls = toToolCalls(m.tool_calls);
    return out;
  });
}

/**
 * The engine's sampling settings for a chat request (`max_completion_tokens` wins over
 * `max_tokens`; `top_logprobs` implies `logprobs`).
 *
 * @example
 * ```ts
 * import { chatSamplingParams } from "./chat_request.ts";
 * chatSamplingParams({ model: "m", messages: [], max_tokens: 5 }); // { maxTokens: 5 }
 * ```
 */
export function chatSamplingParams(req: ChatCompletionRequest): SamplingParams {
  return toSamplingParams(req, {
    maxTokens: req.max_completion_tokens,
    logprobs: req.logprobs === true,
    topLogprobs: req.logprobs === true ? req.top_logprobs ?? undefined : undefined,
  });
}

/** A chat request in the engine's terms. */
export interface ChatJob {
  /** Absent: the server's one chat model. */
  model?: string;
  messages: ChatMessage[];
  params: SamplingParams;
  /** Choices to generate. */
  n: number;
  stream: boolean;
  /** Send a final usage chunk (`stream_options.include_usage`). */
  includeUsage: boolean;
  /** Every chunk carries the usage so far (vLLM's `continuous_usage_stats`, with `include_usage`). */
  continuousUsage?: boolean;
  /** Extra chat template variables (`chat_template_kwargs`); absent when none were given. */
  templateKwargs?: Record<string, JsonValue>;
  /** Functions the model may call; absent when none were given. */
  tools?: ToolDefinition[];
  /** False when the prompt ends without the assistant turn's opening. */
  addGenerationPrompt?: boolean;
  /** True when the model goes on writing the last (assistant) message. */
  continueFinalMessage?: boolean;
  /** Text each choice starts with (`echo` of a last assistant message). */
  echo?: string;
}

/**
 * Converts a validated chat request to the engine's terms (the server sees no snake_case).
 *
 * @example
 * ```ts
 * import { parseChatCompletionRequest, toChatJob } from "./chat_request.ts";
 * const job = toChatJob(
 *   parseChatCompletionRequest({ model: "m", messages: [{ role: "user", content: "hi" }] }),
 * );
 * // job.n === 1, job.stream === false
 * ```
 */
export function toChatJob(req: ChatCompletionRequest): ChatJob {
  const job: ChatJob = {
    ...(req.model == null ? {} : { model: req.model }),
    messages: toChatMessages(req.messages),
    params: { ...chatSamplingParams(req), ...toolSamplingParams(req) },
    n: req.n ?? 1,
    stream: req.stream === true,
    includeUsage: req.stream === true && req.stream_options?.include_usage === true,
    ...(continuousUsage(req) ? { continuousUsage: true } : {}),
  };
  if (req.chat_template_kwargs != null) job.templateKwargs = req.chat_template_kwargs;
  if (req.add_generation_prompt === false) job.addGenerationPrompt = false;
  if (req.continue_final_message === true) job.continueFinalMessage = true;
  const last = job.messages.at(-1)!;
  if (req.echo === true && last.role === "assistant" && last.content) job.echo = last.content;
  const tools = toToolDefinitions(req);
  if (tools !== undefined) job.tools = tools;
  const format = guidedResponseFormat(req, { responseFormat: job.params.responseFormat });
  if (format !== undefined) job.params.responseFormat = format;
  return job;
}

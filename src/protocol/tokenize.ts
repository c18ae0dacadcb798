/**
 * `POST /tokenize` and `POST /detokenize` in vLLM's shapes: wire types, zod schemas (strict: a
 * field we do not support is a 400 naming it), conversion to the engine's {@link TokenizeInput},
 * and the response bodies.
 *
 * @module
 */
import { z } from "zod";
import { INTEGERS } from "./_token_lists.ts";
import type { EngineTokenizeResult, TokenizeInput } from "../core/inference_types.ts";
import {
  CHAT_MESSAGE_SCHEMA,
  continueFinalMessageIssue,
  toChatMessages,
  type WireChatMessage,
  withFunctionMessagesAsTools,
} from "./chat_request.ts";
import { TOOL_FIELDS_SHAPE, toToolDefinitions, type WireTool } from "./tools.ts";
import { parseRequest } from "./validate.ts";

/** A validated `/tokenize` request: `prompt`, or `messages` with the chat template. */
export interface TokenizeRequest {
  /** Left out: the server's one model with a tokenizer (vLLM's default: the served model). */
  model?: string | null;
  prompt?: string | null;
  messages?: WireChatMessage[] | null;
  /** With `prompt`: add BOS / [CLS]…[SEP] (default true). */
  add_special_tokens?: boolean | null;
  /** With `messages`: end with the assistant turn's opening (default true). */
  add_generation_prompt?: boolean | null;
  /** With `messages`: leave the last (assistant) message open, as chat does (vLLM's field). */
  continue_final_message?: boolean | null;
  chat_template_kwargs?: Record<string, unknown> | null;
  tools?: WireTool[] | null;
  /** Also answer each token's string (default false). */
  return_token_strs?: boolean | null;
}

/** A validated `/detokenize` request. */
export interface DetokenizeRequest {
  /** Left out: the server's one model with a tokenizer. */
  model?: string | null;
  tokens: number[];
}

/** The `/tokenize` answer. */
export interface TokenizeResponse {
  count: number;
  /** The model's context length. */
  max_model_len: number;
  tokens: number[];
  token_strs?: string[];
}

const MESSAGES_ONLY = [
  "add_generation_prompt",
  "continue_final_message",
  "chat_template_kwargs",
  "tools",
] as const;

/** zod schema of {@link TokenizeRequest}. */
export const TOKENIZE_REQUEST_SCHEMA: z.ZodType<TokenizeRequest> = z.strictObject({
  model: z.string().min(1).nullish(),
  prompt: z.string().nullish(),
  messages: z.array(CHAT_MESSAGE_SCHEMA).min(1).nullish(),
  add_special_tokens: z.boolean().nullish(),
  add_generation_prompt: z.boolean().nullish(),
  continue_final_message: z.boolean().nullish(),
  chat_template_kwargs: z.record(z.string(), z.unknown()).nullish(),
  tools: TOOL_FIELDS_SHAPE.tools,
  return_token_strs: z.boolean().nullish(),
}).superRefine((req, ctx) => {
  const hasPrompt = req.prompt != null;
  const hasMessages = req.messages != null;
  if (hasPrompt === hasMessages) {
    ctx.addIssue({
      code: "custom",
      path: [hasPrompt ? "messages" : "prompt"],
      message: "send either prompt (text) or messages (chat), not both and not neither",
    });
    return;
  }
  if (hasPrompt) {
    for (const key of MESSAGES_ONLY) {
      if (req[key] != null) {
        ctx.addIssue({ code: "custom", path: [key], message: `${key} applies to messages only` });
      }
    }
  } else if (req.add_special_tokens != null) {
    ctx.addIssue({
      code: "custom",
      path: ["add_special_tokens"],
      message: "add_special_tokens applies to prompt only (the chat template places them)",
    });
  }
  const continueIssue = hasMessages ? continueFinalMessageIssue(req) : undefined;
  if (continueIssue) {
    ctx.addIssue({ code: "custom", path: ["continue_final_message"], message: continueIssue });
  }
});

/** zod schema of {@link DetokenizeRequest}. */
export const DETOKENIZE_REQUEST_SCHEMA: z.ZodType<DetokenizeRequest> = z.strictObject({
  model: z.string().min(1).nullish(),
  tokens: INTEGERS,
});

/**
 * Validates a `/tokenize` body.
 *
 * @example
 * ```ts
 * import { parseTokenizeRequest } from "./tokenize.ts";
 * parseTokenizeRequest({ model: "m", prompt: "hi" }).prompt; // "hi"
 * ```
 */
export function parseTokenizeRequest(body: unknown): TokenizeRequest {
  const messages = (body as { messages?: unknown } | null)?.messages;
  return parseRequest(
    TOKENIZE_REQUEST_SCHEMA,
    Array.isArray(messages)
      ? { ...body as object, messages: withFunctionMessagesAsTools(messages) }
      : body,
  );
}

/**
 * Validates a `/detokenize` body.
 *
 * @example
 * ```ts
 * import { parseDetokenizeRequest } from "./tokenize.ts";
 * parseDetokenizeRequest({ model: "m", tokens: [1, 2] }).tokens; // [1, 2]
 * ```
 */
export function parseDetokenizeRequest(body: unknown): DetokenizeRequest {
  return parseRequest(DETOKENIZE_REQUEST_SCHEMA, body);
}

/**
 * The engine's input of a validated `/tokenize` request.
 *
 * @example
 * ```ts
 * import { toTokenizeInput } from "./tokenize.ts";
 * toTokenizeInput({ model: "m", prompt: "hi", add_special_tokens: false });
 * // { prompt: "hi", addSpecialTokens: false }
 * ```
 */
export function toTokenizeInput(req: TokenizeRequest): TokenizeInput {
  if (req.prompt != null) {
    return { prompt: req.prompt, addSpecialTokens: req.add_special_tokens ?? true };
  }
  const tools = toToolDefinitions(req);
  return {
    messages: toChatMessages(req.messages ?? []),
    addGenerationPrompt: req.add_generation_prompt ?? true,
    ...(req.continue_final_message ? { continueFinalMessage: true } : {}),
    ...(tools ? { tools } : {}),
    ...(req.chat_template_kwargs ? { templateKwargs: req.chat_template_kwargs } : {}),
  };
}

/**
 * The `/tokenize` answer for `result` (`token_strs` only when asked for).
 *
 * @example
 * ```ts
 * import { buildTokenizeResponse } from "./tokenize.ts";
 * buildTokenizeResponse({ tokens: [1, 2] }, 512);
 * // { count: 2, max_model_len: 512, tokens: [1, 2] }
 * ```
 */
export function buildTokenizeResponse(
  result: EngineTokenizeResult,
  maxModelLen: number,
): TokenizeResponse {
  return {
    count: result.tokens.length,
    max_model_len: maxModelLen,
    tokens: result.tokens,
    ...(result.tokenStrs ? { token_strs: result.tokenStrs } : {}),
  };
}

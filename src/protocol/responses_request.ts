/**
 * `POST /v1/responses` request (OpenAI's Responses API): wire types, validation, and its
 * translation to a chat completion request, which is how the server runs it (the chat path's
 * template, constrained decoding and tool calling, unchanged).
 *
 * Fields we cannot honour (built-in tools, `background`, reasoning settings, `include`…) are a
 * 400 that names them, never dropped.
 *
 * @module
 */
import { z } from "zod";
import { ValidationError } from "../core/errors.ts";
import type { ChatCompletionRequest, WireChatMessage } from "./chat_request.ts";
import type { WireTool, WireToolChoice } from "./tools.ts";
import { parseRequest } from "./validate.ts";

/** A content part of an input message. */
export type WireInputPart =
  | { type: "input_text"; text: string }
  | { type: "output_text"; text: string };

/** An input item of the Responses API that this server reads. */
export type WireInputItem =
  | {
    type?: "message";
    role: "user" | "assistant" | "system" | "developer";
    content: string | WireInputPart[];
    id?: string | null;
    status?: string | null;
  }
  | {
    type: "function_call";
    call_id: string;
    name: string;
    arguments: string;
    id?: string | null;
    status?: string | null;
  }
  | {
    type: "function_call_output";
    call_id: string;
    output: string | WireInputPart[];
    id?: string | null;
    status?: string | null;
  }
  | { type: "item_reference"; id: string }
  /** Earlier reasoning: accepted and left out of the prompt, as chat templates drop it. */
  | { type: "reasoning"; id?: string | null };

/** A function tool as the Responses API writes it (flat: no `function` wrapper). */
export interface WireResponsesTool {
  type: "function";
  name: string;
  description?: string | null;
  parameters?: Record<string, unknown> | null;
  strict?: boolean | null;
}

/** `text.format`. */
export type WireTextFormat =
  | { type: "text" }
  | { type: "json_object" }
  | {
    type: "json_schema";
    name: string;
    schema: Record<string, unknown>;
    description?: string | null;
    strict?: boolean | null;
  };

/** A validated Responses request. */
export interface ResponsesRequest {
  model: string;
  input: string | WireInputItem[];
  instructions?: string | null;
  max_output_tokens?: number | null;
  temperature?: number | null;
  top_p?: number | null;
  /** Not OpenAI's: vLLM's extension, for reproducible sampling. */
  seed?: number | null;
  stream?: boolean | null;
  text?: { format?: WireTextFormat | null } | null;
  tools?: WireResponsesTool[] | null;
  tool_choice?: "none" | "auto" | "required" | { type: "function"; name: string } | null;
  parallel_tool_calls?: boolean | null;
  previous_response_id?: string | null;
  store?: boolean | null;
  metadata?: Record<string, string> | null;
  user?: string | null;
}

// Fields that change nothing we generate (routing and caching hints of OpenAI's service): accepted.
const IGNORED_FIELDS = [
  "service_tier",
  "prompt_cache_key",
  "prompt_cache_retention",
  "safety_identifier",
  "stream_options",
];

// Fields we cannot honour; allowed only when they ask for nothing (null, false, empty).
const UNSUPPORTED_FIELDS: Record<string, string> = {
  background: "background responses are not supported; send the request and wait for it",
  reasoning: "reasoning settings are not supported by this server's models",
  include: "no extra output fields can be included",
  top_logprobs: "log-probabilities are not supported on /v1/responses; use /v1/chat/completions",
  max_tool_calls: "max_tool_calls is not supported; use parallel_tool_calls: false for one call",
  conversation: "conversations are not supported; chain responses with previous_response_id",
  prompt: "stored prompt templates are not supported; send the input itself",
  context_management: "context management is not supported",
};

const NAME = z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/, {
  error: "expected 1-64 letters, digits, underscores or dashes",
});
const SCHEMA = z.record(z.string(), z.unknown(), { error: "expected a JSON Schema object" });
const TEXT_PART = z.object({
  type: z.enum(["input_text", "output_text"], {
    error: 'only "input_text" (and "output_text" in assistant turns) parts are supported',
  }),
  text: z.string(),
});
const CONTENT = z.union([z.string(), z.array(TEXT_PART)], {
  error: "expected a string or an array of input_text parts",
});
const ITEM_ID = { id: z.string().nullish(), status: z.string().nullish() };

const INPUT_ITEM = z.union([
  z.object({
    type: z.literal("message").optional(),
    role: z.enum(["user", "assistant", "system", "developer"]),
    content: CONTENT,
    ...ITEM_ID,
  }),
  z.object({
    type: z.literal("function_call"),
    call_id: z.string().min(1),
    name: z.string(),
    arguments: z.string(),
    ...ITEM_ID,
  }),
  z.object({
    type: z.literal("function_call_output"),
    call_id: z.string().min(1),
    output: CONTENT,
    ...ITEM_ID,
  }),
  z.object({ type: z.literal("item_reference"), id: z.string().min(1) }),
  z.object({ type: z.literal("reasoning"), id: z.string().nullish() }),
], {
  error: 'expected a message, "function_call", "function_call_output", "item_reference" or ' +
    '"reasoning" item',
});

const TOOL = z.object({
  type: z.string(),
  name: NAME.optional(),
  description: z.string().nullish(),
  parameters: SCHEMA.nullish(),
  strict: z.boolean().nullish(),
}).superRefine((tool, ctx) => {
  if (tool.type !== "function") {
    ctx.addIssue({
      code: "custom",
      path: ["type"],
      message: `'${tool.type}' is a built-in tool this server does not run; only "function" ` +
        "tools are supported",
    });
  } else if (tool.name === undefined) {
    ctx.addIssue({ code: "invalid_type", path: ["name"], expected: "string", input: undefined });
  }
});

const REQUEST_OBJECT = z.object({
  model: z.string().min(1),
  input: z.union([z.string(), z.array(INPUT_ITEM).min(1)], {
    error: "expected a string or an array of input items",
  }),
  instructions: z.string().nullish(),
  max_output_tokens: z.int().min(1).nullish(),
  temperature: z.number().min(0).max(2).nullish(),
  top_p: z.number().min(0).max(1).nullish(),
  seed: z.int().nullish(),
  stream: z.boolean().nullish(),
  text: z.object({
    format: z.discriminatedUnion("type", [
      z.object({ type: z.literal("text") }),
      z.object({ type: z.literal("json_object") }),
      z.object({
        type: z.literal("json_schema"),
        name: NAME,
        schema: SCHEMA,
        description: z.string().nullish(),
        strict: z.boolean().nullish(),
      }),
    ], { error: 'expected a type of "text", "json_object" or "json_schema"' }).nullish(),
    // "medium" is what every model does; other verbosities it cannot follow.
    verbosity: z.literal("medium", { error: "only 'medium' verbosity is supported" }).nullish(),
  }).nullish(),
  tools: z.array(TOOL).max(128, { error: "at most 128 tools are allowed" }).nullish(),
  tool_choice: z.union([
    z.enum(["none", "auto", "required"]),
    z.object({ type: z.literal("function"), name: NAME }),
  ], { error: 'expected "none", "auto", "required" or {"type": "function", "name"}' }).nullish(),
  parallel_tool_calls: z.boolean().nullish(),
  previous_response_id: z.string().min(1).nullish(),
  store: z.boolean().nullish(),
  metadata: z.record(z.string(), z.string()).nullish(),
  user: z.string().nullish(),
  truncation: z.literal("disabled", {
    error: "only 'disabled' is supported: a prompt longer than the model's context is an error",
  }).nullish(),
  ...Object.fromEntries(IGNORED_FIELDS.map((f) => [f, z.unknown().optional()])),
});
const KNOWN_FIELDS = new Set(Object.keys(REQUEST_OBJECT.shape));

/**
 * Validates a parsed JSON body as a Responses request; throws a `ValidationError` naming the first
 * bad, unknown or unsupported field.
 *
 * @example
 * ```ts
 * import { parseResponsesRequest } from "./responses_request.ts";
 * const req = parseResponsesRequest({ model: "m", input: "hi" });
 * ```
 */
export function parseResponsesRequest(body: unknown): ResponsesRequest {
  if (body !== null && typeof body === "object" && !Array.isArray(body)) {
    checkFieldsWeHonour(body as Record<string, unknown>);
  }
  return parseRequest(REQUEST_OBJECT as unknown as z.ZodType<ResponsesRequest>, body);
}

function checkFieldsWeHonour(body: Record<string, unknown>): void {
  for (const [field, value] of Object.entries(body)) {
    const why = UNSUPPORTED_FIELDS[field];
    if (why !== undefined) {
      if (!asksForNothing(value)) {
        throw new ValidationError(`Unsupported parameter: '${field}': ${why}.`, {
          param: field,
          code: "unsupported_parameter",
        });
      }
    } else if (!KNOWN_FIELDS.has(field)) {
      throw new ValidationError(
        `Unknown parameter: '${field}'. This server does not support it on /v1/responses.`,
        { param: field, code: "unknown_parameter" },
      );
    }
  }
}

function asksForNothing(value: unknown): boolean {
  if (value == null || value === false) return true;
  if (Array.isArray(value)) return value.length === 0;
  if (typeof value === "object") return Object.values(value).every((v) => v == null);
  return false;
}

/** Finds a stored output item by id (for `item_reference` inputs); undefined when unknown. */
export type ItemResolver = (id: string) => Promise<WireInputItem | undefined>;

/**
 * Converts input items to chat messages: a `function_call` joins the assistant turn before it (as
 * its `tool_calls`), a `function_call_output` becomes a `tool` message, an `item_reference` is
 * looked up with `resolve`.
 *
 * @example
 * ```ts
 * import { inputToMessages } from "./responses_request.ts";
 * await inputToMessages("hi", async () => undefined); // [{ role: "user", content: "hi" }]
 * ```
 */
export async function inputToMessages(
  input: string | readonly WireInputItem[],
  resolve: ItemResolver,
): Promise<WireChatMessage[]> {
  if (typeof input === "string") return [{ role: "user", content: input }];
  const messages: WireChatMessage[] = [];
  for (const [i, given] of input.entries()) {
    let item = given;
    if (item.type === "item_reference") {
      const found = await resolve(item.id);
      if (found === undefined) {
        throw new ValidationError(
          `Item with id '${item.id.slice(0, 100)}' not found: it was not stored (store: false), ` +
            "was evicted, or was never made by this server.",
          { param: `input.${i}.id`, code: "item_not_found" },
        );
      }
      item = found;
    }
    if (item.type === "function_call") {
      const call = {
        id: item.call_id,
        type: "function" as const,
        function: { name: item.name, arguments: item.arguments },
      };
      const last = messages.at(-1);
      if (last?.role === "assistant") last.tool_calls = [...(last.tool_calls ?? []), call];
      else messages.push({ role: "assistant", content: null, tool_calls: [call] });
    } else if (item.type === "function_call_output") {
      messages.push({ role: "tool", tool_call_id: item.call_id, content: text(item.output) });
    } else if (item.type === undefined || item.type === "message") {
      messages.push({ role: item.role, content: text(item.content) });
    }
  }
  return messages;
}

function text(content: string | readonly WireInputPart[]): string {
  return typeof content === "string" ? content : content.map((p) => p.text).join("\n");
}

/**
 * The chat completion request that runs a Responses request, given the conversation so far
 * (`history`: the previous response's messages, already expanded) and the new turn's messages.
 * `instructions` lead as a system message; as OpenAI does, they are not carried to later turns.
 *
 * @example
 * ```ts
 * import { toChatRequest } from "./responses_request.ts";
 * toChatRequest({ model: "m", input: "hi", max_output_tokens: 5 }, [
 *   { role: "user", content: "hi" },
 * ]); // { model: "m", messages: [...], max_completion_tokens: 5 }
 * ```
 */
export function toChatRequest(
  req: ResponsesRequest,
  messages: readonly WireChatMessage[],
): ChatCompletionRequest {
  const chat: ChatCompletionRequest = {
    model: req.model,
    messages: [
      ...(req.instructions ? [{ role: "system" as const, content: req.instructions }] : []),
      ...messages,
    ],
  };
  if (req.max_output_tokens != null) chat.max_completion_tokens = req.max_output_tokens;
  if (req.temperature != null) chat.temperature = req.temperature;
  if (req.top_p != null) chat.top_p = req.top_p;
  if (req.seed != null) chat.seed = req.seed;
  if (req.user != null) chat.user = req.user;
  if (req.stream === true) {
    chat.stream = true;
    chat.stream_options = { include_usage: true };
  }
  const format = req.text?.format;
  if (format?.type === "json_object") chat.response_format = { type: "json_object" };
  if (format?.type === "json_schema") {
    chat.response_format = {
      type: "json_schema",
      json_schema: {
        name: format.name,
        schema: format.schema,
        ...(format.description != null ? { description: format.description } : {}),
        ...(format.strict != null ? { strict: format.strict } : {}),
      },
    };
  }
  if (req.tools?.length) chat.tools = req.tools.map(toChatTool);
  if (req.tool_choice != null) chat.tool_choice = toChatToolChoice(req.tool_choice);
  if (req.parallel_tool_calls != null) chat.parallel_tool_calls = req.parallel_tool_calls;
  return chat;
}

function toChatTool(tool: WireResponsesTool): WireTool {
  return {
    type: "function",
    function: {
      name: tool.name,
      ...(tool.description != null ? { description: tool.description } : {}),
      ...(tool.parameters != null ? { parameters: tool.parameters } : {}),
      ...(tool.strict != null ? { strict: tool.strict } : {}),
    },
  };
}

function toChatToolChoice(
  choice: NonNullable<ResponsesRequest["tool_choice"]>,
): WireToolChoice {
  return typeof choice === "string"
    ? choice
    : { type: "function", function: { name: choice.name } };
}

// Chat request fields and the Responses fields they came from, most specific first.
const CHAT_TO_RESPONSES_PARAMS: [RegExp, string][] = [
  [/^response_format\.json_schema\.schema\b/, "text.format.schema"],
  [/^response_format\.json_schema\b/, "text.format"],
  [/^response_format\b/, "text.format"],
  [/^tools\.(\d+)\.function\b/, "tools.$1"],
  [/^tool_choice\.function\b/, "tool_choice"],
  [/^max_(completion_)?tokens\b/, "max_output_tokens"],
  // Messages are instructions, history and input together: no index of them means anything here.
  [/^messages\b.*/, "input"],
];

/**
 * The Responses request field behind a chat request field that an error names (the chat path
 * checks what it runs), e.g. `response_format.json_schema.schema.x` → `text.format.schema.x`.
 *
 * @example
 * ```ts
 * import { responsesParamOf } from "./responses_request.ts";
 * responsesParamOf("tools.0.function.parameters"); // "tools.0.parameters"
 * ```
 */
export function responsesParamOf(chatParam: string): string {
  for (const [pattern, replacement] of CHAT_TO_RESPONSES_PARAMS) {
    if (pattern.test(chatParam)) return chatParam.replace(pattern, replacement);
  }
  return chatParam;
}

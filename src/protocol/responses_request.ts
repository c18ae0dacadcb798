/**
 * `POST /v1/responses` request (OpenAI's Responses API): wire types and validation. The server
 * runs it as a chat completion request (see responses_to_chat.ts).
 *
 * Fields we cannot honour (built-in tools, `background`, stored prompts…) are a 400 that names
 * them, never dropped.
 *
 * @module
 */
import { z } from "zod";
import { ValidationError } from "../core/errors.ts";
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
  tool_choice?:
    | "none"
    | "auto"
    | "required"
    | { type: "function"; name: string }
    | {
      type: "allowed_tools";
      mode: "auto" | "required";
      tools: { type: "function"; name: string }[];
    }
    | null;
  parallel_tool_calls?: boolean | null;
  previous_response_id?: string | null;
  store?: boolean | null;
  metadata?: Record<string, string> | null;
  user?: string | null;
  /** Extra output; `message.output_text.logprobs` adds the answer's token log-probabilities. */
  include?: ResponsesIncludable[] | null;
  /** Alternatives per token (0-20) in the log-probabilities; implies them. */
  top_logprobs?: number | null;
  /** Accepted and echoed; no model here takes an effort or writes a summary. */
  reasoning?: { effort?: string | null; summary?: string | null } | null;
  /** A cap on built-in tool calls, which this server never makes: accepted and echoed. */
  max_tool_calls?: number | null;
}

/** The `include` value that asks for the answer's log-probabilities. */
export const LOGPROBS_INCLUDE = "message.output_text.logprobs";

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
  conversation: "conversations are not supported; chain responses with previous_response_id",
  prompt: "stored prompt templates are not supported; send the input itself",
  context_management: "context management is not supported",
};

// OpenAI's `include` values. Those about items this server never makes (built-in tools' calls,
// images, encrypted reasoning) ask for nothing here and are accepted.
const INCLUDABLE = [
  "code_interpreter_call.outputs",
  "computer_call_output.output.image_url",
  "file_search_call.results",
  "message.input_image.image_url",
  "message.output_text.logprobs",
  "reasoning.encrypted_content",
  "web_search_call.action.sources",
  "web_search_call.results",
] as const;

/** A value of `include`. */
export type ResponsesIncludable = typeof INCLUDABLE[number];
const INCLUDE = z.array(
  z.enum(INCLUDABLE, { error: `expected one of ${INCLUDABLE.map((v) => `'${v}'`).join(", ")}` }),
);

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
    z.object({
      type: z.literal("allowed_tools"),
      mode: z.enum(["auto", "required"]),
      tools: z.array(z.object({ type: z.literal("function"), name: NAME })).min(1),
    }),
  ], {
    error: 'expected "none", "auto", "required", {"type": "function", "name"} or ' +
      '{"type": "allowed_tools", "mode", "tools"}',
  }).nullish(),
  parallel_tool_calls: z.boolean().nullish(),
  previous_response_id: z.string().min(1).nullish(),
  store: z.boolean().nullish(),
  // OpenAI's limits: it is kept with the response, so it must stay small.
  metadata: z.record(
    z.string().max(64, { error: "metadata keys have at most 64 characters" }),
    z.string().max(512, { error: "metadata values have at most 512 characters" }),
  ).refine((m) => Object.keys(m).length <= 16, { error: "at most 16 metadata pairs" })
    .nullish(),
  user: z.string().nullish(),
  include: INCLUDE.nullish(),
  top_logprobs: z.int().min(0).max(20).nullish(),
  reasoning: z.object({
    // OpenAI's efforts and summaries; the model answers as it always does.
    effort: z.enum(["none", "minimal", "low", "medium", "high", "xhigh"]).nullish(),
    summary: z.enum(["auto", "concise", "detailed"]).nullish(),
    generate_summary: z.enum(["auto", "concise", "detailed"]).nullish(),
  }).nullish(),
  max_tool_calls: z.int().min(1).nullish(),
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

/**
 * The tool and structured-output fields of `POST /v1/chat/completions`: `tools`, `tool_choice`,
 * `parallel_tool_calls`, `response_format`, and the `tool_calls` of assistant messages, with their
 * validation and conversion to the engine's terms.
 *
 * @module
 */
import { z } from "zod";
import type {
  ResponseFormat,
  SamplingParams,
  ToolCall,
  ToolDefinition,
} from "../core/inference_types.ts";

/** A function tool on the wire. */
export interface WireTool {
  type: "function";
  function: {
    name: string;
    description?: string | null;
    parameters?: Record<string, unknown> | null;
    strict?: boolean | null;
  };
}

/** `tool_choice` on the wire. */
export type WireToolChoice =
  | "none"
  | "auto"
  | "required"
  | { type: "function"; function: { name: string } }
  | WireAllowedTools;

/** `tool_choice` that keeps every tool in the prompt and lets the model call only some. */
export interface WireAllowedTools {
  type: "allowed_tools";
  allowed_tools: {
    mode: "auto" | "required";
    tools: { type: "function"; function: { name: string } }[];
  };
}

/** `response_format` on the wire. */
export type WireResponseFormat =
  | { type: "text" }
  | { type: "json_object" }
  | {
    type: "json_schema";
    json_schema: {
      name: string;
      description?: string | null;
      schema?: Record<string, unknown> | boolean | null;
      strict?: boolean | null;
    };
  };

/** A tool call in an assistant message or a response. */
export interface WireToolCall {
  /** Call id. */
  id: string;
  /** Always `function`. */
  type: "function";
  /** Function name and JSON arguments. */
  function: { name: string; arguments: string };
}

/** The request fields this module adds to a chat request. */
export interface WireToolFields {
  tools?: WireTool[] | null;
  tool_choice?: WireToolChoice | null;
  parallel_tool_calls?: boolean | null;
  response_format?: WireResponseFormat | null;
}

// OpenAI's rule for function and schema names.
const NAME = z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/, {
  error: "expected 1-64 letters, digits, underscores or dashes",
});
const SCHEMA = z.record(z.string(), z.unknown(), { error: "expected a JSON Schema object" });
// A call's arguments are a JSON object (templates and clients read them as one), so a function's
// parameters must describe one, as OpenAI requires.
const PARAMETERS = SCHEMA.superRefine((schema, ctx) => {
  const type = schema.type;
  if (type === undefined || type === "object" || (Array.isArray(type) && type.includes("object"))) {
    return;
  }
  ctx.addIssue({
    code: "custom",
    path: ["type"],
    message: `a function's parameters must be a JSON Schema of type "object", got type ${
      JSON.stringify(type)
    }`,
  });
});

const TOOL = z.strictObject({
  type: z.literal("function", { error: 'only "function" tools are supported' }),
  function: z.strictObject({
    name: NAME,
    description: z.string().nullish(),
    parameters: PARAMETERS.nullish(),
    strict: z.boolean().nullish(),
  }),
});

/** The zod shape of an assistant message's `tool_calls` entry. */
export const TOOL_CALL_SHAPE: z.ZodType<WireToolCall> = z.object({
  id: z.string(),
  type: z.literal("function", { error: 'only "function" tool calls are supported' }),
  function: z.object({ name: z.string(), arguments: z.string() }),
});

/** zod schema of `response_format` (chat, and legacy completions as vLLM takes it there too). */
export const RESPONSE_FORMAT_SCHEMA: z.ZodType<WireResponseFormat> = z.discriminatedUnion("type", [
  z.strictObject({ type: z.literal("text") }),
  z.strictObject({ type: z.literal("json_object") }),
  z.strictObject({
    type: z.literal("json_schema"),
    json_schema: z.strictObject({
      name: NAME,
      description: z.string().nullish(),
      schema: z.union([SCHEMA, z.boolean()]).nullish(),
      strict: z.boolean().nullish(),
    }),
  }),
], { error: 'expected a type of "text", "json_object" or "json_schema"' });

/** The zod shape of {@link WireToolFields}, spread into the chat request schema. */
export const TOOL_FIELDS_SHAPE = {
  tools: z.array(TOOL).max(128, { error: "at most 128 tools are allowed" }).nullish(),
  tool_choice: z.union([
    z.enum(["none", "auto", "required"]),
    z.strictObject({
      type: z.literal("function"),
      function: z.strictObject({ name: NAME }),
    }),
    z.strictObject({
      type: z.literal("allowed_tools"),
      allowed_tools: z.strictObject({
        mode: z.enum(["auto", "required"]),
        tools: z.array(z.strictObject({
          type: z.literal("function", { error: 'only "function" tools are supported' }),
          function: z.strictObject({ name: NAME }),
        })).min(1),
      }),
    }),
  ], {
    error: 'expected "none", "auto", "required", {"type": "function", "function": {"name"}} ' +
      'or {"type": "allowed_tools", "allowed_tools": {"mode", "tools"}}',
  }).nullish(),
  parallel_tool_calls: z.boolean().nullish(),
  response_format: RESPONSE_FORMAT_SCHEMA.nullish(),
};

/** Cross-field rules of the tool fields; returns an issue or undefined. */
export function checkToolFields(
  req: WireToolFields,
): { path: string[]; message: string } | undefined {
  const choice = req.tool_choice;
  if (choice != null && choice !== "none" && !req.tools?.length) {
    return { path: ["tool_choice"], message: "tool_choice needs tools" };
  }
  const named = (name: string, path: string[]) =>
    req.tools?.some((t) => t.function.name === name)
      ? undefined
      : { path, message: `no tool is named '${name}'` };
  if (typeof choice === "object" && choice?.type === "function") {
    const issue = named(choice.function.name, ["tool_choice", "function", "name"]);
    if (issue) return issue;
  }
  if (typeof choice === "object" && choice?.type === "allowed_tools") {
    for (const [i, tool] of choice.allowed_tools.tools.entries()) {
      const path = ["tool_choice", "allowed_tools", "tools", String(i), "function", "name"];
      const issue = named(tool.function.name, path);
      if (issue) return issue;
    }
  }
  const names = new Set<string>();
  for (const [i, tool] of (req.tools ?? []).entries()) {
    if (names.has(tool.function.name)) {
      return {
        path: ["tools", String(i), "function", "name"],
        message: `two tools are named '${tool.function.name}'`,
      };
    }
    names.add(tool.function.name);
  }
  return undefined;
}

/** The engine's tool definitions of a request (undefined without tools). */
export function toToolDefinitions(req: WireToolFields): ToolDefinition[] | undefined {
  if (!req.tools?.length) return undefined;
  return req.tools.map(({ function: f }) => ({
    name: f.name,
    ...(f.description != null ? { description: f.description } : {}),
    ...(f.parameters != null ? { parameters: f.parameters } : {}),
  }));
}

/**
 * The sampling settings the tool fields give: the response format, tool choice and whether
 * several calls are allowed. `{type: "text"}` is the default and adds nothing.
 *
 * @example
 * ```ts
 * import { toolSamplingParams } from "./tools.ts";
 * toolSamplingParams({ response_format: { type: "json_object" } });
 * // { responseFormat: { type: "json_object" } }
 * ```
 */
export function toolSamplingParams(req: WireToolFields): SamplingParams {
  const params: SamplingParams = {};
  const format = toResponseFormat(req.response_format);
  if (format !== undefined) params.responseFormat = format;
  const choice = req.tool_choice;
  if (typeof choice === "string") params.toolChoice = choice;
  else if (choice?.type === "function") params.toolChoice = { name: choice.function.name };
  else if (choice?.type === "allowed_tools") {
    params.toolChoice = choice.allowed_tools.mode;
    params.allowedTools = choice.allowed_tools.tools.map((t) => t.function.name);
  }
  if (req.parallel_tool_calls != null) params.parallelToolCalls = req.parallel_tool_calls;
  return params;
}

/**
 * The engine's format for a wire `response_format`; `text` (the default) and none are undefined.
 *
 * @example
 * ```ts
 * import { toResponseFormat } from "./tools.ts";
 * toResponseFormat({ type: "json_object" }); // { type: "json_object" }
 * ```
 */
export function toResponseFormat(
  format: WireResponseFormat | null | undefined,
): ResponseFormat | undefined {
  if (format?.type === "json_object") return { type: "json_object" };
  if (format?.type === "json_schema") {
    return { type: "json_schema", schema: format.json_schema.schema ?? true };
  }
  return undefined;
}

/** The engine's tool calls of an assistant message. */
export function toToolCalls(calls: readonly WireToolCall[]): ToolCall[] {
  return calls.map((c) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments }));
}

/** Tool calls on the wire. */
export function toWireToolCalls(calls: readonly ToolCall[]): WireToolCall[] {
  return calls.map((c) => ({
    id: c.id,
    type: "function",
    function: { name: c.name, arguments: c.arguments },
  }));
}

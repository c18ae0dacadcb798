/**
 * A Responses request as a chat completion request, which is how the server runs it (the chat
 * path's template, constrained decoding and tool calling, unchanged); and the way back for the
 * fields that errors of the chat path name.
 *
 * @module
 */
import { ValidationError } from "../core/errors.ts";
import type { ChatCompletionRequest, WireChatMessage } from "./chat_request.ts";
import {
  LOGPROBS_INCLUDE,
  type ResponsesRequest,
  type WireInputItem,
  type WireInputPart,
  type WireResponsesTool,
} from "./responses_request.ts";
import type { WireTool, WireToolChoice } from "./tools.ts";

/** Finds a stored output item by id (for `item_reference` inputs); undefined when unknown. */
export type ItemResolver = (id: string) => Promise<WireInputItem | undefined>;

/**
 * Converts input items to chat messages: a `function_call` joins the assistant turn before it (as
 * its `tool_calls`), a `function_call_output` becomes a `tool` message, an `item_reference` is
 * looked up with `resolve`.
 *
 * @example
 * ```ts
 * import { inputToMessages } from "./responses_to_chat.ts";
 * await inputToMessages("hi", async () => undefined); // [{ role: "user", content: "hi" }]
 * ```
 */
export async function inputToMessages(
  input: string | readonly WireInputItem[],
  resolve: ItemResolver,
  options: {
    /**
     * Calls made earlier in the conversation: given, a `function_call_output` must answer one of
     * these or a `function_call` before it in `input` (a 400 otherwise, as OpenAI answers).
     */
    callIds?: ReadonlySet<string>;
  } = {},
): Promise<WireChatMessage[]> {
  if (typeof input === "string") return [{ role: "user", content: input }];
  const messages: WireChatMessage[] = [];
  const calls = options.callIds === undefined ? undefined : new Set(options.callIds);
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
      calls?.add(item.call_id);
    } else if (item.type === "function_call_output") {
      if (calls !== undefined && !calls.has(item.call_id)) {
        throw new ValidationError(
          `No tool call found for function call output with call_id ` +
            `'${item.call_id.slice(0, 100)}': send the function_call it answers (or chain to ` +
            "the response that made it with previous_response_id).",
          { param: `input.${i}.call_id`, code: "tool_call_not_found" },
        );
      }
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
 * import { toChatRequest } from "./responses_to_chat.ts";
 * toChatRequest({ model: "m", input: "hi", max_output_tokens: 5 }, [
 *   { role: "user", content: "hi" },
 * ]); // { model: "m", messages: [...], max_completion_tokens: 5, stream: true, … }
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
  if (wantsLogprobs(req)) {
    chat.logprobs = true;
    chat.top_logprobs = req.top_logprobs ?? 0;
  }
  // Streamed whether or not the client streams: one reading of the chat stream makes the JSON
  // answer and the events, so the two always agree.
  chat.stream = true;
  chat.stream_options = { include_usage: true };
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

/**
 * Whether the answer carries its tokens' log-probabilities: asked for with
 * `include: ["message.output_text.logprobs"]`, or implied by `top_logprobs` above 0.
 */
export function wantsLogprobs(req: ResponsesRequest): boolean {
  return req.include?.includes(LOGPROBS_INCLUDE) === true || (req.top_logprobs ?? 0) > 0;
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
  if (typeof choice === "string") return choice;
  if (choice.type === "function") return { type: "function", function: { name: choice.name } };
  return {
    type: "allowed_tools",
    allowed_tools: {
      mode: choice.mode,
      tools: choice.tools.map((t) => ({ type: "function", function: { name: t.name } })),
    },
  };
}

// Chat request fields and the Responses fields they came from, most specific first.
const CHAT_TO_RESPONSES_PARAMS: [RegExp, string][] = [
  [/^response_format\.json_schema\.schema\b/, "text.format.schema"],
  [/^response_format\.json_schema\b/, "text.format"],
  [/^response_format\b/, "text.format"],
  [/^tools\.(\d+)\.function\b/, "tools.$1"],
  [/^tool_choice\.function\b/, "tool_choice"],
  [/^tool_choice\.allowed_tools\.tools\.(\d+)\.function\.name\b/, "tool_choice.tools.$1.name"],
  [/^max_(completion_)?tokens\b/, "max_output_tokens"],
  [/^(top_)?logprobs\b/, "top_logprobs"],
  // Messages are instructions, history and input together: no index of them means anything here.
  [/^messages\b.*/, "input"],
];

/**
 * The Responses request field behind a chat request field that an error names (the chat path
 * checks what it runs), e.g. `response_format.json_schema.schema.x` → `text.format.schema.x`.
 *
 * @example
 * ```ts
 * import { responsesParamOf } from "./responses_to_chat.ts";
 * responsesParamOf("tools.0.function.parameters"); // "tools.0.parameters"
 * ```
 */
export function responsesParamOf(chatParam: string): string {
  for (const [pattern, replacement] of CHAT_TO_RESPONSES_PARAMS) {
    if (pattern.test(chatParam)) return chatParam.replace(pattern, replacement);
  }
  return chatParam;
}

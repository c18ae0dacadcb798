/**
 * Turns a {@link PromptInput} into prompt token ids: chat messages go through the model's chat
 * template (with the request's extra template variables), raw prompts are tokenized as they are.
 * Also tells whether the model writes reasoning between `<think>` tags and whether the rendered
 * prompt already opened such a block.
 *
 * @module
 */

import { errorMessage, SvcException, ValidationError } from "../../core/errors.ts";
import type {
  ChatMessage,
  PromptInput,
  ReasoningMarkers,
  ToolCallFormat,
  ToolDefinition,
} from "../../core/inference_types.ts";
import {
  PYTHON_CHARS,
  PYTHON_STR,
  pythonStr,
  withStringFilter,
  withStringIteration,
  withUndefinedAsEmpty,
} from "./string_filter.ts";
import {
  HERMES_TOOL_CALLS,
  toolCallFormatFor,
  writeToolCalls,
} from "../../protocol/tool_call_formats.ts";

/** The tokenizer methods prompt rendering uses (transformers.js' PreTrainedTokenizer). */
export interface PromptTokenizer {
  encode(text: string, options?: { add_special_tokens?: boolean }): number[];
  decode(ids: number[], options?: { skip_special_tokens?: boolean }): string;
  apply_chat_template(
    messages: unknown[],
    options: {
      tokenize: false;
      add_generation_prompt: boolean;
      tools?: unknown[];
      chat_template?: string;
    },
  ): string;
  chat_template: unknown;
  get_vocab(): Map<string, number> | Record<string, number>;
}

/** A rendered prompt. */
export interface RenderedPrompt {
  ids: number[];
  /** Set for chat prompts of models whose vocabulary has reasoning tags. */
  reasoning?: ReasoningMarkers;
}

/**
 * The request field a prompt came from, for error messages: `messages`, `prompt`, or `prompt.k`
 * when it is prompt k of several `inputs` (a legacy completion's list of prompts).
 *
 * @example
 * ```ts
 * import { promptParam } from "./prompt.ts";
 * const inputs = [{ prompt: "a" }, { prompt: "b" }];
 * promptParam(inputs[1], inputs); // "prompt.1"
 * ```
 */
export function promptParam(input: PromptInput, inputs?: readonly PromptInput[]): string {
  if ("messages" in input) return "messages";
  return inputs !== undefined && inputs.length > 1 ? `prompt.${inputs.indexOf(input)}` : "prompt";
}

/** Reasoning tags a model may have, as Qwen3, DeepSeek-R1 and QwQ write them. */
const REASONING_TAGS: readonly { start: string; end: string }[] = [
  { start: "<think>", end: "</think>" },
];

/**
 * Names `chat_template_kwargs` may not use: transformers.js reads them as options of
 * `apply_chat_template` (so they would not reach the template, or would change what it renders
 * from), or they would replace the template's own variables.
 */
export const RESERVED_TEMPLATE_KWARGS: readonly string[] = [
  "messages",
  "add_generation_prompt",
  "chat_template",
  "tokenize",
  "padding",
  "truncation",
  "max_length",
  "return_tensor",
  "return_dict",
  "tokenizer_kwargs",
  "raise_exception",
];

const tagCache = new WeakMap<object, { start: string; end: string } | null>();

/**
 * The reasoning tags of a tokenizer: both must be tokens of its vocabulary (added tokens
 * included) that survive decoding (not special tokens, which the engine's detokenizer drops), so a
 * model without them never has its text split.
 *
 * @example
 * ```ts
 * import { reasoningTags } from "./prompt.ts";
 * const vocab = new Map([["<think>", 1], ["</think>", 2]]);
 * const tok = {
 *   get_vocab: () => vocab,
 *   decode: (ids: number[]) => [...vocab].find(([, id]) => id === ids[0])?.[0] ?? "",
 * };
 * reasoningTags(tok); // { start: "<think>", end: "</think>" }
 * ```
 */
export function reasoningTags(
  tokenizer: Pick<PromptTokenizer, "get_vocab" | "decode">,
): { start: string; end: string } | null {
  const cached = tagCache.get(tokenizer);
  if (cached !== undefined) return cached;
  const vocab = tokenizer.get_vocab();
  const has = (token: string) => {
    const id = vocab instanceof Map
      ? vocab.get(token)
      : Object.hasOwn(vocab, token)
      ? vocab[token]
      : undefined;
    return id !== undefined && tokenizer.decode([id], { skip_special_tokens: true }) === token;
  };
  const found = REASONING_TAGS.find((t) => has(t.start) && has(t.end)) ?? null;
  tagCache.set(tokenizer, found);
  return found;
}

/**
 * Renders and tokenizes a prompt. Chat template failures (a `raise_exception` such as
 * "Conversation roles must alternate", or a template that cannot render these messages) are
 * `ValidationError`s: the request is what the template refused.
 *
 * @example
 * ```ts
 * import { renderPrompt } from "./prompt.ts";
 * declare const tokenizer: import("./prompt.ts").PromptTokenizer;
 * const { ids } = renderPrompt(tokenizer, { prompt: "Once upon a time" }, "m");
 * ```
 */
export function renderPrompt(
  tokenizer: PromptTokenizer,
  input: PromptInput,
  modelId: string,
): RenderedPrompt {
  if ("tokenIds" in input) return { ids: input.tokenIds };
  if ("prompt" in input) return { ids: tokenizer.encode(input.prompt) };
  const { messages, continueFinalMessage } = input;
  let text = renderChatTemplate(tokenizer, messages, input.templateKwargs, modelId, {
    tools: input.tools,
    addGenerationPrompt: !continueFinalMessage && input.addGenerationPrompt !== false,
  });
  if (continueFinalMessage) {
    // What the template writes after the last message's text (its end-of-turn) is cut, so the
    // model goes on writing that message (vLLM's rule).
    const last = messages.at(-1)!.content;
    const at = last === "" ? -1 : text.lastIndexOf(last);
    if (at < 0) {
      throw new ValidationError(
        "continue_final_message needs a last message whose text the chat template writes out",
        { param: "continue_final_message" },
      );
    }
    text = text.slice(0, at + last.length);
  }
  const ids = tokenizer.encode(text, { add_special_tokens: false });
  const tags = reasoningTags(tokenizer);
  if (tags === null) return { ids };
  return { ids, reasoning: { ...tags, startsInside: text.trimEnd().endsWith(tags.start) } };
}

/**
 * The chat template's text for `messages`, with the generation prompt unless told otherwise.
 * `tools` go to the template in OpenAI's shape (`{type: "function", function: {...}}`), as
 * Hugging Face templates expect; a template that does not use them gets them described in a
 * system message instead (see {@link withToolsInText}).
 */
export function renderChatTemplate(
  tokenizer: PromptTokenizer,
  messages: readonly ChatMessage[],
  kwargs: Record<string, unknown> | undefined,
  modelId: string,
  options: { tools?: readonly ToolDefinition[]; addGenerationPrompt?: boolean } = {},
): string {
  if (!tokenizer.chat_template) {
    throw new ValidationError(
      `model '${modelId}' has no chat template; use /v1/completions with a prompt`,
      { param: "messages" },
    );
  }
  for (const key of Object.keys(kwargs ?? {})) {
    if (RESERVED_TEMPLATE_KWARGS.includes(key)) {
      throw new ValidationError(
        `chat_template_kwargs may not set '${key}': the server sets it (reserved: ` +
          `${RESERVED_TEMPLATE_KWARGS.join(", ")})`,
        { param: `chat_template_kwargs.${key}`, code: "invalid_value" },
      );
    }
  }
  const tools = options.tools?.length ? options.tools : undefined;
  const template = chatTemplateText(tokenizer.chat_template, tools !== undefined);
  const templateHasTools = template.includes("tools");
  const toolHistory = messages.some((m) => m.role === "tool" || m.toolCalls?.length);
  if ((tools || toolHistory) && !templateHasTools) {
    messages = withToolsInText(messages, tools ?? [], {
      format: toolCallFormatFor(template),
      nativeCalls: template.includes("tool_calls"),
    });
  }
  // Templates that join the arguments to text (DeepSeek R1) take them as the JSON text.
  const argumentsAsText = ARGUMENTS_AS_TEXT.test(template);
  // Templates that loop over a message's content parts: one that also takes string content
  // (`content is string`, Llama 3.2 Vision, Gemma 3) gets the text as it is, its loops iterating a
  // string's characters as Python's Jinja does (transformers.js refuses strings there); one that
  // only takes parts gets the text as one part (vLLM does the same; Python would drop the text).
  const loops = LOOPS_OVER_CONTENT.test(template);
  const parts = loops && !TESTS_CONTENT_STRING.test(template);
  const rewritten = withUndefinedAsEmpty(
    withStringFilter(loops && !parts ? withStringIteration(template) : template),
  );
  // A tool-only assistant turn's content is null in OpenAI's API; the engine keeps "" (which
  // templates such as QwQ's and Llama 3.2 Vision's need), unless the template tells such a turn
  // by `content is none` (DeepSeek R1 and its distills, which otherwise drop the calls).
  const nullToolTurn = TESTS_CONTENT_NONE.test(template);
  // OpenAI's tool messages carry no name; a template that reads it (Hermes 2 Pro refuses a tool
  // message without one) gets the name of the call the message answers.
  const callNames = READS_MESSAGE_NAME.test(template)
    ? new Map(messages.flatMap((m) => m.toolCalls ?? []).map((c) => [c.id, c.name]))
    : new Map<string, string>();
  const wire = messages.map((m) => ({
    role: m.role === "developer" ? "system" : m.role,
    content: nullToolTurn && m.toolCalls?.length && m.content === ""
      ? null
      : parts
      ? [{ type: "text", text: m.content }]
      : m.content,
    ...(m.name ? { name: m.name } : {}),
    ...(!m.name && m.toolCallId && callNames.has(m.toolCallId)
      ? { name: callNames.get(m.toolCallId) }
      : {}),
    ...(m.toolCallId ? { tool_call_id: m.toolCallId } : {}),
    ...(m.toolCalls?.length
      ? {
        tool_calls: m.toolCalls.map((c) => ({
          id: c.id,
          type: "function",
          function: {
            name: c.name,
            arguments: argumentsAsText ? c.arguments : argumentsObject(c.arguments),
          },
        })),
      }
      : {}),
  }));
  try {
    return tokenizer.apply_chat_template(wire, {
      ...kwargs,
      ...(rewritten !== template
        ? {
          chat_template: rewritten,
          [PYTHON_STR]: (value: unknown) => pythonStr(value),
          [PYTHON_CHARS]: (text: string) => Array.from(text),
        }
        : {}),
      ...(tools && templateHasTools ? { tools: tools.map(wireTool) } : {}),
      tokenize: false,
      add_generation_prompt: options.addGenerationPrompt ?? true,
    });
  } catch (err) {
    if (err instanceof SvcException) throw err;
    const reason = errorMessage(err);
    throw new ValidationError(
      `the chat template of model '${modelId}' rejected these messages: ${reason}`,
      { param: "messages", code: "chat_template_error", cause: err },
    );
  }
}

/**
 * `+ x['function']['arguments']` or `x.function.arguments +`: a template that joins the arguments
 * to a string (DeepSeek R1's), which Python only renders with them as text.
 */
const ARGUMENTS_AS_TEXT =
  /\+\s*\w+(?:\.\w+|\[\s*['"]\w+['"]\s*\])*(?:\.arguments|\[\s*['"]arguments['"]\s*\])(?!\s*\||[\w.[])|(?:\.arguments|\[\s*['"]arguments['"]\s*\])\s*\+/;

/** `{% for x in message['content'] %}` or `message.content`, under any loop variable name. */
const LOOPS_OVER_CONTENT =
  /\{%-?\s*for\s+\w+\s+in\s+\w+(\[\s*['"]content['"]\s*\]|\.content)\s*-?%\}/;

/** `message.name` or `message['name']`: a template that reads a message's name. */
const READS_MESSAGE_NAME = /\bmessage(?:\.name\b|\[\s*['"]name['"]\s*\])/;

/** `message['content'] is string`: a template that takes string content as well as parts. */
const TESTS_CONTENT_STRING = /(?:\.content|\[\s*['"]content['"]\s*\])\s+is\s+string\b/;

/** `message['content'] is none` (or `is not none`): a template that tells tool-only turns so. */
const TESTS_CONTENT_NONE = /(?:\.content|\[\s*['"]content['"]\s*\])\s+is\s+(?:not\s+)?none\b/;

/**
 * The text of the template that renders a conversation: the template itself, or from a list of
 * named templates (`[{name, template}]`, which transformers.js keeps as an object by name)
 * `tool_use` when tools are given and there is one, else `default` — transformers' rule. Empty
 * when there is none.
 */
export function chatTemplateText(template: unknown, withTools: boolean): string {
  if (typeof template === "string") return template;
  if (template === null || typeof template !== "object") return "";
  const named: Record<string, unknown> = Array.isArray(template)
    ? Object.fromEntries(template.map((t) => [t?.name, t?.template]))
    : template as Record<string, unknown>;
  const chosen = withTools && typeof named.tool_use === "string" ? named.tool_use : named.default;
  return typeof chosen === "string" ? chosen : "";
}

/**
 * A tool call's arguments as templates take them: the object the JSON text holds (transformers
 * requires a mapping; vLLM parses them too), or the text itself when it is not a JSON object.
 */
function argumentsObject(text: string): unknown {
  try {
    const value = JSON.parse(text);
    return value !== null && typeof value === "object" && !Array.isArray(value) ? value : text;
  } catch {
    return text;
  }
}

// Calls written into their assistant turns; tool results, and a user message after them, as one
// user turn per round.
function inTextTurns(messages: readonly ChatMessage[], format: ToolCallFormat): ChatMessage[] {
  const out: ChatMessage[] = [];
  let results: ChatMessage | null = null; // the user turn holding this round's results
  for (const m of messages) {
    if (m.role === "tool" || (m.role === "user" && results !== null)) {
      const text = m.role === "tool"
        ? `<tool_response>\n${m.content}\n</tool_response>`
        : m.content;
      if (results === null) out.push(results = { role: "user", content: text });
      else results.content = `${results.content}\n${text}`;
      continue;
    }
    results = null;
    if (!m.toolCalls?.length) {
      out.push(m);
      continue;
    }
    const calls = writeToolCalls(format, m.toolCalls);
    out.push({ role: m.role, content: [m.content, calls].filter((x) => x).join("\n") });
  }
  return out;
}

function wireTool(tool: ToolDefinition): unknown {
  return { type: "function", function: tool };
}

/**
 * For a template that does not list tools: the tools (if any) described in a system message, with
 * how to call them in `format` (Hermes' words for Hermes, the markup the output is then held to).
 * Unless the template renders calls itself (`nativeCalls`, as DeepSeek R1's does), earlier calls
 * are written into the assistant turns in that markup, and tool results become user turns, since
 * such a template may not know the `tool` role: the results of one round of calls, and a user
 * message right after them, share one turn (templates such as Gemma's insist that user and
 * assistant alternate).
 */
export function withToolsInText(
  messages: readonly ChatMessage[],
  tools: readonly ToolDefinition[],
  options: { format?: ToolCallFormat; nativeCalls?: boolean } = {},
): ChatMessage[] {
  const format = options.format ?? HERMES_TOOL_CALLS;
  const listing = tools.map((t) => JSON.stringify(wireTool(t))).join("\n");
  const how = format === HERMES_TOOL_CALLS
    ? "For each function call, return a json object with function name and arguments within " +
      "<tool_call></tool_call> XML tags:\n<tool_call>\n" +
      '{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>'
    : "To call functions, answer with the calls in this form:\n" +
      writeToolCalls(format, [{ name: "<function-name>", arguments: "<args-json-object>" }]);
  const instructions = "# Tools\n\nYou may call one or more functions to assist with the user " +
    "query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n" +
    `<tools>\n${listing}\n</tools>\n\n${how}`;
  const out: ChatMessage[] = options.nativeCalls ? [...messages] : inTextTurns(messages, format);
  if (tools.length === 0) return out;
  const first = out[0];
  if (first?.role === "system" || first?.role === "developer") {
    out[0] = { role: "system", content: `${first.content}\n\n${instructions}` };
  } else {
    out.unshift({ role: "system", content: instructions });
  }
  return out;
}

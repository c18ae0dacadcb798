/**
 * The grammar a chat generation is held to: a `response_format` (any JSON object, or a JSON
 * Schema), tool calls in the model family's markup (`tool_choice` required or named: only calls;
 * auto: free text, and once the model opens a call its arguments follow the function's schema), or
 * both (auto with a response format: the formatted answer or calls).
 *
 * @module
 */

import { ValidationError } from "../../core/errors.ts";
import {
  alt,
  anyJsonValue,
  type GrammarNode,
  lit,
  objectNode,
  repeat,
  seq,
  textNode,
} from "../constrained/grammar.ts";
import { compileSchema } from "../constrained/schema_compiler.ts";
import { chatTemplateText } from "./prompt.ts";
import type {
  ResponseFormat,
  SamplingParams,
  ToolCallFormat,
  ToolChoice,
  ToolDefinition,
} from "../../core/inference_types.ts";

/**
 * Hermes' tool-call markup, which Qwen 2.5/3, Hermes and many fine-tunes are trained on:
 * `<tool_call>\n{"name": "f", "arguments": {...}}\n</tool_call>`. It is also what a model whose
 * template has no tool support is taught (see prompt.ts) and held to.
 */
export const HERMES_TOOL_CALLS: ToolCallFormat = {
  start: "<tool_call>",
  end: "</tool_call>",
  argumentsKey: "arguments",
  separator: "\n",
};

/**
 * Llama 3.1-3.3's JSON tool calls: the answer is `{"name": "f", "parameters": {...}}`, several
 * joined by `; `, with no markup around them.
 */
export const LLAMA3_JSON_TOOL_CALLS: ToolCallFormat = {
  start: "",
  end: "",
  argumentsKey: "parameters",
  separator: "; ",
};

/**
 * Mistral's tool calls (v3 tokenizer: Mistral 7B Instruct v0.3, Mixtral 8x22B Instruct, Mistral
 * Nemo): `[TOOL_CALLS] [{"name": "f", "arguments": {...}}, ...]`, one JSON array, ended by EOS.
 */
export const MISTRAL_TOOL_CALLS: ToolCallFormat = {
  start: "[TOOL_CALLS]",
  end: "",
  argumentsKey: "arguments",
  separator: ", ",
  list: true,
};

/**
 * The tool-call format a chat template was written for: Mistral's when it writes `[TOOL_CALLS]`
 * followed by a list, Llama 3's JSON when it renders or asks for calls with `"parameters"` and
 * knows no `<tool_call>` tag, otherwise Hermes (also what a template without tool support is
 * taught).
 */
export function toolCallFormatOf(chatTemplate: unknown): ToolCallFormat {
  // With tools, a list of named templates renders with its `tool_use` one (or `default`).
  const text = chatTemplateText(chatTemplate, true);
  // Newer Mistral templates write `[TOOL_CALLS]name[ARGS]{...}`, a format not supported yet.
  if (text.includes("[TOOL_CALLS]") && !text.includes("[ARGS]")) return MISTRAL_TOOL_CALLS;
  const llama = text.includes("tools") && text.includes('"parameters"') &&
    !text.includes("<tool_call>");
  return llama ? LLAMA3_JSON_TOOL_CALLS : HERMES_TOOL_CALLS;
}

/** The tool choice in effect: none without tools, auto when the request did not say. */
export function effectiveToolChoice(
  params: SamplingParams,
  tools: readonly ToolDefinition[] | undefined,
): ToolChoice {
  return tools === undefined || tools.length === 0 ? "none" : params.toolChoice ?? "auto";
}

/**
 * The grammar for a generation, or null when its output is free. Throws a `ValidationError`
 * naming the field of a schema we cannot enforce or a named tool that is not in `tools`.
 *
 * @example
 * ```ts
 * import { outputGrammar, HERMES_TOOL_CALLS } from "./output_constraint.ts";
 * const g = outputGrammar({ responseFormat: { type: "json_object" } }, undefined, HERMES_TOOL_CALLS);
 * ```
 */
export function outputGrammar(
  params: SamplingParams,
  tools: readonly ToolDefinition[] | undefined,
  format: ToolCallFormat,
): GrammarNode | null {
  const response = params.responseFormat ? responseGrammar(params.responseFormat) : null;
  const choice = effectiveToolChoice(params, tools);
  if (choice === "none") return response;
  let callable = tools!.map((tool, index) => ({ tool, index }));
  if (typeof choice === "object") {
    callable = callable.filter((c) => c.tool.name === choice.name);
    if (callable.length === 0) {
      throw new ValidationError(
        `tool_choice names the function '${choice.name}', which is not in tools`,
        { param: "tool_choice" },
      );
    }
  }
  const single = typeof choice === "object" || params.parallelToolCalls === false;
  const call = callObject(callable, format.argumentsKey);
  const calls = format.list
    ? listedCalls(call, format, single)
    : format.start === ""
    ? bareCalls(call, format.separator, single)
    : markedCalls(call, format, single);
  if (choice !== "auto") return calls.whole;
  if (response !== null) return alt(response, calls.whole);
  return alt(calls.freeText, calls.opened);
}

/** The grammar of tool calls, and what `auto` allows instead of and before them. */
interface CallGrammar {
  /** One or more calls, as the whole answer. */
  whole: GrammarNode;
  /** Text that opens no call. */
  freeText: GrammarNode;
  /** Text that opens a call, and the calls. */
  opened: GrammarNode;
}

function markedCalls(call: GrammarNode, format: ToolCallFormat, single: boolean): CallGrammar {
  const space = () => lit(format.separator, "");
  // After the start marker: the call, then the end marker.
  const body = seq(space(), call, space(), lit(format.end));
  const more = repeat(seq(space(), lit(format.start), body), lit(""), {
    min: 0,
    max: single ? 0 : Infinity,
  });
  return {
    whole: seq(lit(format.start), body, more),
    freeText: textNode(format.start, { untilTrigger: false }),
    opened: seq(textNode(format.start, { untilTrigger: true }), body, more),
  };
}

// After the marker, one JSON array of calls.
function listedCalls(call: GrammarNode, format: ToolCallFormat, single: boolean): CallGrammar {
  const separator = format.separator.trim();
  const list = seq(
    lit(" ", ""),
    lit("["),
    repeat(call, lit(separator, format.separator), { min: 1, max: single ? 1 : Infinity }),
    lit("]"),
  );
  return {
    whole: seq(lit(format.start), list),
    freeText: textNode(format.start, { untilTrigger: false }),
    opened: seq(textNode(format.start, { untilTrigger: true }), list),
  };
}

// Bare calls open the answer, so free text may not start like one (nor with the space before one).
function bareCalls(call: GrammarNode, separator: string, single: boolean): CallGrammar {
  const whole = repeat(call, lit(separator), { min: 1, max: single ? 1 : Infinity });
  return {
    whole,
    freeText: textNode("", { untilTrigger: false, notFirst: "{ \t\r\n" }),
    opened: whole,
  };
}

function responseGrammar(format: ResponseFormat): GrammarNode {
  if (format.type === "json_object") return objectNode([], anyJsonValue());
  return compileSchema(format.schema, "response_format.json_schema.schema");
}

// `{"name": "<one of the tools>", "<argumentsKey>": <that tool's parameters>}`.
function callObject(
  callable: { tool: ToolDefinition; index: number }[],
  argumentsKey: string,
): GrammarNode {
  return alt(...callable.map(({ tool, index }) => {
    const parameters = tool.parameters ?? { type: "object", additionalProperties: false };
    return objectNode([
      { key: "name", value: lit(JSON.stringify(tool.name)), required: true },
      {
        key: argumentsKey,
        value: compileSchema(parameters, `tools.${index}.function.parameters`),
        required: true,
      },
    ], null);
  }));
}

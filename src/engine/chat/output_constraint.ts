/**
 * The grammar a chat generation is held to: a `response_format` (any JSON object, or a JSON
 * Schema) or vLLM's guided decoding (a regex the whole output matches, or one of some strings),
 * tool calls in the model family's markup (`tool_choice` required or named: only calls;
 * auto: free text, and once the model opens a call its arguments follow the function's schema), or
 * both (auto with a response format: the formatted answer or calls).
 *
 * @module
 */

import { ValidationError } from "../../core/errors.ts";
import {
  alt,
  anyJsonValue,
  COMPACT,
  type GrammarNode,
  lit,
  objectNode,
  regexNode,
  repeat,
  seq,
  textNode,
} from "../constrained/grammar.ts";
import { compileSchema } from "../constrained/schema_compiler.ts";
import { compilePattern } from "../constrained/regex.ts";
import { chatTemplateText } from "./prompt.ts";
import { toolCallFormatFor, toolCallMarkup } from "../../protocol/tool_call_formats.ts";
import type {
  ResponseFormat,
  SamplingParams,
  ToolCallFormat,
  ToolChoice,
  ToolDefinition,
} from "../../core/inference_types.ts";

export {
  COMMAND_R_TOOL_CALLS,
  DEEPSEEK_V31_TOOL_CALLS,
  DEEPSEEK_V3_TOOL_CALLS,
  HERMES_TOOL_CALLS,
  LLAMA3_JSON_TOOL_CALLS,
  MISTRAL_TOOL_CALLS,
  MISTRAL_V11_TOOL_CALLS,
} from "../../protocol/tool_call_formats.ts";

/**
 * The tool-call format a chat template was written for (see `toolCallFormatFor`): with tools, a
 * list of named templates renders with its `tool_use` one (or `default`).
 */
export function toolCallFormatOf(chatTemplate: unknown): ToolCallFormat {
  return toolCallFormatFor(chatTemplateText(chatTemplate, true));
}

/** What {@link toolCallMarkerTokens} reads of a tokenizer (transformers.js' PreTrainedTokenizer). */
export interface SpecialTokenSource {
  all_special_ids: number[];
  decode(ids: number[], options?: { skip_special_tokens?: boolean }): string;
}

/**
 * The special tokens that are part of `format`'s markup (`[TOOL_CALLS]` and `[ARGS]` in Mistral's
 * tokenizers, DeepSeek's `<｜tool▁calls▁begin｜>` …), by id, with their text; end-of-sequence ids
 * excluded. A real model writes its calls with these tokens, so the grammar must be able to choose
 * them and the detokenizer must keep them for the tool-call parser (which takes them out of the
 * content), even when `skip_special_tokens` drops every other special token.
 *
 * @example
 * ```ts
 * import { MISTRAL_V11_TOOL_CALLS, toolCallMarkerTokens } from "./output_constraint.ts";
 * const texts = ["</s>", "[TOOL_CALLS]", "[ARGS]", "[INST]"];
 * const tokenizer = { all_special_ids: [0, 1, 2, 3], decode: (ids: number[]) => texts[ids[0]] };
 * toolCallMarkerTokens(tokenizer, MISTRAL_V11_TOOL_CALLS, new Set([0])); // 1 and 2
 * ```
 */
export function toolCallMarkerTokens(
  tokenizer: SpecialTokenSource,
  format: ToolCallFormat,
  eosIds: ReadonlySet<number>,
): Map<number, string> {
  const markup = toolCallMarkup(format);
  const markers = new Map<number, string>();
  for (const id of tokenizer.all_special_ids) {
    if (eosIds.has(id)) continue;
    const text = tokenizer.decode([id], { skip_special_tokens: false });
    if (text.trim() !== "" && markup.some((m) => m.includes(text))) markers.set(id, text);
  }
  return markers;
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
  const allowed = params.allowedTools;
  if (allowed !== undefined) {
    callable = callable.filter((c) => allowed.includes(c.tool.name));
    if (callable.length === 0) {
      throw new ValidationError("tool_choice allows no tool that is in tools", {
        param: "tool_choice",
      });
    }
  }
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
  const call = callObject(callable, format);
  const calls = format.nameFirst
    ? nameFirstCalls(callable, format, single)
    : format.list
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
    freeText: textNode(format.start, { untilTrigger: false, forbidden: format.markers }),
    opened: seq(
      textNode(format.start, { untilTrigger: true, forbidden: format.markers }),
      body,
      more,
    ),
  };
}

// After the marker (and its opening text), one JSON array of calls (and its closing text).
function listedCalls(call: GrammarNode, format: ToolCallFormat, single: boolean): CallGrammar {
  const separator = format.separator.trim();
  const list = seq(
    format.listOpen === undefined ? lit(" ", "") : lit(format.listOpen),
    lit("["),
    repeat(call, lit(separator, format.separator), { min: 1, max: single ? 1 : Infinity }),
    lit("]"),
    lit(format.listClose ?? ""),
  );
  return {
    whole: seq(lit(format.start), list),
    freeText: textNode(format.start, { untilTrigger: false, forbidden: format.markers }),
    opened: seq(textNode(format.start, { untilTrigger: true, forbidden: format.markers }), list),
  };
}

// Name-first calls: `start`, calls `callStart NAME nameEnd ARGS callEnd` joined by the
// separator, `end`. Free text runs up to `start`, or up to the first call's `callStart` without one.
function nameFirstCalls(
  callable: { tool: ToolDefinition; index: number }[],
  format: ToolCallFormat,
  single: boolean,
): CallGrammar {
  const { callStart, nameEnd, callEnd } = format.nameFirst!;
  const body = alt(...callable.map(({ tool, index }) =>
    seq(
      lit(tool.name + nameEnd),
      compileSchema(toolParameters(tool), `tools.${index}.function.parameters`),
      lit(callEnd),
    )
  ));
  const more = repeat(seq(lit(format.separator + callStart), body), lit(""), {
    min: 0,
    max: single ? 0 : Infinity,
  });
  const trigger = format.start || callStart;
  const afterTrigger = format.start === ""
    ? seq(body, more, lit(format.end))
    : seq(lit(callStart), body, more, lit(format.end));
  return {
    whole: seq(lit(trigger), afterTrigger),
    freeText: textNode(trigger, { untilTrigger: false, forbidden: format.markers }),
    opened: seq(textNode(trigger, { untilTrigger: true, forbidden: format.markers }), afterTrigger),
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
  switch (format.type) {
    case "json_object": {
      const spacing = format.compact ? COMPACT : undefined;
      return objectNode([], anyJsonValue(spacing), { spacing });
    }
    case "json_schema":
      return compileSchema(format.schema, format.param ?? "response_format.json_schema.schema", {
        compact: format.compact,
        closedObjects: format.closedObjects,
      });
    case "choice":
      return lit(...format.choices);
    case "regex":
      return regexGrammar(format.pattern, format.param ?? "response_format");
  }
}

// The whole output matches the pattern, as vLLM's guided_regex.
function regexGrammar(source: string, param: string): GrammarNode {
  const pattern = compilePattern(source, param, { whole: true });
  if (!pattern.live(pattern.start, 0, Infinity)) {
    throw new ValidationError(`the regex ${JSON.stringify(source)} matches no text`, {
      param,
      code: "invalid_value",
    });
  }
  return regexNode(pattern);
}

// `{"<nameKey>": "<one of the tools>", "<argumentsKey>": <that tool's parameters>}`.
function callObject(
  callable: { tool: ToolDefinition; index: number }[],
  format: ToolCallFormat,
): GrammarNode {
  return alt(...callable.map(({ tool, index }) =>
    objectNode([
      { key: format.nameKey ?? "name", value: lit(JSON.stringify(tool.name)), required: true },
      {
        key: format.argumentsKey,
        value: compileSchema(toolParameters(tool), `tools.${index}.function.parameters`),
        required: true,
      },
    ], null)
  ));
}

// A tool without parameters takes an empty object. A call's arguments are an object (clients and
// chat templates read them as one), even where the parameters also allow null or other types.
function toolParameters(tool: ToolDefinition): Record<string, unknown> | boolean {
  const parameters = tool.parameters;
  if (parameters === undefined) return { type: "object", additionalProperties: false };
  if (!Array.isArray(parameters.type) && parameters.nullable !== true) return parameters;
  const { nullable: _, ...rest } = parameters;
  return { ...rest, type: "object" };
}

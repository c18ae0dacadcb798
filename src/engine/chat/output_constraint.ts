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
import type {
  ResponseFormat,
  SamplingParams,
  ToolCallMarkers,
  ToolChoice,
  ToolDefinition,
} from "../types.ts";

/**
 * Hermes' tool-call markup, which Qwen 2.5/3, Hermes and many fine-tunes are trained on:
 * `<tool_call>\n{"name": "f", "arguments": {...}}\n</tool_call>`. It is also what a model whose
 * template has no tool support is taught (see prompt.ts) and held to.
 */
export const HERMES_TOOL_CALLS: ToolCallMarkers = { start: "<tool_call>", end: "</tool_call>" };

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
  markers: ToolCallMarkers,
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
  const call = callObject(callable);
  const newline = () => lit("\n", "");
  // After the start marker: the call, then the end marker.
  const body = seq(newline(), call, newline(), lit(markers.end));
  const more = repeat(seq(newline(), lit(markers.start), body), lit(""), {
    min: 0,
    max: single ? 0 : Infinity,
  });
  const calls = seq(lit(markers.start), body, more);
  if (choice !== "auto") return calls;
  if (response !== null) return alt(response, calls);
  return alt(
    textNode(markers.start, { untilTrigger: false }),
    seq(textNode(markers.start, { untilTrigger: true }), body, more),
  );
}

function responseGrammar(format: ResponseFormat): GrammarNode {
  if (format.type === "json_object") return objectNode([], anyJsonValue());
  return compileSchema(format.schema, "response_format.json_schema.schema");
}

// `{"name": "<one of the tools>", "arguments": <that tool's parameters>}`.
function callObject(callable: { tool: ToolDefinition; index: number }[]): GrammarNode {
  return alt(...callable.map(({ tool, index }) => {
    const parameters = tool.parameters ?? { type: "object", additionalProperties: false };
    return objectNode([
      { key: "name", value: lit(JSON.stringify(tool.name)), required: true },
      {
        key: "arguments",
        value: compileSchema(parameters, `tools.${index}.function.parameters`),
        required: true,
      },
    ], null);
  }));
}

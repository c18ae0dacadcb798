/**
 * The tool-call markup of each model family we support, which one a chat template was written for
 * (read from its text, as vLLM picks a tool parser per model), and how calls look in it.
 *
 * @module
 */
import type { ToolCall, ToolCallFormat } from "../core/inference_types.ts";

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
  markers: ["<tool_call>", "</tool_call>"],
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
  markers: [],
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
  markers: ["[TOOL_CALLS]"],
};

/**
 * Newer Mistral tool calls (v11+ tokenizer: Mistral Small 3.2, Magistral, Devstral):
 * `[TOOL_CALLS]f[ARGS]{...}`, several in a row, with no ids in the markup.
 */
export const MISTRAL_V11_TOOL_CALLS: ToolCallFormat = {
  start: "",
  end: "",
  argumentsKey: "arguments",
  separator: "",
  nameFirst: { callStart: "[TOOL_CALLS]", nameEnd: "[ARGS]", callEnd: "" },
  markers: ["[TOOL_CALLS]", "[ARGS]"],
};

/**
 * Command-R and Command-R+ (their `tool_use` template): `Action:` and a fenced JSON list of
 * `{"tool_name": "f", "parameters": {...}}`, the answer ending after the closing fence.
 */
export const COMMAND_R_TOOL_CALLS: ToolCallFormat = {
  start: "Action:",
  end: "",
  nameKey: "tool_name",
  argumentsKey: "parameters",
  separator: ",\n",
  list: true,
  listOpen: "\n```json\n",
  listClose: "```",
  markers: ["Action:"],
};

/** DeepSeek's tool-call tokens, V3 to V3.2. */
const DEEPSEEK_MARKERS = [
  "<｜tool▁calls▁begin｜>",
  "<｜tool▁calls▁end｜>",
  "<｜tool▁call▁begin｜>",
  "<｜tool▁sep｜>",
  "<｜tool▁call▁end｜>",
];

/**
 * DeepSeek V3 and R1 (and R1's distills, which keep its template): each call is
 * `<｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{...}\n```<｜tool▁call▁end｜>`, joined by
 * newlines between `<｜tool▁calls▁begin｜>` and `<｜tool▁calls▁end｜>`.
 */
export const DEEPSEEK_V3_TOOL_CALLS: ToolCallFormat = {
  start: "<｜tool▁calls▁begin｜>",
  end: "<｜tool▁calls▁end｜>",
  argumentsKey: "arguments",
  separator: "\n",
  nameFirst: {
    callStart: "<｜tool▁call▁begin｜>function<｜tool▁sep｜>",
    nameEnd: "\n```json\n",
    callEnd: "\n```<｜tool▁call▁end｜>",
  },
  markers: DEEPSEEK_MARKERS,
};

/**
 * DeepSeek V3.1 (and V3.2's non-DSML templates): name first, the arguments' JSON right after
 * `<｜tool▁sep｜>` with no type and no fence, calls chained with no separator:
 * `<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>f<｜tool▁sep｜>{...}<｜tool▁call▁end｜><｜tool▁calls▁end｜>`.
 */
export const DEEPSEEK_V31_TOOL_CALLS: ToolCallFormat = {
  start: "<｜tool▁calls▁begin｜>",
  end: "<｜tool▁calls▁end｜>",
  argumentsKey: "arguments",
  separator: "",
  nameFirst: {
    callStart: "<｜tool▁call▁begin｜>",
    nameEnd: "<｜tool▁sep｜>",
    callEnd: "<｜tool▁call▁end｜>",
  },
  markers: DEEPSEEK_MARKERS,
};

/**
 * The tool-call format a chat template's text was written for: the markup it renders earlier
 * calls in, or asks for. Llama 3's JSON when it renders or asks for calls with `"parameters"` and
 * knows no `<tool_call>` tag; otherwise Hermes (also what a template without tool support is
 * taught).
 *
 * @example
 * ```ts
 * import { MISTRAL_V11_TOOL_CALLS, toolCallFormatFor } from "./tool_call_formats.ts";
 * toolCallFormatFor("{{ '[TOOL_CALLS]' + name + '[ARGS]' + arguments }}") === MISTRAL_V11_TOOL_CALLS;
 * ```
 */
export function toolCallFormatFor(template: string): ToolCallFormat {
  if (template.includes("[TOOL_CALLS]")) {
    return template.includes("[ARGS]") ? MISTRAL_V11_TOOL_CALLS : MISTRAL_TOOL_CALLS;
  }
  if (template.includes("<｜tool▁calls▁begin｜>")) {
    // V3 and R1 fence the arguments as JSON after the call's type; V3.1 writes them bare.
    if (template.includes("```json")) return DEEPSEEK_V3_TOOL_CALLS;
    if (template.includes("<｜tool▁sep｜>")) return DEEPSEEK_V31_TOOL_CALLS;
  }
  if (template.includes("Action:") && template.includes('"tool_name"')) {
    return COMMAND_R_TOOL_CALLS;
  }
  const llama = template.includes("tools") && template.includes('"parameters"') &&
    !template.includes("<tool_call>");
  return llama ? LLAMA3_JSON_TOOL_CALLS : HERMES_TOOL_CALLS;
}

/**
 * Every piece of markup `format` writes around calls (not the JSON). Tokenizers often make these
 * special tokens (Mistral's `[TOOL_CALLS]`, DeepSeek's `<｜tool▁sep｜>`): the engine keeps such
 * tokens in the text the tool-call parser reads, and lets the grammar choose them.
 */
export function toolCallMarkup(format: ToolCallFormat): string[] {
  const { nameFirst } = format;
  return [
    format.start,
    format.end,
    format.listOpen ?? "",
    format.listClose ?? "",
    ...(nameFirst ? [nameFirst.callStart, nameFirst.nameEnd, nameFirst.callEnd] : []),
  ].filter((markup) => markup.trim() !== "");
}

/**
 * Calls written in `format`'s markup, as a model of that family writes them (for prompts that
 * teach the format or show earlier calls as text). `arguments` is the arguments' JSON text.
 */
export function writeToolCalls(
  format: ToolCallFormat,
  calls: readonly Pick<ToolCall, "name" | "arguments">[],
): string {
  if (format.nameFirst) {
    const { callStart, nameEnd, callEnd } = format.nameFirst;
    const each = calls.map((c) => callStart + c.name + nameEnd + c.arguments + callEnd);
    return format.start + each.join(format.separator) + format.end;
  }
  const objects = calls.map((c) =>
    `{"${format.nameKey ?? "name"}": ${JSON.stringify(c.name)}, ` +
    `"${format.argumentsKey}": ${c.arguments}}`
  );
  if (format.list) {
    return `${format.start}${format.listOpen ?? " "}[${objects.join(format.separator)}]` +
      (format.listClose ?? "");
  }
  if (format.start === "") return objects.join(format.separator);
  return objects.map((o) => `${format.start}\n${o}\n${format.end}`).join("\n");
}

/**
 * Reading a call written as one JSON object, `{"name": "f", "arguments": {...}}`: its header,
 * and its start when cut short. Shared by the marked and the bare parsers.
 *
 * @module
 */
import type { ToolCall, ToolCallFormat } from "../core/inference_types.ts";
import { JsonEnd } from "./_tool_call_text.ts";

/**
 * A call cut short before its arguments began, as far as its name got; null when the text is
 * not the unfinished start of a call (`{"na`, `{"name": "f", "argu`).
 */
export function partialCall(block: string, nameKey: string, newId: () => string): ToolCall | null {
  const text = block.trimStart().replace(/^\{\s*/, "{");
  const opening = `{"${nameKey}"`;
  if (!text.startsWith(opening) && !opening.startsWith(text)) return null;
  const value = new JsonEnd();
  value.feed(text);
  if (value.ended) return null; // a whole JSON value that is no call
  // The name as far as it got (`{"name": "get_wea`).
  const partialName = new RegExp(`^\\{\\s*"${nameKey}"\\s*:\\s*"((?:[^"\\\\]|\\\\.)*)`);
  let name = partialName.exec(text)?.[1] ?? "";
  try {
    name = JSON.parse(`"${name}"`);
  } catch {
    // an escape cut in half: the name as written
  }
  return { id: newId(), name, arguments: "" };
}

/** `{"<nameKey>": "<name>", "<argumentsKey>": ` at the start of a call, as the grammar writes it. */
export function headerPattern(format: ToolCallFormat): RegExp {
  return new RegExp(
    `^\\s*\\{\\s*"${format.nameKey ?? "name"}"\\s*:\\s*("(?:[^"\\\\]|\\\\.)*")\\s*,\\s*` +
      `"${format.argumentsKey}"\\s*:\\s*`,
  );
}

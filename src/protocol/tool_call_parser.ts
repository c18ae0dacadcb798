/**
 * Turns a model's text into content and tool calls as it streams, for a {@link ToolCallFormat}:
 * marked calls (Hermes/Qwen: `<tool_call>\n{"name": "f", "arguments": {...}}\n</tool_call>`) or
 * bare ones (Llama 3: `{"name": "f", "parameters": {...}}; {...}` as the whole answer), a list
 * after a marker (Mistral v3 `[TOOL_CALLS] [...]`, Command-R `Action: ```json [...]````), or
 * name-first calls (DeepSeek, Mistral v11: see name_first_tool_call_parser.ts). Each call
 * comes out the way OpenAI streams it: first its index, id and name with empty arguments, then the
 * arguments' text in fragments. Pure: no engine, no I/O.
 *
 * Whitespace around calls is dropped; a block that is not a call (no name, or not JSON) is kept as
 * content, markers included. A call's end marker counts only after its JSON object has ended (an
 * argument's string may contain it), and a call cut short (by `max_tokens`) is still a call, with
 * the name and arguments it got as far as: never text.
 *
 * @module
 */
import type { ToolCall, ToolCallFormat } from "../core/inference_types.ts";
import {
  heldBack,
  JsonEnd,
  newToolCallId,
  type ParsedText,
  partialSuffix,
  type ToolCallStreamParser,
} from "./_tool_call_text.ts";
import { headerPattern, partialCall } from "./_json_tool_call.ts";
import { BareToolCallParser, ListToolCallParser } from "./_bare_tool_call_parser.ts";
import { NameFirstToolCallParser } from "./name_first_tool_call_parser.ts";

export type { ParsedText, ToolCallDelta, ToolCallStreamParser } from "./_tool_call_text.ts";
export { newToolCallId } from "./_tool_call_text.ts";
export { newShortToolCallId } from "./_bare_tool_call_parser.ts";

/**
 * The parser for `format`: name-first calls, a list of calls after a marker, bare JSON calls
 * when it has no markers, marked calls otherwise.
 */
export function toolCallParser(
  format: ToolCallFormat,
  options: { newId?: () => string } = {},
): ToolCallStreamParser {
  if (format.nameFirst) return new NameFirstToolCallParser(format, options);
  if (format.list) return new ListToolCallParser(format, options);
  return format.start === ""
    ? new BareToolCallParser(format, options)
    : new ToolCallParser(format, options);
}

/**
 * Streaming parser; `push` each piece of text and `flush` at the end. Concatenating what it returns
 * gives the same content and calls whatever the pieces were.
 *
 * @example
 * ```ts
 * import { ToolCallParser } from "./tool_call_parser.ts";
 * const p = new ToolCallParser({
 *   start: "<tool_call>",
 *   end: "</tool_call>",
 *   argumentsKey: "arguments",
 *   separator: "\n",
 *   markers: ["<tool_call>", "</tool_call>"],
 * });
 * p.push('<tool_call>\n{"name": "f", "arguments": {"a"'); // calls: f (id, name), then '{"a"'
 * p.push(": 1}}\n</tool_call>"); // calls: ': 1}'
 * p.flush();
 * p.calls; // [{ id: "call_…", name: "f", arguments: '{"a": 1}' }]
 * ```
 */
export class ToolCallParser implements ToolCallStreamParser {
  readonly #markers: ToolCallFormat;
  readonly #header: RegExp;
  readonly #newId: () => string;
  /** Every call so far, its arguments as received. */
  readonly calls: ToolCall[] = [];
  #inCall = false;
  /** Text not yet given out: a possible marker start, trailing whitespace, a call's unread part. */
  #held = "";
  /** Inside a call: its text so far (for the fallback when it is not in the expected shape). */
  #block = "";
  #args: JsonEnd | null = null;
  /** The call's JSON object, read to its end before the end marker may count. */
  #object = new JsonEnd();
  /** Characters of `#held` the object reader has seen. */
  #scanned = 0;
  /** Right after a call: whitespace is dropped until other text comes. */
  #afterCall = false;

  constructor(markers: ToolCallFormat, options: { newId?: () => string } = {}) {
    this.#markers = markers;
    this.#header = headerPattern(markers);
    this.#newId = options.newId ?? newToolCallId;
  }

  /** Feeds the next piece of text. */
  push(text: string): ParsedText {
    const out: ParsedText = { content: "", calls: [] };
    this.#held += text;
    for (;;) {
      if (!this.#inCall) {
        if (this.#afterCall) {
          this.#held = this.#held.trimStart();
          if (this.#held === "") return out;
          this.#afterCall = false;
        }
        const at = this.#held.indexOf(this.#markers.start);
        if (at < 0) {
          // Keep back what may start a marker, and trailing whitespace (dropped before a call).
          const keep = heldBack(this.#held, this.#markers.start);
          out.content += this.#held.slice(0, this.#held.length - keep);
          this.#held = this.#held.slice(this.#held.length - keep);
          return out;
        }
        out.content += this.#held.slice(0, at).trimEnd();
        this.#held = this.#held.slice(at + this.#markers.start.length);
        this.#inCall = true;
        this.#block = "";
        this.#args = null;
        this.#object = new JsonEnd();
        this.#scanned = 0;
      }
      if (!this.#object.ended) {
        // Text that does not open an object is no JSON call: its marker counts at once.
        const first = this.#held.slice(this.#scanned).trimStart()[0];
        if (!this.#object.started && first !== undefined && first !== "{") this.#object.end();
        else this.#scanned += this.#object.feed(this.#held.slice(this.#scanned));
      }
      const end = this.#object.ended ? this.#held.indexOf(this.#markers.end, this.#scanned) : -1;
      const available = end >= 0
        ? this.#held.slice(0, end)
        : this.#object.ended
        ? this.#held.slice(0, this.#held.length - partialSuffix(this.#held, this.#markers.end))
        : this.#held;
      this.#readCall(available, out);
      this.#held = this.#held.slice(available.length);
      this.#scanned = Math.max(0, this.#scanned - available.length);
      if (end < 0) return out;
      this.#closeCall(out);
      this.#held = this.#held.slice(this.#markers.end.length);
      this.#inCall = false;
      this.#afterCall = true;
    }
  }

  /** Ends the text: what was held back, and a call cut short as far as it got. */
  flush(): ParsedText {
    const out: ParsedText = { content: "", calls: [] };
    if (this.#inCall) {
      this.#readCall(this.#held, out);
      if (this.#args === null) this.#cutShort(out);
    } else {
      // Whitespace around calls is dropped; a plain answer is kept as it is.
      out.content += this.calls.length === 0 ? this.#held : this.#held.trim();
    }
    this.#held = "";
    this.#inCall = false;
    return out;
  }

  // Reads more of a call's text: its header once whole, then its arguments up to their end.
  #readCall(text: string, out: ParsedText): void {
    if (text === "") return;
    this.#block += text;
    if (this.#args === null) {
      const header = this.#header.exec(this.#block);
      if (header === null) return;
      const index = this.calls.length;
      const call = { id: this.#newId(), name: JSON.parse(header[1]) as string, arguments: "" };
      this.calls.push(call);
      out.calls.push({ index, id: call.id, name: call.name, arguments: "" });
      this.#args = new JsonEnd();
      text = this.#block.slice(header[0].length);
    }
    if (this.#args.ended) return;
    const call = this.calls[this.calls.length - 1];
    // Whitespace before the arguments is the wrapper's, not theirs.
    if (call.arguments === "") text = text.trimStart();
    const used = this.#args.feed(text);
    const fragment = text.slice(0, used);
    if (fragment === "") return;
    call.arguments += fragment;
    out.calls.push({ index: this.calls.length - 1, arguments: fragment });
  }

  // A call whose arguments never began: a call with the name so far, or text if not even `{`.
  #cutShort(out: ParsedText): void {
    const call = partialCall(this.#block, this.#markers.nameKey ?? "name", this.#newId);
    if (call === null) {
      out.content += this.#markers.start + this.#block;
      return;
    }
    out.calls.push({ index: this.calls.length, id: call.id, name: call.name, arguments: "" });
    this.calls.push(call);
  }

  // At the end marker: a block that never showed a header is parsed whole, or kept as text.
  #closeCall(out: ParsedText): void {
    if (this.#args !== null) return;
    try {
      const parsed = JSON.parse(this.#block);
      const value = parsed?.[this.#markers.argumentsKey];
      const name = parsed?.[this.#markers.nameKey ?? "name"];
      if (typeof name === "string" && value !== undefined) {
        const args = typeof value === "string" ? value : JSON.stringify(value);
        const call = { id: this.#newId(), name, arguments: args };
        out.calls.push({ index: this.calls.length, id: call.id, name: call.name, arguments: "" });
        out.calls.push({ index: this.calls.length, arguments: args });
        this.calls.push(call);
        return;
      }
    } catch {
      // not JSON: kept as content below
    }
    out.content += this.#markers.start + this.#block + this.#markers.end;
  }
}

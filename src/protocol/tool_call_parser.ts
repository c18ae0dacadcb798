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
import { NameFirstToolCallParser } from "./name_first_tool_call_parser.ts";

export type { ParsedText, ToolCallDelta, ToolCallStreamParser } from "./_tool_call_text.ts";
export { newToolCallId } from "./_tool_call_text.ts";

/**
 * A call cut short before its arguments began, as far as its name got; null when the text is
 * not the unfinished start of a call (`{"na`, `{"name": "f", "argu`).
 */
function partialCall(block: string, nameKey: string, newId: () => string): ToolCall | null {
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

// `{"<nameKey>": "<name>", "<argumentsKey>": ` at the start of a call, as the grammar writes it.
function headerPattern(format: ToolCallFormat): RegExp {
  return new RegExp(
    `^\\s*\\{\\s*"${format.nameKey ?? "name"}"\\s*:\\s*("(?:[^"\\\\]|\\\\.)*")\\s*,\\s*` +
      `"${format.argumentsKey}"\\s*:\\s*`,
  );
}

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

const ALPHANUMERIC = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

/** A new call id of 9 letters and digits: Mistral's templates refuse any other in the history. */
export function newShortToolCallId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(9));
  return Array.from(bytes, (b) => ALPHANUMERIC[b % ALPHANUMERIC.length]).join("");
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

/**
 * Bare calls: an answer whose first non-space character is `{` is calls, joined by the format's
 * separator; any other answer is content. (The grammar keeps free text from starting with `{`.)
 */
class BareToolCallParser implements ToolCallStreamParser {
  readonly calls: ToolCall[] = [];
  readonly #header: RegExp;
  readonly #newId: () => string;
  readonly #nameKey: string;
  /** One JSON array of calls, joined by commas (else calls joined by `;`). */
  readonly #list: boolean;
  /** What closes the list after its `]` (Command-R's fence), dropped from the content. */
  readonly #close: string;
  #mode: "undecided" | "content" | "calls" | "closing" = "undecided";
  #afterClose = false;
  /** Text not yet given out: leading space, or the unread part of the calls. */
  #held = "";
  #args: JsonEnd | null = null;

  constructor(format: ToolCallFormat, options: { newId?: () => string }) {
    this.#header = headerPattern(format);
    this.#newId = options.newId ?? newToolCallId;
    this.#nameKey = format.nameKey ?? "name";
    this.#list = format.list === true;
    this.#close = format.listClose?.trim() ?? "";
  }

  push(text: string): ParsedText {
    const out: ParsedText = { content: "", calls: [] };
    if (this.#mode === "content") {
      // Right after a list's closing text, whitespace is dropped until other text comes.
      out.content = this.#afterClose ? text.trimStart() : text;
      if (out.content !== "") this.#afterClose = false;
      return out;
    }
    this.#held += text;
    if (this.#mode === "closing") {
      this.#closing(out);
      return out;
    }
    if (this.#mode === "undecided") {
      if (this.#list) this.#held = this.#held.replace(/^\s*\[/, "");
      const first = this.#held.trimStart()[0];
      if (first === undefined) return out;
      if (first !== "{") {
        this.#mode = "content";
        out.content = this.#held;
        this.#held = "";
        return out;
      }
      this.#mode = "calls";
      this.#held = this.#held.trimStart();
    }
    this.#read(out);
    return out;
  }

  flush(): ParsedText {
    const out: ParsedText = { content: "", calls: [] };
    // Leading space alone is content; a call cut short before its arguments is still a call.
    if (this.#mode === "undecided") out.content = this.#held;
    else if (this.#mode === "closing" && !this.#close.startsWith(this.#held.trim())) {
      out.content = this.#held.trimStart();
    } else if (this.#mode === "calls" && this.#args === null && this.#held.trim() !== "") {
      const call = partialCall(this.#held, this.#nameKey, this.#newId);
      if (call === null) out.content = this.#held;
      else {
        out.calls.push({ index: this.calls.length, id: call.id, name: call.name, arguments: "" });
        this.calls.push(call);
      }
    }
    this.#held = "";
    return out;
  }

  // After the list's `]`: its closing text (whitespace around it tolerated), then content.
  #closing(out: ParsedText): void {
    const text = this.#held.trimStart();
    if (this.#close.startsWith(text)) return; // not there yet
    this.#held = "";
    this.#mode = "content";
    this.#afterClose = text.startsWith(this.#close);
    out.content += this.#afterClose ? text.slice(this.#close.length).trimStart() : text;
    if (out.content !== "") this.#afterClose = false;
  }

  // Reads calls from the held text: a header, the arguments, the closing brace, a separator.
  #read(out: ParsedText): void {
    for (;;) {
      if (this.#args === null) {
        const header = this.#header.exec(this.#held);
        if (header === null) return;
        const call = { id: this.#newId(), name: JSON.parse(header[1]) as string, arguments: "" };
        this.calls.push(call);
        out.calls.push({
          index: this.calls.length - 1,
          id: call.id,
          name: call.name,
          arguments: "",
        });
        this.#held = this.#held.slice(header[0].length);
        this.#args = new JsonEnd();
      }
      if (!this.#args.ended) {
        const call = this.calls[this.calls.length - 1];
        // Whitespace before the arguments is the wrapper's, not theirs.
        if (call.arguments === "") this.#held = this.#held.trimStart();
        const used = this.#args.feed(this.#held);
        const fragment = this.#held.slice(0, used);
        this.#held = this.#held.slice(used);
        if (fragment !== "") {
          call.arguments += fragment;
          out.calls.push({ index: this.calls.length - 1, arguments: fragment });
        }
        if (!this.#args.ended) return;
      }
      // After the arguments: `}`, then a separator and the next call, or the end.
      const next = (this.#list ? /^\s*\}\s*,\s*(?=\{)/ : /^\s*\}\s*;?\s*(?=\{)/).exec(this.#held);
      if (next === null) {
        if ((this.#list ? /^\s*(\}\s*,?\s*)?$/ : /^\s*(\}\s*;?\s*)?$/).test(this.#held)) return;
        // Something other than another call (a list's `]`): the rest of the answer is content.
        const list = this.#list ? /^\s*\}\s*\]/.exec(this.#held) : null;
        if (list !== null && this.#close !== "") {
          this.#held = this.#held.slice(list[0].length);
          this.#mode = "closing";
          this.#closing(out);
          return;
        }
        out.content += this.#held.replace(this.#list ? /^\s*\}\s*\]?/ : /^\s*\}/, "");
        this.#held = "";
        this.#mode = "content";
        return;
      }
      this.#held = this.#held.slice(next[0].length);
      this.#args = null;
    }
  }
}

/**
 * Listed calls (Mistral): text, then the marker and one JSON array of calls, read as bare calls
 * joined by commas; what follows the array is content.
 */
class ListToolCallParser implements ToolCallStreamParser {
  readonly #marker: string;
  /** What may come between the marker and `[` besides whitespace (Command-R's fence). */
  readonly #open: string;
  readonly #list: BareToolCallParser;
  #held = "";
  #state: "text" | "opening" | "list" = "text";

  constructor(format: ToolCallFormat, options: { newId?: () => string }) {
    this.#marker = format.start;
    this.#open = format.listOpen?.trim() ?? "";
    this.#list = new BareToolCallParser(format, { newId: options.newId ?? newShortToolCallId });
  }

  get calls(): ToolCall[] {
    return this.#list.calls;
  }

  push(text: string): ParsedText {
    if (this.#state === "list") return this.#list.push(text);
    this.#held += text;
    let before = "";
    if (this.#state === "text") {
      const at = this.#held.indexOf(this.#marker);
      if (at < 0) {
        // Keep back what may start the marker, and trailing whitespace (dropped before the calls).
        const keep = heldBack(this.#held, this.#marker);
        const content = this.#held.slice(0, this.#held.length - keep);
        this.#held = this.#held.slice(this.#held.length - keep);
        return { content, calls: [] };
      }
      before = this.#held.slice(0, at).trimEnd();
      this.#held = this.#held.slice(at + this.#marker.length);
      this.#state = "opening";
    }
    // Between the marker and `[`: whitespace, and the opening text if the format has one.
    let rest = this.#held.trimStart();
    if (this.#open !== "" && this.#open.startsWith(rest)) return { content: before, calls: [] };
    if (this.#open !== "" && rest.startsWith(this.#open)) {
      const after = rest.slice(this.#open.length).trimStart();
      if (after === "") return { content: before, calls: [] };
      rest = after;
    }
    this.#held = "";
    this.#state = "list";
    const parsed = this.#list.push(rest);
    return { content: before + parsed.content, calls: parsed.calls };
  }

  flush(): ParsedText {
    if (this.#state === "list") return this.#list.flush();
    if (this.#state === "opening") {
      // Cut after the marker: the list's parser gives a call cut before its name.
      this.#state = "list";
      this.#list.push(" {");
      this.#held = "";
      return this.#list.flush();
    }
    const content = this.#held;
    this.#held = "";
    return { content, calls: [] };
  }
}

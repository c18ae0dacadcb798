/**
 * Calls written as bare JSON objects: the whole answer (Llama 3), or one JSON list of them after a
 * marker (Mistral v3, Command-R): the parsers `toolCallParser` (tool_call_parser.ts) gives for
 * those formats.
 *
 * @module
 */
import type { ToolCall, ToolCallFormat } from "../core/inference_types.ts";
import {
  heldBack,
  JsonEnd,
  newToolCallId,
  type ParsedText,
  type ToolCallStreamParser,
} from "./_tool_call_text.ts";
import { headerPattern, partialCall } from "./_json_tool_call.ts";

const ALPHANUMERIC = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

/** A new call id of 9 letters and digits: Mistral's templates refuse any other in the history. */
export function newShortToolCallId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(9));
  return Array.from(bytes, (b) => ALPHANUMERIC[b % ALPHANUMERIC.length]).join("");
}

/**
 * Bare calls: an answer whose first non-space character is `{` is calls, joined by the format's
 * separator; any other answer is content. (The grammar keeps free text from starting with `{`.)
 */
export class BareToolCallParser implements ToolCallStreamParser {
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
export class ListToolCallParser implements ToolCallStreamParser {
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

/**
 * Streams tool calls written name first, then the arguments' JSON, between markers (see
 * `ToolCallFormat.nameFirst`): DeepSeek V3/R1's
 * `<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{...}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>`
 * and Mistral v11's `[TOOL_CALLS]f[ARGS]{...}[TOOL_CALLS]g[ARGS]{...}`. Text before the calls is
 * content, and so is text after them; a call cut short is a call with what it got.
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

type State = "text" | "open" | "name" | "args" | "close" | "between" | "after";

/**
 * Streaming parser of name-first calls; `push` each piece of text and `flush` at the end.
 *
 * @example
 * ```ts
 * import { NameFirstToolCallParser } from "./name_first_tool_call_parser.ts";
 * const p = new NameFirstToolCallParser({
 *   start: "",
 *   end: "",
 *   argumentsKey: "arguments",
 *   separator: "",
 *   nameFirst: { callStart: "[TOOL_CALLS]", nameEnd: "[ARGS]", callEnd: "" },
 *   markers: ["[TOOL_CALLS]", "[ARGS]"],
 * });
 * p.push('[TOOL_CALLS]f[ARGS]{"a": 1}');
 * p.flush();
 * p.calls; // [{ id: "call_…", name: "f", arguments: '{"a": 1}' }]
 * ```
 */
export class NameFirstToolCallParser implements ToolCallStreamParser {
  readonly calls: ToolCall[] = [];
  readonly #format: ToolCallFormat;
  readonly #callStart: string;
  readonly #nameEnd: string;
  /** The call's end and the calls' end, less their leading whitespace (matched after any). */
  readonly #callEnd: string;
  readonly #end: string;
  /** What opens a call after another: the separator (less whitespace) and the call's start. */
  readonly #next: string;
  readonly #newId: () => string;
  #state: State = "text";
  #held = "";
  #args = new JsonEnd();
  /** Content came after the calls (whitespace is no longer dropped before it). */
  #contentAfter = false;

  constructor(format: ToolCallFormat, options: { newId?: () => string } = {}) {
    if (format.nameFirst === undefined) throw new TypeError("the format is not name first");
    this.#format = format;
    ({ callStart: this.#callStart, nameEnd: this.#nameEnd } = format.nameFirst);
    this.#callEnd = format.nameFirst.callEnd.trimStart();
    this.#end = format.end.trimStart();
    this.#next = format.separator.trim() + this.#callStart;
    this.#newId = options.newId ?? newToolCallId;
  }

  /** Feeds the next piece of text. */
  push(text: string): ParsedText {
    const out: ParsedText = { content: "", calls: [] };
    this.#held += text;
    while (this.#step(out));
    return out;
  }

  /** Ends the text: what was held back, and a call cut short as far as it got. */
  flush(): ParsedText {
    const out: ParsedText = { content: "", calls: [] };
    if (this.#state === "text") out.content = this.#held;
    else if (this.#state === "open" && this.calls.length === 0) this.#open("", out);
    else if (this.#state === "name") {
      const name = this.#held.slice(
        0,
        this.#held.length - partialSuffix(this.#held, this.#nameEnd),
      );
      this.#open(name.trim(), out);
    } else if (this.#state === "after") out.content = this.#held.trimEnd();
    this.#held = "";
    return out;
  }

  // One step of reading; false when more text is needed.
  #step(out: ParsedText): boolean {
    const held = this.#held;
    switch (this.#state) {
      case "text": {
        const trigger = this.#format.start || this.#callStart;
        const at = held.indexOf(trigger);
        if (at < 0) {
          const keep = heldBack(held, trigger);
          out.content += held.slice(0, held.length - keep);
          this.#held = held.slice(held.length - keep);
          return false;
        }
        out.content += held.slice(0, at).trimEnd();
        this.#held = held.slice(at + this.#format.start.length);
        this.#state = "open";
        return true;
      }
      case "open":
        return this.#expect(this.#callStart, "name", () => {
          // The block opened with something else: no calls, all content.
          out.content += this.#format.start;
          this.#state = "after";
        });
      case "name": {
        const at = held.indexOf(this.#nameEnd);
        if (at < 0) return false;
        this.#open(held.slice(0, at).trim(), out);
        this.#held = held.slice(at + this.#nameEnd.length);
        this.#args = new JsonEnd();
        this.#state = "args";
        return true;
      }
      case "args": {
        const call = this.calls[this.calls.length - 1];
        // Whitespace before the arguments is the markup's, not theirs.
        const text = call.arguments === "" ? held.trimStart() : held;
        const used = this.#args.feed(text);
        const fragment = text.slice(0, used);
        this.#held = text.slice(used);
        if (fragment !== "") {
          call.arguments += fragment;
          out.calls.push({ index: this.calls.length - 1, arguments: fragment });
        }
        if (!this.#args.ended) return false;
        this.#state = "close";
        return true;
      }
      case "close":
        return this.#expect(this.#callEnd, "between", () => this.#state = "after");
      case "between": {
        const text = held.trimStart();
        if (text.startsWith(this.#next)) {
          this.#held = text.slice(this.#next.length);
          this.#state = "name";
          return true;
        }
        if (this.#end !== "" && text.startsWith(this.#end)) {
          this.#held = text.slice(this.#end.length);
          this.#state = "after";
          return true;
        }
        if (this.#next.startsWith(text) || this.#end.startsWith(text)) return false;
        this.#state = "after";
        return true;
      }
      case "after": {
        // After the calls: content, less the whitespace around it.
        const text = this.#contentAfter || this.calls.length === 0 ? held : held.trimStart();
        if (text === "") return false;
        this.#contentAfter = true;
        const keep = this.calls.length > 0 ? text.length - text.trimEnd().length : 0;
        out.content += text.slice(0, text.length - keep);
        this.#held = text.slice(text.length - keep);
        return false;
      }
    }
  }

  // Expects `marker` after optional whitespace: goes on to `next`, waits, or gives up.
  #expect(marker: string, next: State, otherwise: () => void): boolean {
    const text = this.#held.trimStart();
    if (text.startsWith(marker)) {
      this.#held = text.slice(marker.length);
      this.#state = next;
      return true;
    }
    if (marker.startsWith(text)) return false;
    otherwise();
    return true;
  }

  // A new call with its name and no arguments yet.
  #open(name: string, out: ParsedText): void {
    const call = { id: this.#newId(), name, arguments: "" };
    out.calls.push({ index: this.calls.length, id: call.id, name, arguments: "" });
    this.calls.push(call);
  }
}

/**
 * What the tool-call parsers share: their output types, call ids, and the readers of streamed text
 * (where a JSON value ends, a marker cut at the end of a piece).
 *
 * @module
 */
import type { ToolCall } from "../core/inference_types.ts";

/** A piece of one tool call, as `delta.tool_calls[]` carries it. */
export interface ToolCallDelta {
  index: number;
  /** With `name`, only in a call's first delta. */
  id?: string;
  name?: string;
  /** A fragment of the arguments' JSON text ("" in the first delta). */
  arguments: string;
}

/** What a piece of text turned into. */
export interface ParsedText {
  content: string;
  calls: ToolCallDelta[];
}

/** What every parser offers: text in, content and call pieces out. */
export interface ToolCallStreamParser {
  /** Every call so far, its arguments as received. */
  readonly calls: ToolCall[];
  /** Feeds the next piece of text. */
  push(text: string): ParsedText;
  /** Ends the text. */
  flush(): ParsedText;
}

/** A new call id, `call_` and 24 hex digits. */
export function newToolCallId(): string {
  return `call_${crypto.randomUUID().replaceAll("-", "").slice(0, 24)}`;
}

/** Finds where a JSON value ends in streamed text (strings, nesting and escapes considered). */
export class JsonEnd {
  #depth = 0;
  #inString = false;
  #escaped = false;
  #started = false;
  /** True once the value's first character was read. */
  get started(): boolean {
    return this.#started;
  }
  /** True once the value has ended. */
  ended = false;

  /** Marks the value as ended. */
  end(): void {
    this.ended = true;
  }

  /** How many characters of `text` belong to the value (less than all once it has ended). */
  feed(text: string): number {
    if (this.ended) return 0;
    for (let i = 0; i < text.length; i++) {
      const c = text[i];
      if (this.#inString) {
        if (this.#escaped) this.#escaped = false;
        else if (c === "\\") this.#escaped = true;
        else if (c === '"') {
          this.#inString = false;
          if (this.#depth === 0) return this.#endAt(i + 1);
        }
        continue;
      }
      if (!this.#started) {
        if (/\s/.test(c)) continue;
        this.#started = true;
      } else if (this.#depth === 0 && /[\s,}\]]/.test(c)) {
        return this.#endAt(i); // the end of a number, true, false or null
      }
      if (c === '"') this.#inString = true;
      else if (c === "{" || c === "[") this.#depth++;
      else if (c === "}" || c === "]") {
        this.#depth--;
        if (this.#depth === 0) return this.#endAt(i + 1);
      }
    }
    return text.length;
  }

  #endAt(used: number): number {
    this.ended = true;
    return used;
  }
}

/** Length of the longest suffix of `text` that is a proper prefix of `marker`. */
export function partialSuffix(text: string, marker: string): number {
  for (let len = Math.min(marker.length - 1, text.length); len > 0; len--) {
    if (text.endsWith(marker.slice(0, len))) return len;
  }
  return 0;
}

/** Length of the whitespace that ends `text`. */
export function trailingSpace(text: string): number {
  return text.length - text.trimEnd().length;
}

/**
 * How much of `text` to hold back before a marker search: a possible start of `marker` at its
 * end, and the whitespace before that (dropped when a call follows).
 */
export function heldBack(text: string, marker: string): number {
  const partial = partialSuffix(text, marker);
  return partial + trailingSpace(text.slice(0, text.length - partial));
}

/**
 * Splits a reasoning model's output (Qwen3, DeepSeek-R1: `<think>…</think>` before the answer)
 * into its reasoning and its answer, as text arrives in pieces. Pure: no engine, no I/O.
 *
 * Rules: the reasoning block is recognised only at the start of the output (after leading
 * whitespace), or from the first character when the prompt already opened it
 * (`startsInside`, the generation prompt ended in `<think>`). Whitespace right after either tag is
 * dropped, and so is whitespace right before `</think>`; everything else is kept byte for byte.
 * Output that does not start with the start tag is all answer, unchanged. A tag split across
 * pieces is held back until it is whole (or proven not to be a tag).
 *
 * @module
 */

/** The tags around a model's reasoning and where the output starts. */
export interface ReasoningSyntax {
  /** Opening tag, e.g. `<think>`. */
  start: string;
  /** Closing tag, e.g. `</think>`. */
  end: string;
  /** True when the prompt ends inside an open reasoning block: output starts as reasoning. */
  startsInside?: boolean;
}

/** One piece of split output; either part may be empty. */
export interface ReasoningPart {
  reasoning: string;
  content: string;
}

type Phase = "before" | "reasoning" | "content";

/**
 * Streaming splitter: `push` each piece of text, `flush` at the end; the concatenated parts equal
 * what {@link splitReasoning} returns for the whole text.
 *
 * @example
 * ```ts
 * import { ReasoningSplitter } from "./reasoning.ts";
 * const s = new ReasoningSplitter({ start: "<think>", end: "</think>" });
 * s.push("<thi"); // { reasoning: "", content: "" }
 * s.push("nk>why</th"); // { reasoning: "why", content: "" }
 * s.push("ink>\n\nBecause."); // { reasoning: "", content: "Because." }
 * s.flush(); // { reasoning: "", content: "" }
 * ```
 */
export class ReasoningSplitter {
  readonly #start: string;
  readonly #end: string;
  #phase: Phase;
  /** Text received but not yet given out (a possible tag prefix, or trailing whitespace). */
  #held = "";
  /** Dropping whitespace right after a tag. */
  #skipSpace: boolean;
  #sawReasoning: boolean;

  constructor(syntax: ReasoningSyntax) {
    this.#start = syntax.start;
    this.#end = syntax.end;
    this.#phase = syntax.startsInside ? "reasoning" : "before";
    this.#skipSpace = syntax.startsInside === true;
    this.#sawReasoning = syntax.startsInside === true;
  }

  /** True once a reasoning block has begun (then `reasoning_content` is reported, maybe ""). */
  get sawReasoning(): boolean {
    return this.#sawReasoning;
  }

  /** True while the output is inside the reasoning block. */
  get inReasoning(): boolean {
    return this.#phase === "reasoning";
  }

  /** Splits the next piece of output. */
  push(text: string): ReasoningPart {
    const out: ReasoningPart = { reasoning: "", content: "" };
    let buf = this.#held + text;
    this.#held = "";
    while (buf !== "") {
      if (this.#phase === "content") {
        if (this.#skipSpace) {
          buf = buf.trimStart();
          if (buf === "") break;
          this.#skipSpace = false;
        }
        out.content += buf;
        break;
      }
      if (this.#phase === "before") {
        const lead = buf.length - buf.trimStart().length;
        const rest = buf.slice(lead);
        if (rest === "" || (rest.length < this.#start.length && this.#start.startsWith(rest))) {
          this.#held = buf; // whitespace so far, or a prefix of the start tag: wait
          break;
        }
        if (rest.startsWith(this.#start)) {
          this.#phase = "reasoning";
          this.#sawReasoning = true;
          this.#skipSpace = true;
          buf = rest.slice(this.#start.length);
          continue;
        }
        this.#phase = "content"; // no reasoning block: everything is answer, unchanged
        continue;
      }
      // reasoning
      if (this.#skipSpace) {
        buf = buf.trimStart();
        if (buf === "") break;
        this.#skipSpace = false;
      }
      const at = buf.indexOf(this.#end);
      if (at >= 0) {
        out.reasoning += buf.slice(0, at).trimEnd();
        this.#phase = "content";
        this.#skipSpace = true;
        buf = buf.slice(at + this.#end.length);
        continue;
      }
      // Hold back a possible start of the end tag, and trailing whitespace (it may precede it).
      const tag = partialSuffix(buf, this.#end);
      const body = buf.slice(0, buf.length - tag);
      const keep = tag + body.length - body.trimEnd().length;
      out.reasoning += buf.slice(0, buf.length - keep);
      this.#held = buf.slice(buf.length - keep);
      break;
    }
    return out;
  }

  /** The end of the output: gives out whatever was held back. */
  flush(): ReasoningPart {
    const held = this.#held;
    this.#held = "";
    if (held === "") return { reasoning: "", content: "" };
    // Unfinished reasoning (cut off by max_tokens) keeps its text; a lone tag prefix is answer.
    if (this.#phase === "reasoning") return { reasoning: held, content: "" };
    return { reasoning: "", content: held };
  }
}

/**
 * Splits a whole output; `reasoning` is undefined when the output had no reasoning block.
 *
 * @example
 * ```ts
 * import { splitReasoning } from "./reasoning.ts";
 * splitReasoning("<think>hmm</think>\n\nYes.", { start: "<think>", end: "</think>" });
 * // { reasoning: "hmm", content: "Yes." }
 * ```
 */
export function splitReasoning(
  text: string,
  syntax: ReasoningSyntax,
): { reasoning: string | undefined; content: string } {
  const splitter = new ReasoningSplitter(syntax);
  const a = splitter.push(text);
  const b = splitter.flush();
  return {
    reasoning: splitter.sawReasoning ? a.reasoning + b.reasoning : undefined,
    content: a.content + b.content,
  };
}

/** Length of the longest suffix of `text` that is a proper prefix of `tag`. */
function partialSuffix(text: string, tag: string): number {
  for (let n = Math.min(tag.length - 1, text.length); n > 0; n--) {
    if (text.endsWith(tag.slice(0, n))) return n;
  }
  return 0;
}

/**
 * Incremental detokenization: turns a growing list of token ids into text deltas that are always
 * whole characters, with the tokenizer's own `decode` function.
 *
 * Byte-level tokenizers can split one UTF-8 character over several tokens; decoding such a prefix
 * ends in U+FFFD. Decoding one token alone is wrong too: SentencePiece-style decoders drop the
 * leading space of the first token, and some decoders merge across tokens. So, like Hugging Face's
 * TGI and vLLM, this keeps two offsets into a short window of recent ids: text of the window up to
 * the read offset was already emitted, and the delta is what decoding the whole window adds to it.
 * The window only spans the last emitted chunk plus pending tokens, so each step costs O(1)
 * amortised whatever the length of the generation.
 *
 * @module
 */

/** The tokenizer's decode: token ids to text (special tokens already handled as wanted). */
export type DecodeFn = (ids: number[]) => string;

/** Options of {@link TextStream}. */
export interface TextStreamOptions {
  /**
   * Ids that come before the first generated one (e.g. the last few prompt tokens). They are
   * decoded as context, so the first generated token keeps its leading space, and never emitted.
   */
  contextIds?: readonly number[];
}

function trailingReplacements(text: string): number {
  let n = 0;
  while (n < text.length && text.charCodeAt(text.length - 1 - n) === 0xfffd) n++;
  return n;
}

/**
 * Streams the text of generated token ids as deltas of whole characters: a character split over
 * byte-level tokens is held back until complete. Concatenating every delta and the final
 * {@link TextStream.flush} gives the decode of all the ids.
 *
 * @example
 * ```ts
 * import { TextStream } from "./text_stream.ts";
 * const utf8 = new TextDecoder();
 * const stream = new TextStream((ids) => utf8.decode(new Uint8Array(ids))); // ids are bytes
 * stream.push(0x63); // "c"
 * stream.push(0xc3); // "" (first byte of "é" held back)
 * stream.push(0xa9); // "é"
 * stream.flush(); // ""
 * ```
 */
export class TextStream {
  readonly #decode: DecodeFn;
  // Ids from the prefix offset on; `#read` indexes the first id not yet behind `#prefixText`.
  #window: number[];
  #read: number;
  // Decode of #window[0..#read): text already accounted for.
  #prefixText: string;
  // Characters past #prefixText already emitted while the window still ends mid-character.
  #emitted = 0;

  constructor(decode: DecodeFn, options: TextStreamOptions = {}) {
    this.#decode = decode;
    this.#window = [...(options.contextIds ?? [])];
    this.#read = this.#window.length;
    this.#prefixText = this.#window.length > 0 ? decode(this.#window) : "";
  }

  /** Ids received and not yet fully turned into emitted text. */
  get pendingTokens(): number {
    return this.#window.length - this.#read;
  }

  /** Adds one or more generated ids; returns the new complete text (often empty). */
  push(ids: number | readonly number[]): string {
    if (typeof ids === "number") this.#window.push(ids);
    else for (const id of ids) this.#window.push(id);
    const full = this.#decode(this.#window);
    const start = this.#prefixText.length + this.#emitted;
    const incomplete = trailingReplacements(full);
    if (incomplete > 0) {
      // Release what precedes the unfinished character; it cannot change any more.
      const end = full.length - incomplete;
      if (end <= start) return "";
      this.#emitted += end - start;
      return full.slice(start, end);
    }
    // Nothing new (e.g. ids that decode to nothing): keep the context and wait.
    if (full.length <= this.#prefixText.length) return "";
    const delta = full.slice(start);
    // Advance: the chunk just emitted becomes the context of the next one.
    this.#window = this.#window.slice(this.#read);
    this.#read = this.#window.length;
    this.#prefixText = this.#decode(this.#window);
    this.#emitted = 0;
    return delta;
  }

  /**
   * Ends the stream: returns whatever is still held back, even an unfinished character (as U+FFFD,
   * the way a full decode shows it). The stream can be reused afterwards, without context.
   */
  flush(): string {
    let rest = "";
    if (this.#window.length > this.#read) {
      rest = this.#decode(this.#window).slice(this.#prefixText.length + this.#emitted);
    }
    this.#window = [];
    this.#read = 0;
    this.#prefixText = "";
    this.#emitted = 0;
    return rest;
  }
}

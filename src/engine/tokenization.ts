/**
 * `/tokenize` and `/detokenize` over a model's own tokenizer, shared by every engine kind: text
 * (with or without special tokens), chat messages through the chat template, token strings, and
 * the text of token ids with out-of-vocabulary ids refused.
 *
 * @module
 */

import { ValidationError } from "../core/errors.ts";
import { renderPrompt } from "./chat/prompt.ts";
import type { Tokenizer } from "./load_model.ts";
import type { EngineTokenizeResult, TokenizeInput } from "../core/inference_types.ts";
import { checkTokenIds } from "./admission_limits.ts";

/** Token string of each id (`get_vocab()` inverted), computed once per tokenizer. */
const tokenTables = new WeakMap<Tokenizer, string[]>();

function tokenTable(tokenizer: Tokenizer): string[] {
  let table = tokenTables.get(tokenizer);
  if (table === undefined) {
    const vocab = tokenizer.get_vocab();
    const entries = vocab instanceof Map ? [...vocab] : Object.entries(vocab);
    table = [];
    for (const [token, id] of entries) table[id] = token;
    tokenTables.set(tokenizer, table);
  }
  return table;
}

/**
 * Tokenizes `input` as `/tokenize` does: a prompt with special tokens unless told otherwise;
 * messages rendered with the chat template (a `ValidationError` when the model has none) and
 * encoded as the chat endpoint encodes them.
 *
 * @example
 * ```ts
 * import { tokenizeWith } from "./tokenization.ts";
 * declare const tokenizer: import("./load_model.ts").Tokenizer;
 * tokenizeWith(tokenizer, { prompt: "hello" }, "m", { tokenStrs: true }).tokenStrs;
 * ```
 */
export function tokenizeWith(
  tokenizer: Tokenizer,
  input: TokenizeInput,
  modelId: string,
  options: { tokenStrs?: boolean } = {},
): EngineTokenizeResult {
  let tokens: number[];
  if ("prompt" in input) {
    tokens = tokenizer.encode(input.prompt, {
      add_special_tokens: input.addSpecialTokens ?? true,
    });
  } else {
    // Rendered as a chat request renders it.
    tokens = renderPrompt(tokenizer, input, modelId).ids;
  }
  if (!options.tokenStrs) return { tokens };
  const table = tokenTable(tokenizer);
  return { tokens, tokenStrs: tokens.map((id) => table[id] ?? "") };
}

/** Token ids of each text, with the tokenizer's special tokens (as an encoder reads them). */
export function encodeTexts(tokenizer: Tokenizer, texts: readonly string[]): number[][] {
  return texts.map((text) => tokenizer.encode(text));
}

/** transformers.js' tokenizer call for a text pair (the engine's `Tokenizer` type omits it). */
type PairTokenizer = (
  text: string,
  options: { text_pair: string; return_tensor: false; return_token_type_ids: true },
) => { input_ids: number[]; token_type_ids?: number[] };

/** Ids and token type ids of a (query, document) pair, as a cross-encoder reads it. */
export interface EncodedPair {
  ids: number[];
  types: number[];
}

/**
 * Encodes `query` with each of `documents` as a pair (`[CLS] query [SEP] document [SEP]` for BERT).
 *
 * @example
 * ```ts
 * import { encodePairs } from "./tokenization.ts";
 * declare const tokenizer: import("./load_model.ts").Tokenizer;
 * encodePairs(tokenizer, "what is it?", ["a thing"])[0].ids;
 * ```
 */
export function encodePairs(
  tokenizer: Tokenizer,
  query: string,
  documents: readonly string[],
): EncodedPair[] {
  const encode = tokenizer as unknown as PairTokenizer;
  return documents.map((document) => {
    const encoded = encode(query, {
      text_pair: document,
      return_tensor: false,
      return_token_type_ids: true,
    });
    const ids = encoded.input_ids;
    return { ids, types: encoded.token_type_ids ?? ids.map(() => 0) };
  });
}

/**
 * The text of `ids` (special tokens kept, as vLLM's `/detokenize` does). An id that is no token of
 * the tokenizer is a `ValidationError` naming `tokens` and the position.
 *
 * @example
 * ```ts
 * import { detokenizeWith } from "./tokenization.ts";
 * declare const tokenizer: import("./load_model.ts").Tokenizer;
 * detokenizeWith(tokenizer, [101, 7592, 102]);
 * ```
 */
export function detokenizeWith(tokenizer: Tokenizer, ids: number[]): string {
  const table = tokenTable(tokenizer);
  checkTokenIds(ids, table.length, "tokens");
  const hole = ids.findIndex((id) => table[id] === undefined);
  if (hole >= 0) {
    throw new ValidationError(
      `tokens holds the token id ${ids[hole]} at position ${hole}, which is not in the model's ` +
        `vocabulary`,
      { param: "tokens", code: "invalid_value" },
    );
  }
  return ids.length === 0 ? "" : tokenizer.decode(ids);
}

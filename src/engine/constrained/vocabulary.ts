/**
 * A tokenizer's vocabulary as constrained decoding needs it, computed once per model: the bytes
 * each token stands for, a trie of them (so one walk tries every token against the grammar and
 * skips whole subtrees at the first byte that does not fit), and the "plain" tokens that a JSON
 * string takes as they are (no quote, backslash or control character, whole UTF-8 characters).
 *
 * @module
 */

/**
 * Tokens in a flat preorder trie: node i holds one byte at `depth[i]` (1 for a token's first
 * byte); its subtree ends before `end[i]`; `token[i]` is the token whose bytes end there, or -1
 * (further tokens with the same bytes are in `more`).
 */
export interface Trie {
  readonly bytes: Uint8Array;
  readonly depth: Uint16Array;
  readonly end: Int32Array;
  readonly token: Int32Array;
  readonly more: ReadonlyMap<number, readonly number[]>;
}

/** The slice of tokenizer.json a vocabulary is read from. */
export interface TokenizerJson {
  model?: { vocab?: Record<string, number> | [string, number][]; byte_fallback?: boolean };
  added_tokens?: { id: number; content: string; special?: boolean }[];
  decoder?: { type?: string; decoders?: { type?: string }[] } | null;
}

const utf8 = new TextEncoder();
// ignoreBOM keeps a leading U+FEFF, which is a character of the token like any other.
const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** A model's vocabulary for constrained decoding. */
export class Vocabulary {
  /** Mask length: every id a logits row may have. */
  readonly size: number;
  /** Bytes of each token; null for special tokens, tokens that decode to nothing, unused ids. */
  readonly tokenBytes: readonly (Uint8Array | null)[];
  /** Every token with bytes. */
  readonly all: Trie;
  /** The tokens that are not plain (see the module documentation). */
  readonly rest: Trie;
  /** `plainUpTo[k]`: bit set of the plain tokens of at most k characters (the last: all). */
  readonly plainUpTo: readonly Uint32Array[];

  constructor(tokenBytes: (Uint8Array | null)[], size: number) {
    this.size = Math.max(size, tokenBytes.length);
    this.tokenBytes = tokenBytes;
    const plainChars: number[] = [];
    const usable: number[] = [];
    const rest: number[] = [];
    tokenBytes.forEach((bytes, id) => {
      if (bytes === null || bytes.length === 0) return;
      usable.push(id);
      const chars = plainCharCount(bytes);
      if (chars < 0) rest.push(id);
      else plainChars[id] = chars;
    });
    this.all = buildTrie(usable, tokenBytes);
    this.rest = buildTrie(rest, tokenBytes);
    const longest = plainChars.reduce((m, c) => Math.max(m, c ?? 0), 0);
    const words = (this.size + 31) >>> 5;
    const upTo: Uint32Array[] = [];
    for (let k = 0; k <= longest; k++) {
      const set = k === 0 ? new Uint32Array(words) : upTo[k - 1].slice();
      plainChars.forEach((c, id) => {
        if (c === k) set[id >>> 5] |= 1 << (id & 31);
      });
      upTo.push(set);
    }
    this.plainUpTo = upTo;
  }

  /**
   * Reads the vocabulary of a tokenizer.json (see {@link tokenBytesOf}). `size` is the model's
   * `vocab_size` (logits rows may be longer than the tokenizer).
   */
  static fromTokenizerJson(json: TokenizerJson, size: number): Vocabulary {
    return new Vocabulary(tokenBytesOf(json), size);
  }
}

/**
 * The bytes each token of a tokenizer.json stands for, by id: byte-level BPE (GPT-2, Llama 3,
 * Qwen, SmolLM) through the byte-to-character table, SentencePiece pieces with `▁` as a space and
 * `<0xNN>` byte fallback; added tokens as their text; null for special tokens and unused ids. A
 * token may hold part of a multi-byte character: these are its own bytes, not whole UTF-8.
 *
 * @example
 * ```ts
 * import { tokenBytesOf } from "./vocabulary.ts";
 * tokenBytesOf({ model: { vocab: { "<0xE2>": 0, "\u2581a": 1 } } }); // [[0xe2], [0x20, 0x61]]
 * ```
 */
export function tokenBytesOf(json: TokenizerJson): (Uint8Array | null)[] {
  const decoders = [json.decoder?.type, ...(json.decoder?.decoders ?? []).map((d) => d.type)];
  const byteLevel = decoders.includes("ByteLevel");
  const vocab = json.model?.vocab ?? {};
  const entries: [string, number][] = Array.isArray(vocab)
    ? vocab.map(([piece], id) => [piece, id])
    : Object.entries(vocab);
  const bytes: (Uint8Array | null)[] = [];
  const table = byteLevel ? unicodeToByte() : null;
  for (const [piece, id] of entries) {
    bytes[id] = table ? byteLevelBytes(piece, table) : sentencePieceBytes(piece);
  }
  for (const t of json.added_tokens ?? []) {
    bytes[t.id] = t.special ? null : utf8.encode(t.content);
  }
  for (let id = 0; id < bytes.length; id++) bytes[id] ??= null;
  return bytes;
}

// Characters of a plain token, or -1 when the token is not plain.
function plainCharCount(bytes: Uint8Array): number {
  for (const b of bytes) if (b === 0x22 || b === 0x5c || b < 0x20) return -1;
  try {
    return [...strictUtf8.decode(bytes)].length;
  } catch {
    return -1;
  }
}

function buildTrie(ids: number[], tokenBytes: readonly (Uint8Array | null)[]): Trie {
  const sorted = ids.slice().sort((a, b) => compareBytes(tokenBytes[a]!, tokenBytes[b]!));
  const bytes: number[] = [];
  const depth: number[] = [];
  const end: number[] = [];
  const token: number[] = [];
  const more = new Map<number, number[]>();
  // open[d]: index of the node at depth d+1 on the current path.
  const open: number[] = [];
  let previous: Uint8Array = new Uint8Array(0);
  for (const id of sorted) {
    const b = tokenBytes[id]!;
    let common = 0;
    while (common < b.length && common < previous.length && b[common] === previous[common]) {
      common++;
    }
    while (open.length > common) end[open.pop()!] = bytes.length;
    for (let d = common; d < b.length; d++) {
      open.push(bytes.length);
      bytes.push(b[d]);
      depth.push(d + 1);
      end.push(0);
      token.push(-1);
    }
    const node = open[b.length - 1];
    if (token[node] === -1) token[node] = id;
    else more.set(node, [...(more.get(node) ?? []), id]);
    previous = b;
  }
  while (open.length > 0) end[open.pop()!] = bytes.length;
  return {
    bytes: Uint8Array.from(bytes),
    depth: Uint16Array.from(depth),
    end: Int32Array.from(end),
    token: Int32Array.from(token),
    more,
  };
}

function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return a.length - b.length;
}

// GPT-2's table: printable bytes stand for themselves, the others for 256 + n in byte order.
function unicodeToByte(): Map<number, number> {
  const map = new Map<number, number>();
  let n = 0;
  for (let b = 0; b < 256; b++) {
    const printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
    map.set(printable ? b : 256 + n++, b);
  }
  return map;
}

function byteLevelBytes(piece: string, table: Map<number, number>): Uint8Array | null {
  const out = new Uint8Array(piece.length);
  let i = 0;
  for (const ch of piece) {
    const b = table.get(ch.codePointAt(0)!);
    if (b === undefined) return utf8.encode(piece); // not a byte-level piece: its text
    out[i++] = b;
  }
  return out.subarray(0, i);
}

function sentencePieceBytes(piece: string): Uint8Array {
  const m = /^<0x([0-9A-Fa-f]{2})>$/.exec(piece);
  if (m) return Uint8Array.of(parseInt(m[1], 16));
  return utf8.encode(piece.replaceAll("\u2581", " "));
}

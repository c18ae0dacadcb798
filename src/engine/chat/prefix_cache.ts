/**
 * The prefix cache: key/value cache of earlier sequences, kept across requests so a new prompt
 * prefills only the tokens after the longest prefix some earlier sequence already computed (a
 * conversation's next turn, a system prompt many users share).
 *
 * Sequences are cut into blocks of {@link PREFIX_BLOCK_TOKENS} tokens, the last one possibly
 * shorter; a block is found by its parent block and its own token ids, so blocks form a tree in
 * which a shared prefix is stored once (vLLM's automatic prefix caching keys blocks the same way).
 * A lookup follows whole blocks, then takes the first tokens of the child that goes on furthest
 * (so reuse is exact to the token). A block holds its tokens' columns of every cache tensor,
 * `[heads, tokens, headDim]` each. Blocks are evicted least recently used first, leaves only, once
 * their bytes pass the budget. Causal attention makes a token's keys and values depend only on
 * the tokens before it, so any prefix of a cached sequence is a valid cache of that prefix. With
 * a WebGPU session's {@link DeviceCacheCopies}, blocks are copied in GPU memory too, and a hit
 * whose blocks all have copies there is fed from there.
 *
 * @module
 */

import type { CacheArray, CacheTensor } from "./kv_cache.ts";
import type { DeviceCacheCopies, GpuBlock } from "../onnx_session.ts";

/** Tokens per block (the last block of a sequence may have fewer). */
export const PREFIX_BLOCK_TOKENS = 64;

/** 512 MiB unless told otherwise (~11k tokens of a SmolLM2-135M-shaped model's float32 cache). */
export const DEFAULT_PREFIX_CACHE_BYTES = 512 * 1024 * 1024;

/**
 * The prefix cache's budget on `device` when none is asked for: {@link DEFAULT_PREFIX_CACHE_BYTES},
 * and none on `webgpu` until a GPU run times hits there again. Hits fed to the GPU from memory
 * measured at ~24 MB/s on an H200 (3.2 s for a 78-token prefill over a 1,528-token cached prefix,
 * against 0.94 s to prefill 1,516 tokens from nothing; bench/RESULTS.md); since then the blocks
 * are kept on the GPU too and a hit is put together there (gpu_cache_copies.ts), not yet timed on
 * a GPU. An explicit budget (`--prefix-cache-mib`) turns it on there.
 *
 * @example
 * ```ts
 * import { defaultPrefixCacheBytes } from "./prefix_cache.ts";
 * defaultPrefixCacheBytes("cpu"); // 536870912
 * defaultPrefixCacheBytes("webgpu"); // 0
 * ```
 */
export function defaultPrefixCacheBytes(device: string): number {
  return device === "webgpu" ? 0 : DEFAULT_PREFIX_CACHE_BYTES;
}

/** Counters of a prefix cache (cumulative, except bytes and blocks). */
export interface PrefixCacheStats {
  /** Prompts looked up. */
  lookups: number;
  /** Lookups that found at least one token. */
  hits: number;
  /** Prompt tokens looked up. */
  lookupTokens: number;
  /** Prompt tokens found (not prefilled again). */
  hitTokens: number;
  /** Bytes held now. */
  bytes: number;
  /** Most bytes it may hold. */
  budgetBytes: number;
  /** Blocks held now. */
  blocks: number;
  /** Blocks evicted so far. */
  evictions: number;
}

/** Where a sequence's tokens are in a cache: token `j` is column `start + j` of row `row`. */
export interface CachedRows {
  layers: readonly CacheTensor[];
  row: number;
  start: number;
}

interface Block {
  id: number;
  key: string;
  parent: Block | null;
  children: Set<Block>;
  tokens: readonly number[];
  /** One array per cache tensor: `[heads, tokens.length, headDim]`. */
  layers: CacheArray[];
  /** The same columns on the GPU, when the session offers copies there and had them. */
  onDevice: GpuBlock | null;
  bytes: number;
}

/** The cached part of a prompt: whole blocks, then the first `partialTokens` of one more. */
interface Match {
  path: Block[];
  partial: Block | null;
  partialTokens: number;
  tokens: number;
}

/** A key/value cache of token prefixes shared by every request of one model. */
export class PrefixCache {
  readonly budgetBytes: number;
  readonly blockTokens: number;
  /** Every block by key, least recently used first. */
  #blocks = new Map<string, Block>();
  #roots = new Set<Block>();
  #nextId = 1;
  #bytes = 0;
  /** Heads and head size of each cache tensor (the same for every block of a model). */
  #shapes: { heads: number; headDim: number }[] = [];
  #stats = { lookups: 0, hits: 0, lookupTokens: 0, hitTokens: 0, evictions: 0 };
  #copies: DeviceCacheCopies | undefined;

  /**
   * With `copies` (a WebGPU session's), each block is also kept on the GPU, and a hit is put
   * together there: the budget is then held twice, in memory and on the GPU.
   */
  constructor(budgetBytes: number, blockTokens = PREFIX_BLOCK_TOKENS, copies?: DeviceCacheCopies) {
    this.budgetBytes = budgetBytes;
    this.blockTokens = blockTokens;
    this.#copies = copies;
  }

  stats(): PrefixCacheStats {
    return {
      ...this.#stats,
      bytes: this.#bytes,
      budgetBytes: this.budgetBytes,
      blocks: this.#blocks.size,
    };
  }

  /** Cached tokens of the longest cached prefix of `ids`, at most `most` (no copy, no counting). */
  peek(ids: readonly number[], most: number): number {
    return this.#match(ids, most).tokens;
  }

  /**
   * The cache of the longest cached prefix of `ids` of at most `most` tokens, as tensors of batch
   * 1 (`[1, heads, tokens, headDim]`), or null when not one token is cached. Counts the lookup
   * for {@link stats}.
   */
  lookup(ids: readonly number[], most: number): { tokens: number; cache: CacheTensor[] } | null {
    const match = this.#match(ids, most);
    this.countLookup(ids.length);
    if (match.tokens === 0) return null;
    this.#stats.hits++;
    this.#stats.hitTokens += match.tokens;
    const { path, partial, partialTokens, tokens } = match;
    this.#touch(partial ? [...path, partial] : path);
    const cache = this.#shapes.map(({ heads, headDim }, layer) => {
      const Ctor = (path[0] ?? partial)!.layers[layer].constructor as new (n: number) => CacheArray;
      const data = new Ctor(heads * tokens * headDim);
      let at = 0; // tokens copied so far
      const copy = (block: Block, count: number) => {
        const src = block.layers[layer];
        const width = block.tokens.length * headDim;
        for (let h = 0; h < heads; h++) {
          const from = h * width;
          data.set(src.subarray(from, from + count * headDim), (h * tokens + at) * headDim);
        }
        at += count;
      };
      for (const block of path) copy(block, block.tokens.length);
      if (partial) copy(partial, partialTokens);
      return { data, dims: [1, heads, tokens, headDim] as const };
    });
    this.#putTogetherOnDevice(match, cache);
    return { tokens, cache };
  }

  /** Has the session feed `cache` from the GPU, put together from the blocks' copies there. */
  #putTogetherOnDevice({ path, partial, partialTokens }: Match, cache: CacheTensor[]): void {
    const parts = path.map((block) => ({ block, count: block.tokens.length }));
    if (partial) parts.push({ block: partial, count: partialTokens });
    if (!this.#copies || parts.some((p) => p.block.onDevice === null)) return;
    const blocks = parts.map(({ block, count }) => ({ block: block.onDevice!, count }));
    cache.forEach((twin, layer) => this.#copies!.concat(blocks, layer, twin));
  }

  /** Counts a prompt of `tokens` tokens looked up (for {@link stats}). */
  countLookup(tokens: number): void {
    this.#stats.lookups++;
    this.#stats.lookupTokens += tokens;
  }

  /**
   * Keeps the cache of `ids`, read from `rows`; blocks already cached are only marked as used.
   * Stops early when the budget has no room left even after eviction.
   */
  insert(ids: readonly number[], rows: CachedRows): void {
    if (this.budgetBytes <= 0 || rows.layers.some((t) => t.data.length === 0)) return;
    const B = this.blockTokens;
    const path: Block[] = [];
    let parent: Block | null = null;
    for (let from = 0; from < ids.length; from += B) {
      const tokens = ids.slice(from, from + B);
      let block = this.#blocks.get(blockKey(parent, tokens));
      if (block === undefined) {
        // A last, short block that another block already begins with adds nothing.
        if (tokens.length < B && this.#longestChild(parent, tokens).count === tokens.length) break;
        const created = this.#create(parent, tokens, rows, from, path);
        if (created === null) break;
        block = created;
      }
      path.push(block);
      parent = block;
    }
    this.#touch(path);
  }

  /** The blocks along `ids`, within `most` tokens. */
  #match(ids: readonly number[], most: number): Match {
    const B = this.blockTokens;
    const end = Math.min(most, ids.length);
    const path: Block[] = [];
    let parent: Block | null = null;
    let at = 0;
    while (at + B <= end) {
      const block = this.#blocks.get(blockKey(parent, ids.slice(at, at + B)));
      if (block === undefined) break;
      path.push(block);
      parent = block;
      at += B;
    }
    const { child, count } = this.#longestChild(parent, ids.slice(at, end));
    return { path, partial: child, partialTokens: count, tokens: at + count };
  }

  /** The child of `parent` (a root when null) whose tokens begin with most of `tokens`. */
  #longestChild(
    parent: Block | null,
    tokens: readonly number[],
  ): { child: Block | null; count: number } {
    let best: { child: Block | null; count: number } = { child: null, count: 0 };
    for (const child of parent?.children ?? this.#roots) {
      let n = 0;
      while (n < tokens.length && n < child.tokens.length && child.tokens[n] === tokens[n]) n++;
      if (n > best.count) best = { child, count: n };
    }
    return best;
  }

  /** Marks `path` as just used, the root last, so eviction takes leaves before their parents. */
  #touch(path: readonly Block[]): void {
    for (let i = path.length - 1; i >= 0; i--) {
      this.#blocks.delete(path[i].key);
      this.#blocks.set(path[i].key, path[i]);
    }
  }

  /** Copies one block (ids `tokens`, from column `rows.start + from`) out of `rows`. */
  #create(
    parent: Block | null,
    tokens: readonly number[],
    rows: CachedRows,
    from: number,
    keep: readonly Block[],
  ): Block | null {
    const n = tokens.length;
    let bytes = 0;
    for (const t of rows.layers) bytes += t.dims[1] * n * t.dims[3] * t.data.BYTES_PER_ELEMENT;
    if (!this.#makeRoom(bytes, new Set(keep))) return null;
    const layers = rows.layers.map((t, layer) => {
      const [, heads, width, headDim] = t.dims;
      this.#shapes[layer] = { heads, headDim };
      const data = new (t.data.constructor as new (n: number) => CacheArray)(heads * n * headDim);
      for (let h = 0; h < heads; h++) {
        const at = ((rows.row * heads + h) * width + rows.start + from) * headDim;
        data.set(t.data.subarray(at, at + n * headDim), h * n * headDim);
      }
      return data;
    });
    const onDevice = this.#copies?.slice(rows.layers, rows.row, rows.start + from, n) ?? null;
    const key = blockKey(parent, tokens);
    const block: Block = {
      id: this.#nextId++,
      key,
      parent,
      children: new Set(),
      tokens,
      layers,
      onDevice,
      bytes,
    };
    const siblings = parent?.children ?? this.#roots;
    // A shorter sibling that this block begins with is now redundant (short blocks are leaves).
    for (const s of siblings) {
      if (s.tokens.length < n && s.tokens.every((id, i) => id === tokens[i])) this.#drop(s);
    }
    siblings.add(block);
    this.#blocks.set(key, block);
    this.#bytes += bytes;
    return block;
  }

  /** Evicts least recently used leaves (not those in `keep`) until `bytes` more fit. */
  #makeRoom(bytes: number, keep: ReadonlySet<Block>): boolean {
    if (bytes > this.budgetBytes) return false;
    while (this.#bytes + bytes > this.budgetBytes) {
      let victim: Block | undefined;
      for (const block of this.#blocks.values()) {
        if (block.children.size === 0 && !keep.has(block)) {
          victim = block;
          break;
        }
      }
      if (victim === undefined) return false;
      this.#drop(victim);
      this.#stats.evictions++;
    }
    return true;
  }

  /** Removes a leaf. */
  #drop(block: Block): void {
    this.#blocks.delete(block.key);
    (block.parent?.children ?? this.#roots).delete(block);
    this.#bytes -= block.bytes;
    block.onDevice?.destroy();
  }
}

/** A block's key: its parent's id and its own tokens. */
function blockKey(parent: Block | null, tokens: readonly number[]): string {
  return `${parent?.id ?? 0}:${tokens.join(",")}`;
}

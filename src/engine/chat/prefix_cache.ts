/**
 * The prefix cache: key/value cache of earlier sequences, kept across requests so a new prompt
 * prefills only the tokens after the longest prefix some earlier sequence already computed (a
 * conversation's next turn, a system prompt many users share).
 *
 * Sequences are cut into blocks of {@link PREFIX_BLOCK_TOKENS} tokens; a block is found by its
 * parent block and its own token ids, so blocks form a tree in which a shared prefix is stored
 * once (vLLM's automatic prefix caching keys blocks the same way). A block holds its tokens'
 * columns of every cache tensor, `[heads, blockTokens, headDim]` each. Blocks are evicted least
 * recently used first, leaves only, once their bytes pass the budget. Causal attention makes a
 * token's keys and values depend only on the tokens before it, so any prefix of a cached sequence
 * is a valid cache of that prefix.
 *
 * @module
 */

import type { CacheArray, CacheTensor } from "./kv_cache.ts";

/** Tokens per block: a hit is a whole number of blocks. */
export const PREFIX_BLOCK_TOKENS = 16;

/** 512 MiB unless told otherwise (~11k tokens of a SmolLM2-135M-shaped model's float32 cache). */
export const DEFAULT_PREFIX_CACHE_BYTES = 512 * 1024 * 1024;

/** Counters of a prefix cache (cumulative, except bytes and blocks). */
export interface PrefixCacheStats {
  /** Prompts looked up. */
  lookups: number;
  /** Lookups that found at least one block. */
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
  children: number;
  /** One array per cache tensor: `[heads, blockTokens, headDim]`. */
  layers: CacheArray[];
  bytes: number;
}

/** A key/value cache of token prefixes shared by every request of one model. */
export class PrefixCache {
  readonly budgetBytes: number;
  readonly blockTokens: number;
  /** Every block by key, least recently used first. */
  #blocks = new Map<string, Block>();
  #nextId = 1;
  /** Heads and head size of each cache tensor (the same for every block of a model). */
  #shapes: { heads: number; headDim: number }[] = [];
  #bytes = 0;
  #stats = { lookups: 0, hits: 0, lookupTokens: 0, hitTokens: 0, evictions: 0 };

  constructor(budgetBytes: number, blockTokens = PREFIX_BLOCK_TOKENS) {
    this.budgetBytes = budgetBytes;
    this.blockTokens = blockTokens;
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
    return this.#path(ids, most).length * this.blockTokens;
  }

  /**
   * The cache of the longest cached prefix of `ids` of at most `most` tokens, as tensors of batch
   * 1 (`[1, heads, tokens, headDim]`), or null when not even one block is cached. Counts the
   * lookup for {@link stats}.
   */
  lookup(ids: readonly number[], most: number): { tokens: number; cache: CacheTensor[] } | null {
    const path = this.#path(ids, most);
    this.#stats.lookups++;
    this.#stats.lookupTokens += ids.length;
    if (path.length === 0) return null;
    const tokens = path.length * this.blockTokens;
    this.#stats.hits++;
    this.#stats.hitTokens += tokens;
    this.#touch(path);
    const cache = this.#shapes.map(({ heads, headDim }, layer) => {
      const Ctor = path[0].layers[layer].constructor as new (n: number) => CacheArray;
      const data = new Ctor(heads * tokens * headDim);
      const perHead = this.blockTokens * headDim;
      path.forEach((block, b) => {
        const src = block.layers[layer];
        for (let h = 0; h < heads; h++) {
          data.set(src.subarray(h * perHead, (h + 1) * perHead), (h * path.length + b) * perHead);
        }
      });
      return { data, dims: [1, heads, tokens, headDim] as const };
    });
    return { tokens, cache };
  }

  /** Counts a prompt of `tokens` tokens prefilled from its start (for {@link stats}). */
  miss(tokens: number): void {
    this.#stats.lookups++;
    this.#stats.lookupTokens += tokens;
  }

  /**
   * Keeps the cache of `ids` (their whole blocks), read from `rows`; blocks already cached are
   * only marked as used. Stops early when the budget has no room left even after eviction.
   */
  insert(ids: readonly number[], rows: CachedRows): void {
    if (this.budgetBytes <= 0) return;
    const B = this.blockTokens;
    const path: Block[] = [];
    let parent: Block | null = null;
    for (let b = 0; (b + 1) * B <= ids.length; b++) {
      const key = blockKey(parent, ids, b * B, B);
      let block = this.#blocks.get(key);
      if (block === undefined) {
        const created = this.#create(key, parent, rows, b * B, path);
        if (created === null) break;
        block = created;
      }
      path.push(block);
      parent = block;
    }
    this.#touch(path);
  }

  /** Drops every block. */
  clear(): void {
    this.#blocks.clear();
    this.#bytes = 0;
  }

  /** The cached blocks along `ids`, as many as fit in `most` tokens. */
  #path(ids: readonly number[], most: number): Block[] {
    const B = this.blockTokens;
    const path: Block[] = [];
    let parent: Block | null = null;
    for (let b = 0; (b + 1) * B <= Math.min(most, ids.length); b++) {
      const block = this.#blocks.get(blockKey(parent, ids, b * B, B));
      if (block === undefined) break;
      path.push(block);
      parent = block;
    }
    return path;
  }

  /** Marks `path` as just used, the root last, so eviction takes leaves before their parents. */
  #touch(path: readonly Block[]): void {
    for (let i = path.length - 1; i >= 0; i--) {
      this.#blocks.delete(path[i].key);
      this.#blocks.set(path[i].key, path[i]);
    }
  }

  /** Copies one block out of `rows` (tokens `from`…`from + B`), making room first. */
  #create(
    key: string,
    parent: Block | null,
    rows: CachedRows,
    from: number,
    keep: readonly Block[],
  ): Block | null {
    const B = this.blockTokens;
    let bytes = 0;
    for (const t of rows.layers) bytes += t.dims[1] * B * t.dims[3] * t.data.BYTES_PER_ELEMENT;
    if (!this.#makeRoom(bytes, new Set(keep))) return null;
    const layers = rows.layers.map((t, layer) => {
      const [, heads, width, headDim] = t.dims;
      this.#shapes[layer] = { heads, headDim };
      const data = new (t.data.constructor as new (n: number) => CacheArray)(heads * B * headDim);
      for (let h = 0; h < heads; h++) {
        const at = ((rows.row * heads + h) * width + rows.start + from) * headDim;
        data.set(t.data.subarray(at, at + B * headDim), h * B * headDim);
      }
      return data;
    });
    const block: Block = { id: this.#nextId++, key, parent, children: 0, layers, bytes };
    if (parent) parent.children++;
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
        if (block.children === 0 && !keep.has(block)) {
          victim = block;
          break;
        }
      }
      if (victim === undefined) return false;
      this.#blocks.delete(victim.key);
      if (victim.parent) victim.parent.children--;
      this.#bytes -= victim.bytes;
      this.#stats.evictions++;
    }
    return true;
  }
}

/** A block's key: its parent's id and its own tokens. */
function blockKey(
  parent: Block | null,
  ids: readonly number[],
  from: number,
  count: number,
): string {
  return `${parent?.id ?? 0}:${ids.slice(from, from + count).join(",")}`;
}

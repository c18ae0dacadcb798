/**
 * Constrained decoding at the token level: which tokens of the vocabulary the grammar allows next.
 *
 * A {@link ConstrainedGrammar} (a grammar over one vocabulary) is shared by every sequence that
 * uses it and caches the masks it computed by grammar state, so a state seen before costs a map
 * lookup. Each sequence has its own {@link TokenConstraint} (its threads), so sequences of one batch
 * never wait on each other. The sampler first checks the token it would choose anyway
 * ({@link TokenConstraint.accepts}: a few bytes through the automaton) and computes the full mask
 * only when that token is refused, as llama.cpp does; inside a JSON string the mask is the
 * precomputed set of plain tokens plus a walk over the few others.
 *
 * @module
 */

import { ServiceError } from "../../core/errors.ts";
import type { GrammarNode } from "./grammar.ts";
import {
  canFinish,
  feedBytes,
  inFreeText,
  mustFinish,
  startThreads,
  stateKey,
  stepThreads,
  type Thread,
} from "./matcher.ts";
import { StrTerm } from "./_terminals.ts";
import type { Trie, Vocabulary } from "./vocabulary.ts";

/** Masks kept per grammar (a mask is vocabulary/8 bytes: 6 KB for 49k tokens). */
const MASK_CACHE_SIZE = 2048;

/** What the sampler asks of a constraint. */
export interface TokenFilter {
  /** True when `tokenId` may come next. */
  accepts(tokenId: number): boolean;
  /** Bit set (bit `id & 31` of word `id >> 5`) of the tokens that may come next. */
  mask(): Uint32Array;
}

/** A grammar over a vocabulary, with its cache of masks. */
export class ConstrainedGrammar {
  readonly #masks = new Map<string, Uint32Array>();

  constructor(readonly root: GrammarNode, readonly vocabulary: Vocabulary) {
    startThreads(root); // refuses a grammar that cannot start (a cycle) before anything runs
  }

  /** The tokens allowed after `threads` (EOS not included). */
  maskFor(threads: readonly Thread[]): Uint32Array {
    const key = stateKey(threads);
    const cached = this.#masks.get(key);
    if (cached !== undefined) {
      // Most recently used last, so the oldest entry is the first to go.
      this.#masks.delete(key);
      this.#masks.set(key, cached);
      return cached;
    }
    const mask = this.#compute(threads);
    if (this.#masks.size >= MASK_CACHE_SIZE) this.#masks.delete(this.#masks.keys().next().value!);
    this.#masks.set(key, mask);
    return mask;
  }

  #compute(threads: readonly Thread[]): Uint32Array {
    const vocab = this.vocabulary;
    const term = threads.length === 1 ? threads[0].term : null;
    if (term instanceof StrTerm && term.plain) {
      const { plainUpTo } = vocab;
      const mask = plainUpTo[Math.min(term.room, plainUpTo.length - 1)].slice();
      walk(vocab.rest, threads, mask);
      return mask;
    }
    const mask = new Uint32Array((vocab.size + 31) >>> 5);
    walk(vocab.all, threads, mask);
    return mask;
  }
}

// Sets the bit of every token of `trie` the threads take; a byte no thread takes skips its subtree.
function walk(trie: Trie, threads: readonly Thread[], mask: Uint32Array): void {
  const { bytes, depth, end, token, more } = trie;
  const states: (readonly Thread[])[] = [threads];
  const n = bytes.length;
  let i = 0;
  while (i < n) {
    const d = depth[i];
    const next = stepThreads(states[d - 1], bytes[i]);
    if (next.length === 0) {
      i = end[i];
      continue;
    }
    states[d] = next;
    const id = token[i];
    if (id >= 0) {
      mask[id >>> 5] |= 1 << (id & 31);
      for (const dup of more.get(i) ?? []) mask[dup >>> 5] |= 1 << (dup & 31);
    }
    i++;
  }
}

/** One sequence's position in a {@link ConstrainedGrammar}. */
export class TokenConstraint implements TokenFilter {
  readonly #grammar: ConstrainedGrammar;
  readonly #eosIds: ReadonlySet<number>;
  #threads: Thread[];
  // The last token tried and the threads after it, so advance() after accepts() is free.
  #tried: { id: number; threads: Thread[] } | null = null;

  constructor(grammar: ConstrainedGrammar, eosIds: ReadonlySet<number>) {
    this.#grammar = grammar;
    this.#eosIds = eosIds;
    this.#threads = startThreads(grammar.root);
  }

  /** True when the grammar is complete and nothing but the end of the output may follow. */
  get complete(): boolean {
    return mustFinish(this.#threads);
  }

  /** True when every way on is free text (a text node, before its trigger). */
  get inFreeText(): boolean {
    return inFreeText(this.#threads);
  }

  accepts(tokenId: number): boolean {
    if (this.#eosIds.has(tokenId)) return canFinish(this.#threads);
    const bytes = this.#grammar.vocabulary.tokenBytes[tokenId];
    if (!bytes) return false;
    const threads = feedBytes(this.#threads, bytes);
    if (threads.length === 0) return false;
    this.#tried = { id: tokenId, threads };
    return true;
  }

  mask(): Uint32Array {
    const allowed = this.#grammar.maskFor(this.#threads);
    if (!canFinish(this.#threads)) return allowed;
    const withEos = allowed.slice();
    for (const id of this.#eosIds) withEos[id >>> 5] |= 1 << (id & 31);
    return withEos;
  }

  /** Moves past `tokenId` (EOS ends nothing here: the sequence stops on it). */
  advance(tokenId: number): void {
    if (this.#eosIds.has(tokenId)) return;
    const tried = this.#tried;
    this.#tried = null;
    const bytes = this.#grammar.vocabulary.tokenBytes[tokenId];
    const threads = tried?.id === tokenId
      ? tried.threads
      : bytes
      ? feedBytes(this.#threads, bytes)
      : [];
    if (threads.length === 0) {
      throw new ServiceError(
        `constrained decoding chose token ${tokenId}, which the grammar refuses`,
      );
    }
    this.#threads = threads;
  }
}

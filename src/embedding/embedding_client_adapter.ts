/**
 * `EmbeddingClientAdapter(embedder)`: gives a single-text embedder the client's batch interface
 * (`embed(texts)` returns a list of vectors), spec `EmbeddingClientAdapter`.
 *
 * @module
 */

import { ValidationError } from "../core/errors.ts";
import type { RankedText } from "./types.ts";

/** What the adapter wraps: anything with `embed(text)`, optionally a batch call. */
export interface SingleTextEmbedder {
  /** One text to one vector. */
  embed(text: string): Promise<number[]> | number[];
  /** Texts to vectors in order; used instead of `embed` when present. */
  embedBatch?(texts: string[]): Promise<number[][]> | number[][];
  /** Vector size, when known. */
  readonly dimensions?: number;
  /** Model name, when known. */
  readonly model?: string;
  /** Provider method, when known. */
  readonly method?: string;
  /** Ranks documents against a query, best first (embedders of services that serve rerank). */
  rerank?(query: string, documents: string[], options?: { topN?: number }): Promise<RankedText[]>;
}

/**
 * Batch interface over a single-text embedder: `embed(texts)` uses the embedder's `embedBatch`
 * when it has one, else calls `embed` once per text (in order, one at a time).
 *
 * @example
 * ```ts
 * import { EmbeddingClientAdapter } from "@svc/cli";
 * import { getEmbeddingModel } from "@svc/cli";
 * const client = new EmbeddingClientAdapter(getEmbeddingModel("hash"));
 * const vectors = await client.embed(["first", "second"]); // two vectors
 * ```
 */
export class EmbeddingClientAdapter {
  readonly #embedder: SingleTextEmbedder;

  /** Wraps `embedder`; a `ValidationError` when it has no `embed` method. */
  constructor(embedder: SingleTextEmbedder) {
    if (embedder === null || typeof embedder?.embed !== "function") {
      throw new ValidationError(
        "EmbeddingClientAdapter needs an embedder with an embed(text) method",
        { param: "embedder" },
      );
    }
    this.#embedder = embedder;
  }

  /** The wrapped embedder. */
  get embedder(): SingleTextEmbedder {
    return this.#embedder;
  }

  /** Vector size of the wrapped embedder, when it says. */
  get dimensions(): number | undefined {
    return this.#embedder.dimensions;
  }

  /** Model name of the wrapped embedder, when it says. */
  get model(): string | undefined {
    return this.#embedder.model;
  }

  /** Embeds a list of texts (one string is taken as a list of one); vectors in input order. */
  async embed(texts: string[] | string): Promise<number[][]> {
    const list = typeof texts === "string" ? [texts] : texts;
    if (!Array.isArray(list) || list.some((t) => typeof t !== "string")) {
      throw new ValidationError("embed() takes a list of strings", { param: "texts" });
    }
    if (list.length === 0) return [];
    if (typeof this.#embedder.embedBatch === "function") {
      return await this.#embedder.embedBatch(list);
    }
    const vectors: number[][] = [];
    for (const text of list) vectors.push(await this.#embedder.embed(text));
    return vectors;
  }

  /**
   * Ranks `documents` by relevance to `query`, best first, with the wrapped embedder's reranker;
   * a `ValidationError` when it has none (give the `openai` method a `rerankModel`).
   */
  async rerank(
    query: string,
    documents: string[],
    options: { topN?: number } = {},
  ): Promise<RankedText[]> {
    if (typeof this.#embedder.rerank !== "function") {
      const which = this.#embedder.method ? `'${this.#embedder.method}' embedder` : "embedder";
      throw new ValidationError(
        `the wrapped ${which} cannot rerank; use the 'openai' method with a rerankModel (a server ` +
          `that serves /rerank, e.g. svc llm serve --with-embedding)`,
        { param: "embedder" },
      );
    }
    if (typeof query !== "string" || !Array.isArray(documents)) {
      throw new ValidationError("rerank() takes a query string and a list of documents", {
        param: "documents",
      });
    }
    return await this.#embedder.rerank(query, documents, options);
  }
}

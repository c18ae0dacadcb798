/**
 * Base of every embedder: validates inputs, splits batches into provider-sized requests (a few in
 * flight at once), keeps input order and learns the vector size from the first answer.
 *
 * @module
 */

import { ValidationError } from "../core/errors.ts";
import type { Embedder, EmbeddingMethod } from "./types.ts";

/** Settings of {@link BaseEmbedder}. */
export interface BaseEmbedderSettings {
  /** Vector size when known up front. */
  dimensions?: number;
  /** Most texts per request. */
  maxBatchSize: number;
  /** Requests in flight at once (default 1). */
  concurrency?: number;
}

/** Shared behaviour of the providers; subclasses implement {@link BaseEmbedder.embedChunk}. */
export abstract class BaseEmbedder implements Embedder {
  readonly method: EmbeddingMethod;
  readonly model: string;
  #dimensions: number | undefined;
  readonly #maxBatchSize: number;
  readonly #concurrency: number;

  constructor(method: EmbeddingMethod, model: string, settings: BaseEmbedderSettings) {
    this.method = method;
    this.model = model;
    this.#dimensions = settings.dimensions;
    this.#maxBatchSize = Math.max(1, Math.floor(settings.maxBatchSize));
    this.#concurrency = Math.max(1, settings.concurrency ?? 1);
  }

  get dimensions(): number | undefined {
    return this.#dimensions;
  }

  async embed(text: string): Promise<number[]> {
    if (typeof text !== "string") {
      throw new ValidationError(
        `embed() takes one string (got ${describe(text)}); use embedBatch() for a list`,
        { param: "text" },
      );
    }
    const [vector] = await this.embedBatch([text]);
    return vector;
  }

  async embedBatch(texts: string[]): Promise<number[][]> {
    if (!Array.isArray(texts)) {
      throw new ValidationError(`embedBatch() takes a list of strings (got ${describe(texts)})`, {
        param: "texts",
      });
    }
    texts.forEach((t, i) => {
      if (typeof t !== "string") {
        throw new ValidationError(`input ${i} is ${describe(t)}, not a string`, { param: "texts" });
      }
    });
    if (texts.length === 0) return [];
    const chunks: string[][] = [];
    const size = this.chunkSize(texts.length);
    for (let i = 0; i < texts.length; i += size) chunks.push(texts.slice(i, i + size));
    const results: number[][][] = new Array(chunks.length);
    let next = 0;
    const worker = async () => {
      while (next < chunks.length) {
        const index = next++;
        results[index] = await this.embedChunk(chunks[index]);
      }
    };
    await Promise.all(
      Array.from({ length: Math.min(this.#concurrency, chunks.length) }, () => worker()),
    );
    const vectors = results.flat();
    if (vectors.length > 0) this.#dimensions = vectors[0].length;
    return vectors;
  }

  /** Texts per request for a batch of `total`; subclasses may refuse to split (late chunking). */
  protected chunkSize(_total: number): number {
    return this.#maxBatchSize;
  }

  /** Embeds one provider-sized chunk; returns exactly one vector per text, in order. */
  protected abstract embedChunk(texts: string[]): Promise<number[][]>;

  dispose(): Promise<void> {
    return Promise.resolve();
  }
}

/**
 * A local embedder whose vector of a text is a pure function of the text (hash, mockembedder):
 * no requests, so a batch is never split.
 */
export class LocalFunctionEmbedder extends BaseEmbedder {
  readonly #vectorOf: (text: string) => number[];

  constructor(
    method: EmbeddingMethod,
    model: string,
    dimensions: number,
    vectorOf: (text: string) => number[],
  ) {
    super(method, model, { dimensions, maxBatchSize: Number.MAX_SAFE_INTEGER });
    this.#vectorOf = vectorOf;
  }

  protected embedChunk(texts: string[]): Promise<number[][]> {
    return Promise.resolve(texts.map((text) => this.#vectorOf(text)));
  }
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  return typeof value === "string" ? "a string" : `a ${typeof value}`;
}

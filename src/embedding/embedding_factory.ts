/**
 * `EmbeddingFactory.createEmbedding(provider, modelName)`: embedding objects with `encode(text)`
 * and `encodeBatch(texts)` (spec `EmbeddingFactory.create_embedding`, `encode`, `encode_batch`).
 *
 * @module
 */

import { getEmbeddingModel } from "./get_embedding_model.ts";
import { EMBEDDING_METHODS } from "./_registry.ts";
import type { Embedder, EmbeddingMethod, EmbeddingModelOptions } from "./types.ts";

/** What {@link EmbeddingFactory.createEmbedding} returns. */
export interface EmbeddingModel {
  /** The provider method. */
  readonly provider: EmbeddingMethod;
  /** The model name. */
  readonly model: string;
  /** Vector size, when known (always after the first call). */
  readonly dimensions: number | undefined;
  /** One text to one vector. */
  encode(text: string): Promise<number[]>;
  /** Texts to vectors, in input order. */
  encodeBatch(texts: string[]): Promise<number[][]>;
  /** Releases a loaded local model. */
  dispose(): Promise<void>;
}

class FactoryEmbedding implements EmbeddingModel {
  readonly #embedder: Embedder;
  constructor(embedder: Embedder) {
    this.#embedder = embedder;
  }
  get provider(): EmbeddingMethod {
    return this.#embedder.method;
  }
  get model(): string {
    return this.#embedder.model;
  }
  get dimensions(): number | undefined {
    return this.#embedder.dimensions;
  }
  encode(text: string): Promise<number[]> {
    return this.#embedder.embed(text);
  }
  encodeBatch(texts: string[]): Promise<number[][]> {
    return this.#embedder.embedBatch(texts);
  }
  dispose(): Promise<void> {
    return this.#embedder.dispose();
  }
}

/**
 * Creates embedding objects by provider name.
 *
 * @example
 * ```ts
 * import { EmbeddingFactory } from "@svc/cli";
 * const embedding = EmbeddingFactory.createEmbedding("mockembedder", "mockembedder", { seed: 1 });
 * const vector = await embedding.encode("hello");
 * const vectors = await embedding.encodeBatch(["a", "b"]);
 * ```
 */
export class EmbeddingFactory {
  /**
   * An embedding object of `provider` (any method name or alias `getEmbeddingModel()` takes)
   * and `modelName` (empty or undefined: the provider's default). Same errors as
   * `getEmbeddingModel()`.
   */
  static createEmbedding(
    provider: string,
    modelName?: string,
    options: Omit<EmbeddingModelOptions, "model"> = {},
  ): EmbeddingModel {
    const model = modelName === undefined || modelName === "" ? undefined : modelName;
    return new FactoryEmbedding(getEmbeddingModel(provider, { ...options, model }));
  }

  /** The provider names the factory knows. */
  static providers(): EmbeddingMethod[] {
    return [...EMBEDDING_METHODS];
  }
}

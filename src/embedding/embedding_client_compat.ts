/**
 * `createEmbeddingClientCompat(impl)`: turns what legacy code has — a method name, an embedder,
 * a factory embedding object, a LangChain-style object or a plain function — into the client's
 * embedding shape, an {@link EmbeddingClientAdapter} (`embed(texts)` returns vectors).
 *
 * @module
 */

import { ValidationError } from "../core/errors.ts";
import { EmbeddingClientAdapter, type SingleTextEmbedder } from "./embedding_client_adapter.ts";
import { getEmbeddingModel } from "./get_embedding_model.ts";
import type { EmbeddingModelOptions } from "./types.ts";

/** Legacy embedding implementations {@link createEmbeddingClientCompat} accepts. */
export type LegacyEmbedding =
  | string
  | ((text: string) => number[] | Promise<number[]>)
  | EmbeddingClientAdapter
  | SingleTextEmbedder
  | {
    encode(text: string): number[] | Promise<number[]>;
    encodeBatch?(texts: string[]): number[][] | Promise<number[][]>;
  }
  | {
    embedQuery(text: string): number[] | Promise<number[]>;
    embedDocuments(texts: string[]): number[][] | Promise<number[][]>;
  }
  | { embed(texts: string[]): number[][] | Promise<number[][]> };

/** Options of {@link createEmbeddingClientCompat}. */
export interface EmbeddingCompatOptions extends EmbeddingModelOptions {
  /** The object's `embed` takes a LIST and returns a list (default false: one text). */
  batchInput?: boolean;
}

// deno-lint-ignore no-explicit-any
type Loose = Record<string, any>;

/**
 * Wraps `impl` as a batch embedding client. Rules, first match wins: a string is a method name
 * (`getEmbeddingModel(impl, options)`); an `EmbeddingClientAdapter` is returned as is; a function
 * embeds one text; an object with `encode` (factory objects) uses `encode`/`encodeBatch`; one with
 * `embedDocuments`/`embedQuery` uses those; one with `embed` takes one text unless
 * `options.batchInput` says it takes a list (an `embedBatch` method is used when present).
 *
 * @example
 * ```ts
 * import { createEmbeddingClientCompat } from "@svc/cli";
 * const legacy = (text: string) => [text.length, 1];
 * const client = createEmbeddingClientCompat(legacy);
 * console.log(await client.embed(["ab", "abc"])); // [[2, 1], [3, 1]]
 * ```
 */
export function createEmbeddingClientCompat(
  impl: LegacyEmbedding,
  options: EmbeddingCompatOptions = {},
): EmbeddingClientAdapter {
  if (typeof impl === "string") {
    const { batchInput: _ignored, ...modelOptions } = options;
    return new EmbeddingClientAdapter(getEmbeddingModel(impl, modelOptions));
  }
  if (impl instanceof EmbeddingClientAdapter) return impl;
  if (typeof impl === "function") return new EmbeddingClientAdapter({ embed: (t) => impl(t) });
  const o = impl as Loose | null;
  if (o !== null && typeof o === "object") {
    if (typeof o.encode === "function") {
      return new EmbeddingClientAdapter({
        embed: (t) => o.encode(t),
        embedBatch: typeof o.encodeBatch === "function" ? (ts) => o.encodeBatch(ts) : undefined,
        dimensions: o.dimensions,
        model: o.model,
      });
    }
    if (typeof o.embedDocuments === "function" && typeof o.embedQuery === "function") {
      return new EmbeddingClientAdapter({
        embed: (t) => o.embedQuery(t),
        embedBatch: (ts) => o.embedDocuments(ts),
      });
    }
    if (typeof o.embed === "function") {
      if (options.batchInput) {
        return new EmbeddingClientAdapter({
          embed: async (t) => (await o.embed([t]))[0],
          embedBatch: (ts) => o.embed(ts),
          dimensions: o.dimensions,
          model: o.model,
        });
      }
      return new EmbeddingClientAdapter(o as SingleTextEmbedder);
    }
  }
  throw new ValidationError(
    "createEmbeddingClientCompat() takes a method name, a function (text) => vector, or an " +
      "object with encode, embedQuery/embedDocuments or embed",
    { param: "impl" },
  );
}

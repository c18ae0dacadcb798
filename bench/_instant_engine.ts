/**
 * An engine that answers instantly, for measuring what the HTTP layer alone
 * costs: `embed` returns fixed vectors, `generate` yields one short delta and a finish. Used only
 * by the HTTP overhead benchmark; it is not a model.
 *
 * @module
 */

import type {
  EmbedEngine,
  EmbedResult,
  EngineHealth,
  GenerationEngine,
  GenerationEvent,
  GenerationStream,
  ModelInfo,
} from "../src/core/inference_types.ts";

/**
 * The instant engine of one kind (chat or embedding: it has both kinds' methods, and the server
 * calls those of its `info.kind`). Vectors have `dimensions` entries (384 by default, the size of
 * the benchmark embedding model, so the response body is as large as a real one).
 *
 * @example
 * ```ts
 * const engine = new InstantEngine("instant-embed", "embedding");
 * const { vectors } = await engine.embed(["hello"]);
 * ```
 */
export class InstantEngine implements GenerationEngine, EmbedEngine {
  readonly info: ModelInfo;
  #vector: Float32Array;

  constructor(id: string, kind: "chat" | "embedding", options: { dimensions?: number } = {}) {
    const dimensions = options.dimensions ?? 384;
    this.info = {
      id,
      kind,
      contextLength: 4096,
      dimensions: kind === "embedding" ? dimensions : undefined,
      created: Math.floor(Date.now() / 1000),
      ownedBy: "bench",
    };
    // A unit vector with varied digits, so JSON encoding costs what a real vector costs.
    this.#vector = Float32Array.from({ length: dimensions }, (_, i) => Math.sin(i + 1) / 14);
  }

  health(): EngineHealth {
    return { state: "ready" };
  }

  generate(): Promise<GenerationStream> {
    const events: GenerationEvent[] = [
      { type: "delta", text: "ok" },
      { type: "finish", finishReason: "stop", usage: { promptTokens: 1, completionTokens: 1 } },
    ];
    return Promise.resolve({
      promptTokens: 1,
      async *[Symbol.asyncIterator]() {
        yield* events;
      },
    });
  }

  generateAll(jobs: readonly unknown[]): Promise<GenerationStream[]> {
    return Promise.all(jobs.map(() => this.generate()));
  }

  embed(inputs: (string | number[])[]): Promise<EmbedResult> {
    return Promise.resolve({
      vectors: inputs.map(() => this.#vector.slice()),
      promptTokens: inputs.length,
    });
  }

  countTokens(text: string): number {
    return text.split(/\s+/).length;
  }

  dispose(): Promise<void> {
    return Promise.resolve();
  }
}

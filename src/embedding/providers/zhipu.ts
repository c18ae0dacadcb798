/**
 * `zhipu`: Zhipu AI (BigModel) embeddings, Chinese-optimized. `POST {baseUrl}/embeddings` with
 * `{model, input: [texts], dimensions?}` and `Authorization: Bearer ZHIPUAI_API_KEY`; answer
 * `{data: [{index, embedding}], usage}`. embedding-3 takes at most 64 inputs per request and
 * shortens to 256/512/1024/2048 dimensions.
 *
 * @module
 */

import type { BaseEmbedderOptions, Embedder, EmbeddingMethodInfo } from "../types.ts";
import { createKeyedOpenAiStyleEmbedder } from "./openai.ts";

/** Static facts of the `zhipu` method. */
export const ZHIPU_PROVIDER: EmbeddingMethodInfo = Object.freeze({
  method: "zhipu",
  description: "Zhipu AI BigModel embeddings (Chinese-optimized)",
  models: [
    { name: "embedding-3", dimensions: 2048, supportedDimensions: [256, 512, 1024, 2048] },
    { name: "embedding-2", dimensions: 1024 },
  ],
  defaultModel: "embedding-3",
  defaultDimensions: 2048,
  needsKey: true,
  envVariable: "ZHIPUAI_API_KEY",
  envVariables: ["ZHIPUAI_API_KEY"],
  defaultBaseUrl: "https://open.bigmodel.cn/api/paas/v4",
  local: false,
});

/**
 * Creates a `zhipu` embedder.
 *
 * @example
 * ```ts
 * import { createZhipuEmbedder } from "./zhipu.ts";
 * const embedder = createZhipuEmbedder({ apiKey: "your-key", dimensions: 512 });
 * const vector = await embedder.embed("你好");
 * ```
 */
export function createZhipuEmbedder(options: BaseEmbedderOptions = {}): Embedder {
  return createKeyedOpenAiStyleEmbedder(ZHIPU_PROVIDER, options, {
    provider: "Zhipu AI",
    maxBatchSize: 64,
    encodingFormat: false,
  });
}

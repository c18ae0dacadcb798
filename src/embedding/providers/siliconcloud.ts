/**
 * `siliconcloud`: SiliconFlow (SiliconCloud), reachable from mainland China. OpenAI-compatible
 * `POST https://api.siliconflow.cn/v1/embeddings` with `{model, input, encoding_format:
 * "float", dimensions?}` and `Authorization: Bearer SILICONFLOW_API_KEY`.
 *
 * @module
 */

import type { BaseEmbedderOptions, Embedder, EmbeddingMethodInfo } from "../types.ts";
import { createKeyedOpenAiStyleEmbedder } from "./openai.ts";

/** Static facts of the `siliconcloud` method. */
export const SILICONCLOUD_PROVIDER: EmbeddingMethodInfo = Object.freeze({
  method: "siliconcloud",
  description: "SiliconFlow (SiliconCloud) embeddings, OpenAI-compatible, China-accessible",
  models: [
    { name: "BAAI/bge-m3", dimensions: 1024 },
    { name: "BAAI/bge-large-zh-v1.5", dimensions: 1024 },
    { name: "BAAI/bge-large-en-v1.5", dimensions: 1024 },
    { name: "netease-youdao/bce-embedding-base_v1", dimensions: 768 },
    { name: "Qwen/Qwen3-Embedding-0.6B", dimensions: 1024 },
    { name: "Qwen/Qwen3-Embedding-8B", dimensions: 4096 },
  ],
  defaultModel: "BAAI/bge-m3",
  defaultDimensions: 1024,
  needsKey: true,
  envVariable: "SILICONFLOW_API_KEY",
  envVariables: ["SILICONFLOW_API_KEY"],
  defaultBaseUrl: "https://api.siliconflow.cn/v1",
  local: false,
});

/**
 * Creates a `siliconcloud` embedder.
 *
 * @example
 * ```ts
 * import { createSiliconCloudEmbedder } from "./siliconcloud.ts";
 * const embedder = createSiliconCloudEmbedder({ apiKey: "sk-...", model: "BAAI/bge-m3" });
 * const vector = await embedder.embed("hello");
 * ```
 */
export function createSiliconCloudEmbedder(options: BaseEmbedderOptions = {}): Embedder {
  return createKeyedOpenAiStyleEmbedder(SILICONCLOUD_PROVIDER, options, {
    provider: "SiliconFlow",
    maxBatchSize: 32,
  });
}

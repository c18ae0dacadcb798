/**
 * `siliconcloud`: SiliconFlow (SiliconCloud), reachable from mainland China. OpenAI-compatible
 * `POST https://api.siliconflow.cn/v1/embeddings` with `{model, input, encoding_format:
 * "float", dimensions?}` and `Authorization: Bearer SILICONFLOW_API_KEY`.
 *
 * @module
 */

import { requireKey } from "../_settings.ts";
import type { BaseEmbedderOptions, Embedder, EmbeddingMethodInfo } from "../types.ts";
import { checkDimensions, knownDimensions } from "./_catalog_util.ts";
import { OpenAiStyleEmbedder } from "./openai.ts";

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
  const model = options.model ?? SILICONCLOUD_PROVIDER.defaultModel;
  return new OpenAiStyleEmbedder({
    method: "siliconcloud",
    provider: "SiliconFlow",
    model,
    baseUrl: options.baseUrl ?? SILICONCLOUD_PROVIDER.defaultBaseUrl!,
    apiKey: requireKey(options.apiKey, "SILICONFLOW_API_KEY", {
      provider: "SiliconFlow",
      env: options.env,
    }),
    keyVariable: "SILICONFLOW_API_KEY",
    dimensions: checkDimensions(options.dimensions),
    knownDimensions: knownDimensions(SILICONCLOUD_PROVIDER, model),
    maxBatchSize: options.maxBatchSize ?? 32,
    timeoutMs: options.timeoutMs,
    fetch: options.fetch,
  });
}

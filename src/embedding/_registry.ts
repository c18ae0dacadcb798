/**
 * The table of embedding methods: static facts and constructor of each provider, plus the
 * accepted aliases.
 *
 * @module
 */

import { ValidationError } from "../core/errors.ts";
import { BEDROCK_PROVIDER, createBedrockEmbedder } from "./providers/bedrock.ts";
import { COHERE_PROVIDER, createCohereEmbedder } from "./providers/cohere.ts";
import { createHashEmbedder, HASH_PROVIDER } from "./providers/hash.ts";
import { createHfEmbedder, HF_PROVIDER } from "./providers/hf.ts";
import { createJinaEmbedder, JINA_PROVIDER } from "./providers/jina.ts";
import { createMockEmbedder, MOCK_PROVIDER } from "./providers/mockembedder.ts";
import { createOllamaEmbedder, OLLAMA_PROVIDER } from "./providers/ollama.ts";
import { createOpenAiEmbedder, OPENAI_PROVIDER } from "./providers/openai.ts";
import { createSiliconCloudEmbedder, SILICONCLOUD_PROVIDER } from "./providers/siliconcloud.ts";
import { createZhipuEmbedder, ZHIPU_PROVIDER } from "./providers/zhipu.ts";
import type {
  Embedder,
  EmbeddingMethod,
  EmbeddingMethodInfo,
  EmbeddingModelOptions,
} from "./types.ts";

interface ProviderEntry {
  info: EmbeddingMethodInfo;
  create: (options: EmbeddingModelOptions) => Embedder;
}

/** Every provider, in the order `listEmbeddingModels()` reports them. */
export const PROVIDERS: Readonly<Record<EmbeddingMethod, ProviderEntry>> = Object.freeze({
  hf: { info: HF_PROVIDER, create: createHfEmbedder },
  openai: { info: OPENAI_PROVIDER, create: createOpenAiEmbedder },
  jina: { info: JINA_PROVIDER, create: createJinaEmbedder },
  zhipu: { info: ZHIPU_PROVIDER, create: createZhipuEmbedder },
  cohere: { info: COHERE_PROVIDER, create: createCohereEmbedder },
  bedrock: { info: BEDROCK_PROVIDER, create: createBedrockEmbedder },
  ollama: { info: OLLAMA_PROVIDER, create: createOllamaEmbedder },
  siliconcloud: { info: SILICONCLOUD_PROVIDER, create: createSiliconCloudEmbedder },
  hash: { info: HASH_PROVIDER, create: createHashEmbedder },
  mockembedder: { info: MOCK_PROVIDER, create: createMockEmbedder },
});

/** The method names, in table order. */
export const EMBEDDING_METHODS: readonly EmbeddingMethod[] = Object.freeze(
  Object.keys(PROVIDERS) as EmbeddingMethod[],
);

/** Other spellings accepted for a method (matched case-insensitively, like the names). */
export const EMBEDDING_METHOD_ALIASES: Readonly<Record<string, EmbeddingMethod>> = Object.freeze({
  huggingface: "hf",
  "openai-compatible": "openai",
  compat: "openai",
  siliconflow: "siliconcloud",
  mock: "mockembedder",
});

/**
 * The method a name stands for, or a `ValidationError` (an argument is wrong, not the setup)
 * listing the known methods.
 *
 * @example
 * ```ts
 * import { resolveEmbeddingMethod } from "./_registry.ts";
 * resolveEmbeddingMethod("SiliconFlow"); // "siliconcloud"
 * ```
 */
export function resolveEmbeddingMethod(name: string): EmbeddingMethod {
  const key = typeof name === "string" ? name.trim().toLowerCase() : "";
  if (key in PROVIDERS) return key as EmbeddingMethod;
  const alias = EMBEDDING_METHOD_ALIASES[key];
  if (alias !== undefined) return alias;
  throw new ValidationError(
    `unknown embedding method ${JSON.stringify(name)}: use one of ${EMBEDDING_METHODS.join(", ")}`,
    { param: "method", code: "unknown_embedding_method" },
  );
}

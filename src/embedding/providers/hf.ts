/**
 * `hf`: hub models run locally on our engine (transformers.js). The model is a hub id
 * (`org/name`, downloaded into the cache on first use), a local folder, or a demo model
 * (`demo/embed`, `demo/embed-bench`: generated, RANDOM weights). The engine is loaded on the first
 * call and kept until `dispose()`. Hub settings come from the options, else HUB_ENDPOINT,
 * HUB_TOKEN and SVC_OFFLINE; the cache defaults to the `hub` output folder.
 *
 * The engine module is imported on first use, so importing the embedding library does not load
 * transformers.js.
 *
 * @module
 */

import { parseBooleanWord } from "../../config/env_vars.ts";
import { getOutputDir } from "../../config/output_paths.ts";
import { DEMO_MODEL_SPECS } from "../../engine/generated_models/demo_models.ts";
import type { EmbedEngine } from "../../core/inference_types.ts";
import { importLazily } from "../../core/lazy_module.ts";
import { BaseEmbedder } from "../_base_embedder.ts";
import { resolveSetting } from "../_settings.ts";
import type {
  BaseEmbedderOptions,
  Embedder,
  EmbeddingMethodInfo,
  HfEngineFactory,
  HfEngineOptions,
  HfOptions,
} from "../types.ts";
import { checkDimensions, knownDimensions } from "./_catalog_util.ts";

/** Output sub-folder used as the model cache when no `cacheDir` is given. */
export const HF_DEFAULT_CACHE_SUBDIR = "hub";

/** Static facts of the `hf` method. */
export const HF_PROVIDER: EmbeddingMethodInfo = Object.freeze({
  method: "hf",
  description: "Hub models run locally on the Svc engine (transformers.js / ONNX Runtime)",
  models: [
    { name: "Xenova/all-MiniLM-L6-v2", dimensions: 384 },
    { name: "Xenova/bge-small-en-v1.5", dimensions: 384 },
    { name: "Xenova/bge-base-en-v1.5", dimensions: 768 },
    { name: "Xenova/multilingual-e5-small", dimensions: 384 },
    { name: "Xenova/paraphrase-multilingual-MiniLM-L12-v2", dimensions: 384 },
    { name: "demo/embed", dimensions: DEMO_MODEL_SPECS["demo/embed"].spec.hiddenSize },
    { name: "demo/embed-bench", dimensions: DEMO_MODEL_SPECS["demo/embed-bench"].spec.hiddenSize },
  ],
  defaultModel: "Xenova/all-MiniLM-L6-v2",
  defaultDimensions: 384,
  needsKey: false,
  envVariable: null,
  envVariables: ["HUB_ENDPOINT", "HUB_TOKEN", "SVC_OFFLINE", "SVC_HOME"],
  defaultBaseUrl: "https://huggingface.co",
  local: true,
});

/** Options of {@link createHfEmbedder}. */
export type HfEmbedderOptions = BaseEmbedderOptions & HfOptions;

class HfEmbedder extends BaseEmbedder {
  readonly #options: HfEmbedderOptions;
  readonly #requested: number | undefined;
  #engine: Promise<EmbedEngine> | null = null;

  constructor(model: string, options: HfEmbedderOptions) {
    const requested = checkDimensions(options.dimensions);
    super("hf", model, {
      dimensions: requested ?? knownDimensions(HF_PROVIDER, model),
      maxBatchSize: options.maxBatchSize ?? 64,
    });
    this.#options = options;
    this.#requested = requested;
  }

  #load(): Promise<EmbedEngine> {
    if (this.#engine === null) {
      this.#engine = this.#create();
      // A failed load is not cached: the next call tries again (e.g. after a download fix).
      this.#engine.catch(() => {
        this.#engine = null;
      });
    }
    return this.#engine;
  }

  async #create(): Promise<EmbedEngine> {
    const o = this.#options;
    const env = o.env;
    const offline = o.offline ??
      parseBooleanWord(resolveSetting(undefined, "SVC_OFFLINE", env) ?? "") ?? false;
    const engineOptions: HfEngineOptions = {
      kind: "embedding",
      id: this.model,
      cacheDir: o.cacheDir ?? getOutputDir(HF_DEFAULT_CACHE_SUBDIR, { env }),
      offline,
      hubEndpoint: resolveSetting(o.hubEndpoint, "HUB_ENDPOINT", env),
      hubToken: resolveSetting(o.hubToken, "HUB_TOKEN", env),
      revision: o.revision,
      device: o.device,
      dtype: o.dtype,
    };
    // Lazily, to keep the engine out of the embedding library's module graph (lazy_module.ts);
    // tests/embedding checks that createEngine fits HfEngineFactory.
    const factory = o.engineFactory ??
      (await importLazily<{ createEngine: HfEngineFactory }>(
        new URL("../../engine/create_engine.ts", import.meta.url),
      )).createEngine;
    return await factory(this.model, engineOptions);
  }

  protected async embedChunk(texts: string[]): Promise<number[][]> {
    const engine = await this.#load();
    const result = await engine.embed(texts, { dimensions: this.#requested });
    return result.vectors.map((v) => Array.from(v));
  }

  override async dispose(): Promise<void> {
    const engine = this.#engine;
    this.#engine = null;
    if (engine !== null) await (await engine.catch(() => null))?.dispose();
  }
}

/**
 * Creates an `hf` embedder; the model loads on the first `embed`/`embedBatch` call.
 *
 * @example
 * ```ts
 * import { createHfEmbedder } from "./hf.ts";
 * const embedder = createHfEmbedder({ model: "demo/embed", cacheDir: "/tmp/svc-cache" });
 * const vector = await embedder.embed("hello"); // random-weight demo model
 * await embedder.dispose();
 * ```
 */
export function createHfEmbedder(options: HfEmbedderOptions = {}): Embedder {
  return new HfEmbedder(options.model ?? HF_PROVIDER.defaultModel, options);
}

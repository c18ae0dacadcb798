/**
 * An engine that is still loading. Servers start listening at once and answer `/health` with 503
 * (and requests with 503 + Retry-After) until the model is ready.
 *
 * @module
 */

import { errorMessage, ServiceUnavailableError, ValidationError } from "../core/errors.ts";
import { engineOfKind, modelKindError } from "../core/model_kind.ts";
import { promptTokenCounts, scorePrompts } from "./score_prompts.ts";
import type {
  EmbedEngine,
  EmbedResult,
  EngineEmbedOptions,
  EngineHealth,
  EngineOfKind,
  EngineRerankOptions,
  EngineTokenizeResult,
  GenerationEngine,
  GenerationJob,
  GenerationStream,
  ModelInfo,
  ModelKind,
  PromptInput,
  PromptScoringOptions,
  PromptTokenLogprob,
  RerankerEngine,
  RerankResult,
  SamplingParams,
  TokenizeInput,
} from "../core/inference_types.ts";

/**
 * Stands in for an engine of kind `K` until `loading` resolves, then forwards every call to it.
 * Its kind is known from the start, so it has the methods of every kind and those of another
 * kind fail with the same `invalid_model_kind` error as the engine registry's.
 */
export class DeferredEngine<K extends ModelKind = ModelKind>
  implements GenerationEngine, EmbedEngine, RerankerEngine {
  /** Resolves with the engine once loaded; rejects when loading fails. */
  readonly ready: Promise<EngineOfKind<K>>;
  #engine: EngineOfKind<K> | undefined;
  #error: string | undefined;
  #placeholder: ModelInfo;

  /** An engine that answers `loading` until `loading` settles. */
  constructor(id: string, kind: K, loading: Promise<EngineOfKind<K>>) {
    this.#placeholder = {
      id,
      kind,
      contextLength: 0,
      created: Math.floor(Date.now() / 1000),
      ownedBy: "svc",
    };
    this.ready = loading.then(
      (engine) => (this.#engine = engine),
      (err) => {
        this.#error = errorMessage(err);
        throw err;
      },
    );
    // The failure is reported through health() and `ready`; nobody has to await it.
    this.ready.catch(() => {});
  }

  /** The loaded engine's info; until then, the id and kind it was started with. */
  get info(): ModelInfo {
    return this.#engine?.info ?? this.#placeholder;
  }

  /** Loading, ready, or the loading error. */
  health(): EngineHealth {
    if (this.#engine) return this.#engine.health();
    return this.#error ? { state: "error", message: this.#error } : { state: "loading" };
  }

  /** The loaded engine's statistics, when it has any. */
  stats(): unknown {
    return (this.#engine as { stats?: () => unknown } | undefined)?.stats?.() ?? {};
  }

  async generate(
    input: PromptInput,
    params: SamplingParams,
    signal?: AbortSignal,
  ): Promise<GenerationStream> {
    return await this.#loadedAs("chat").generate(input, params, signal);
  }

  async generateAll(
    jobs: readonly GenerationJob[],
    signal?: AbortSignal,
  ): Promise<GenerationStream[]> {
    return await this.#loadedAs("chat").generateAll(jobs, signal);
  }

  async promptLogprobs(
    inputs: readonly PromptInput[],
    options: PromptScoringOptions,
  ): Promise<PromptTokenLogprob[][]> {
    return await scorePrompts(this.#loadedAs("chat"), inputs, options);
  }

  async checkPrompts(
    inputs: readonly PromptInput[],
    options: { choices?: number } = {},
  ): Promise<number[]> {
    return await promptTokenCounts(this.#loadedAs("chat"), inputs, options);
  }

  async embed(inputs: (string | number[])[], options?: EngineEmbedOptions): Promise<EmbedResult> {
    return await this.#loadedAs("embedding").embed(inputs, options);
  }

  countTokens(text: string): number {
    return this.#loaded().countTokens(text);
  }

  async tokenize(
    input: TokenizeInput,
    options?: { tokenStrs?: boolean },
  ): Promise<EngineTokenizeResult> {
    const engine = this.#loaded();
    if (!engine.tokenize) throw noTokenizer(engine.info.id);
    return await engine.tokenize(input, options);
  }

  async detokenize(ids: number[]): Promise<string> {
    const engine = this.#loaded();
    if (!engine.detokenize) throw noTokenizer(engine.info.id);
    return await engine.detokenize(ids);
  }

  async rerank(
    query: string,
    documents: string[],
    options?: EngineRerankOptions,
  ): Promise<RerankResult> {
    return await this.#loadedAs("rerank").rerank(query, documents, options);
  }

  /** Frees the engine once it has loaded. */
  async dispose(): Promise<void> {
    const engine = await this.ready.catch(() => undefined);
    await engine?.dispose();
  }

  /** The loaded engine as kind `kind`: the wrong kind fails the same way loaded or not. */
  #loadedAs<W extends ModelKind>(kind: W): EngineOfKind<W> {
    if (this.info.kind !== kind) throw modelKindError(this.info, kind);
    return engineOfKind(this.#loaded(), kind);
  }

  #loaded(): EngineOfKind<K> {
    if (this.#engine) return this.#engine;
    throw new ServiceUnavailableError(
      `model '${this.#placeholder.id}' is still loading; retry shortly`,
      {
        code: "model_loading",
        retryAfterSeconds: 5,
      },
    );
  }
}

function noTokenizer(id: string): ValidationError {
  return new ValidationError(`model '${id}' has no tokenizer to use`, { param: "model" });
}

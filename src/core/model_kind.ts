/**
 * The one model-kind vocabulary and its one translation. Engines, the protocol and the management
 * API say what a model does with {@link ModelKind} (`chat`, `embedding`, `rerank`); the gateway's
 * backend config files say which engine serves it with {@link BackendKind} (`llm`, `embedding`),
 * the word users write in `backends.json` and `svc llm …`. Only {@link backendKindOf} and
 * {@link engineKindOf} translate between them. Here too: the one check of an engine's kind
 * ({@link engineOfKind}) and the one error for a model of the wrong kind ({@link modelKindError},
 * a 400 `invalid_model_kind` on `model`), raised by the engine registry when a request names a
 * model of another kind and by a loading engine's stand-in (`DeferredEngine`) alike.
 *
 * @module
 */
import { ValidationError } from "./errors.ts";
import type { EngineOfKind, InferenceEngine, ModelKind } from "./inference_types.ts";

/**
 * The kind of an engine process or backend: rerankers run in embedding engines, so this is
 * {@link ModelKind} without `rerank`.
 */
export type EngineKind = Exclude<ModelKind, "rerank">;

/** A backend's kind as backend config files write it: text generation (`llm`) or `embedding`. */
export type BackendKind = "llm" | "embedding";

/**
 * The backend kind that serves a model kind: `llm` for chat, `embedding` for embeddings and rerank.
 *
 * @example
 * ```ts
 * import { backendKindOf } from "./model_kind.ts";
 * backendKindOf("chat"); // "llm"
 * backendKindOf("rerank"); // "embedding"
 * ```
 */
export function backendKindOf(kind: ModelKind): BackendKind {
  return kind === "chat" ? "llm" : "embedding";
}

/**
 * The engine kind a backend kind runs: `chat` for `llm`, else `embedding`.
 *
 * @example
 * ```ts
 * import { engineKindOf } from "./model_kind.ts";
 * engineKindOf("llm"); // "chat"
 * ```
 */
export function engineKindOf(kind: BackendKind): EngineKind {
  return kind === "llm" ? "chat" : "embedding";
}

/**
 * Reads a kind a user or a server wrote: a {@link ModelKind}, or `llm` for `chat`; undefined for
 * anything else.
 *
 * @example
 * ```ts
 * import { parseModelKind } from "./model_kind.ts";
 * parseModelKind("llm"); // "chat"
 * parseModelKind("vision"); // undefined
 * ```
 */
export function parseModelKind(word: unknown): ModelKind | undefined {
  if (word === "chat" || word === "embedding" || word === "rerank") return word;
  return word === "llm" ? "chat" : undefined;
}

/** How error messages name each kind of model and the endpoint it serves. */
const KIND_WORDS: Readonly<Record<ModelKind, { what: string; use: string }>> = {
  chat: { what: "a chat model", use: "/v1/chat/completions" },
  embedding: { what: "an embedding model", use: "/v1/embeddings" },
  rerank: { what: "a reranker (cross-encoder) model", use: "/v1/rerank" },
};

/**
 * The error for a model (its `id` as the request named it, and its `kind`) asked to do the work of
 * kind `wanted`: a `ValidationError` (HTTP 400) with code `invalid_model_kind` and param `model`.
 *
 * @example
 * ```ts
 * import { modelKindError } from "./model_kind.ts";
 * const err = modelKindError({ id: "demo/embed", kind: "embedding" }, "chat");
 * console.log(err.code); // "invalid_model_kind"
 * ```
 */
export function modelKindError(
  model: { id: string; kind: ModelKind },
  wanted: ModelKind,
): ValidationError {
  const { what, use } = KIND_WORDS[model.kind];
  return new ValidationError(
    `The model '${model.id}' is ${what} and cannot serve this endpoint; call ${use} with it, ` +
      `or pick ${KIND_WORDS[wanted].what}.`,
    { code: "invalid_model_kind", param: "model" },
  );
}

/**
 * Whether `engine` is of kind `kind` (by its `info.kind`), narrowing it to that kind's interface.
 *
 * @example
 * ```ts
 * import { isEngineOfKind } from "@svc/cli/engine";
 * import type { InferenceEngine } from "@svc/cli/engine";
 * function dimensionsOf(engine: InferenceEngine): number | undefined {
 *   return isEngineOfKind(engine, "embedding") ? engine.info.dimensions : undefined;
 * }
 * ```
 */
export function isEngineOfKind<K extends ModelKind>(
  engine: InferenceEngine,
  kind: K,
): engine is EngineOfKind<K> {
  return engine.info.kind === kind;
}

/**
 * `engine` as the interface of `kind`, or the {@link modelKindError} when it is of another kind.
 * `options.model` is the name the request used for it, shown in the error (default: its id).
 *
 * @example
 * ```ts
 * import { engineOfKind } from "@svc/cli/engine";
 * import type { InferenceEngine } from "@svc/cli/engine";
 * async function vectorsOf(engine: InferenceEngine, texts: string[]): Promise<Float32Array[]> {
 *   return (await engineOfKind(engine, "embedding").embed(texts)).vectors;
 * }
 * ```
 */
export function engineOfKind<K extends ModelKind>(
  engine: InferenceEngine,
  kind: K,
  options: { model?: string } = {},
): EngineOfKind<K> {
  if (isEngineOfKind(engine, kind)) return engine;
  throw modelKindError({ id: options.model ?? engine.info.id, kind: engine.info.kind }, kind);
}

/**
 * The one model-kind vocabulary and its one translation. Engines, the protocol and the management
 * API say what a model does with {@link ModelKind} (`chat`, `embedding`, `rerank`); the gateway's
 * backend config files say which engine serves it with {@link BackendKind} (`llm`, `embedding`),
 * the word users write in `backends.json` and `svc llm …`. Only {@link backendKindOf} and
 * {@link engineKindOf} translate between them.
 *
 * @module
 */
import type { ModelKind } from "./inference_types.ts";

export type { ModelKind };

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

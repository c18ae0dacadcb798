/**
 * Which models the gateway serves or expects, with their state: `ready` (a backend not known to
 * be down serves it), `loading` (an engine for it is starting or restarting) or `failed` (its
 * engine could not start). `GET /v1/models` lists them all from the gateway's first moment, and a
 * request for a model still loading waits for it, up to a bound, instead of a 404.
 *
 * @module
 */
import { CancelledError, ServiceUnavailableError } from "../../core/errors.ts";
import type { Dispatcher } from "../dispatcher.ts";
import type { EngineView } from "./engine_types.ts";
import type { ModelKind } from "../../core/inference_types.ts";
import { backendKindOf, type EngineKind, engineKindOf } from "../../core/model_kind.ts";
import { sleep } from "../../core/sleep.ts";

/** State of a model at the gateway. */
export type ModelStatus = "ready" | "loading" | "failed";

/** A model the gateway serves or expects. */
export interface ModelState {
  id: string;
  /** The kind of engine that serves it. */
  kind: EngineKind;
  /** What it does: its engine's kind, or `rerank` for a reranker an embedding engine serves. */
  modelKind: ModelKind;
  status: ModelStatus;
  /** Why it failed, or what its engine is doing; null when ready. */
  message: string | null;
  /** Ids of the backends that serve it now. */
  backends: string[];
  /** When its engine was registered or started (else its backend added), seconds since epoch. */
  created: number;
  /** A started engine serves it with random weights (a demo model). */
  randomWeights: boolean;
}

/** Where the states come from: the dispatcher's backends and the started engines. */
export interface ModelSources {
  dispatcher: Dispatcher;
  /** The engine manager's list; none when the gateway starts no engines. */
  engines?: () => readonly EngineView[];
}

/** Default of how long a request for a model still loading waits for it. */
export const DEFAULT_LOAD_WAIT_MS = 30_000;

/**
 * The served models (ready), then the models of engines that are starting (loading) or failed.
 *
 * @example
 * ```ts
 * import { Dispatcher } from "@svc/cli/gateway";
 * import { modelStates } from "./model_states.ts";
 * modelStates({ dispatcher: new Dispatcher() }); // []
 * ```
 */
export function modelStates(sources: ModelSources): ModelState[] {
  const out = new Map<string, ModelState>();
  const engines = sources.engines?.() ?? [];
  for (const m of sources.dispatcher.models()) {
    const kind = engineKindOf(m.kind);
    // A backend of a started or registered engine has the engine's id.
    const serving = engines.filter((e) => m.backends.includes(e.id));
    // What the backends' own listings said (a Svc server behind it), of the name each is sent.
    const facts = m.backends.map((id) => {
      const b = sources.dispatcher.backend(id);
      return b && { facts: b.modelFacts, name: b.upstreamModel(m.id) ?? m.id };
    });
    const reranks = serving.some((e) => e.rerankers.includes(m.id)) ||
      facts.some((f) => f?.facts.rerankers.includes(f.name));
    out.set(`${kind}\u0000${m.id}`, {
      id: m.id,
      kind,
      modelKind: reranks ? "rerank" : kind,
      status: "ready",
      message: null,
      backends: m.backends,
      created: Math.min(
        ...(serving.length > 0
          ? serving.map((e) => e.createdAt)
          : m.backends.map((id) => sources.dispatcher.backend(id)!.createdAt)),
      ),
      randomWeights: serving.some((e) => e.origin === "managed" && e.randomWeights) ||
        facts.some((f) => f?.facts.randomWeights.includes(f.name)),
    });
  }
  // Loading before failed: a model that one engine failed to load and another is loading is
  // loading.
  for (const wanted of ["starting", "error"] as const) {
    for (const e of engines) {
      if (e.state !== wanted) continue;
      for (const id of e.models) {
        const key = `${e.kind}\u0000${id}`;
        if (out.has(key)) continue;
        out.set(key, {
          id,
          kind: e.kind,
          modelKind: e.rerankers.includes(id) ? "rerank" : e.kind,
          status: wanted === "starting" ? "loading" : "failed",
          message: e.message ?? (wanted === "starting" ? "its engine is starting" : null),
          backends: [],
          created: e.createdAt,
          randomWeights: e.randomWeights,
        });
      }
    }
  }
  return [...out.values()];
}

/**
 * Resolves once `model` is not loading (ready, or unknown: the dispatcher then answers for it).
 * An unknown model counts as loading while it may be the default model of a started engine that
 * has not listed its models yet: one of `kind` started without a model, or for `reranker` requests
 * one loading the default reranker. Throws a 503 ServiceUnavailableError `model_load_failed` when
 * its engine failed, or `model_loading` with Retry-After when it is still loading after
 * `timeoutMs` (default {@link DEFAULT_LOAD_WAIT_MS}); a CancelledError when `signal` aborts.
 *
 * @example
 * ```ts
 * import { Dispatcher } from "@svc/cli/gateway";
 * import { waitWhileLoading } from "./model_states.ts";
 * await waitWhileLoading({ dispatcher: new Dispatcher() }, { model: "demo/chat", kind: "chat" });
 * ```
 */
export async function waitWhileLoading(
  sources: ModelSources,
  request: {
    model: string;
    kind: ModelState["kind"];
    /** A rerank request (served by embedding engines). */
    reranker?: boolean;
    timeoutMs?: number;
    signal?: AbortSignal;
  },
): Promise<void> {
  // The common case costs no list: no started engines, or a backend serves the model now.
  if (sources.engines === undefined || servedNow(sources.dispatcher, request)) return;
  const timeoutMs = request.timeoutMs ?? DEFAULT_LOAD_WAIT_MS;
  const deadline = Date.now() + timeoutMs;
  while (true) {
    const state = modelStates(sources).find((m) =>
      m.id === request.model && m.kind === request.kind
    );
    if (state?.status === "ready") return;
    if (state === undefined && !mayBeDefault(sources.engines(), request)) return;
    const shown = request.model.slice(0, 200);
    if (state?.status === "failed") {
      throw new ServiceUnavailableError(
        `The model '${shown}' failed to load: ${state.message ?? "see the gateway's log"}. ` +
          "Fix the cause and start its engine again.",
        { code: "model_load_failed", retryAfterSeconds: 30 },
      );
    }
    if (Date.now() >= deadline) {
      const pending = request.reranker ? "reranker" : "model";
      const what = state !== undefined
        ? "is still loading"
        : `may be the default ${pending} of an engine still loading`;
      throw new ServiceUnavailableError(
        `The model '${shown}' ${what} (waited ${timeoutMs} ms); retry shortly.`,
        { code: "model_loading", retryAfterSeconds: 5 },
      );
    }
    await sleep(Math.min(100, deadline - Date.now()), request.signal);
    if (request.signal?.aborted) {
      throw new CancelledError("the request was cancelled while its model loaded");
    }
  }
}

// Whether an unknown model may be the default model (or reranker) of a started engine still
// loading, which has not said its id yet.
function mayBeDefault(
  engines: readonly EngineView[],
  request: { kind: EngineKind; reranker?: boolean },
): boolean {
  return engines.some((e) =>
    e.origin === "managed" && e.state === "starting" &&
    (request.reranker
      ? e.loadsDefaultReranker === true
      : e.kind === request.kind && e.model === null && e.models.length === 0)
  );
}

function servedNow(dispatcher: Dispatcher, request: { model: string; kind: EngineKind }): boolean {
  const kind = backendKindOf(request.kind);
  return dispatcher.backends().some((b) =>
    b.kind === kind && b.health !== "unhealthy" && !b.draining &&
    b.upstreamModel(request.model) !== undefined
  );
}

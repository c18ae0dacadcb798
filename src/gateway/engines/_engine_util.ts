/**
 * Helpers of the engine manager: engine records and their views, port choice, state mapping,
 * kind guessing, drain waiting, model discovery.
 *
 * @module
 */
import { ConflictError, errorMessage, ServiceError, ValidationError } from "../../core/errors.ts";
import { getFreePort } from "../../core/network.ts";
import { SvcPorts } from "../../config/ports.ts";
import { type Backend, type ModelFacts, modelFactsOf } from "../backend.ts";
import type { BackendInstanceConfig } from "../backend_config.ts";
import { connectHost } from "./engine_command.ts";
import type { StoredEngine, StoredRemoteEngine } from "./engine_store.ts";
import type { SupervisorState } from "./engine_supervisor.ts";
import type { EngineRunner } from "./engine_runner.ts";
import type { EngineKind } from "../../core/model_kind.ts";
import type { EngineOrigin, EnginePlacement, EngineState, EngineView } from "./engine_types.ts";
import { engineKindOf } from "../../core/model_kind.ts";

/** An engine as the manager tracks it. */
export interface EngineRecord {
  id: string;
  origin: EngineOrigin;
  kind: EngineKind;
  model: string | null;
  createdAt: number;
  port: number | null;
  device: string | null;
  /** Where a started engine runs (default `process`). */
  placement?: EnginePlacement;
  /** A started engine: its process supervisor, or the engine in the gateway. */
  supervisor?: EngineRunner;
  backend?: Backend;
  stored?: StoredEngine;
  draining: boolean;
  stopped: boolean;
  stopping?: Promise<EngineView>;
  /** Stopped by request, but saving the store without it failed: it is still listed there. */
  unsaved?: boolean;
}

const EMBEDDING_NAME = /^demo\/embed|embed|minilm|mpnet|bge|e5-|gte|sentence|nomic|jina/i;

/** How a supervisor's state shows in the management API. */
export const SUPERVISOR_STATES: Record<SupervisorState, EngineState> = {
  idle: "starting",
  starting: "starting",
  restarting: "starting",
  ready: "ready",
  stopping: "draining",
  stopped: "stopped",
  error: "error",
};

/** The error of an engine that was not ready in time. */
export function notReady(id: string, timeoutMs: number): ServiceError {
  return new ServiceError(`the engine '${id}' was not ready within ${timeoutMs} ms`, {
    code: "engine_not_ready",
  });
}

/** chat or embedding, from the model id (embedding-like names are embedding). */
export function guessKind(model: string | undefined): EngineKind {
  return model !== undefined && EMBEDDING_NAME.test(model) ? "embedding" : "chat";
}

/** Resolves when the backend has no request in flight, or after `timeoutMs`. */
export function drained(backend: Backend, timeoutMs: number): Promise<void> {
  if (backend.inFlight === 0) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      unsubscribe();
      resolve();
    };
    const timer = setTimeout(done, timeoutMs);
    const unsubscribe = backend.subscribe(() => {
      if (backend.inFlight === 0) done();
    });
  });
}

/**
 * The model ids a server lists at `/v1/models`, with which of them rerank or have random weights;
 * ValidationError when it cannot tell.
 */
export async function discoverModels(
  baseUrl: string,
  apiKey?: string | null,
): Promise<{ ids: string[]; facts: ModelFacts }> {
  const headers: Record<string, string> = {};
  if (apiKey) headers.authorization = `Bearer ${apiKey}`;
  let detail: string;
  try {
    const res = await fetch(`${baseUrl}/models`, { headers, signal: AbortSignal.timeout(5000) });
    if (res.ok) {
      const body = await res.json();
      const ids = (Array.isArray(body?.data) ? body.data : []).map((m: { id?: unknown }) => m.id)
        .filter((id: unknown): id is string => typeof id === "string" && id !== "");
      if (ids.length > 0) return { ids, facts: modelFactsOf(body) };
      detail = "it lists no models";
    } else {
      await res.body?.cancel();
      detail = `it answered HTTP ${res.status}`;
    }
  } catch (err) {
    detail = `it is not reachable: ${errorMessage(err)}`;
  }
  throw new ValidationError(
    `could not list the models of ${baseUrl} (${detail}); pass 'models' or check the URL and key`,
    { param: "models" },
  );
}

/** The view of an engine record. */
export function engineView(rec: EngineRecord): EngineView {
  const sup = rec.supervisor;
  const b = rec.backend;
  const snap = b?.snapshot();
  let state: EngineState;
  let message: string | null = null;
  if (rec.stopped) state = "stopped";
  else if (rec.draining) state = "draining";
  else if (sup) {
    state = SUPERVISOR_STATES[sup.state];
    message = sup.message;
  } else {
    state = b?.health === "healthy" ? "ready" : b?.health === "unhealthy" ? "error" : "starting";
    message = b?.health === "unhealthy" ? b.snapshot().healthMessage : null;
  }
  const models = snap?.models ?? [...(sup?.models ?? [])];
  // Before the engine lists its models: those asked for, the reranker it loads beside its model
  // among them (so a request for either waits while it loads, rather than a 404).
  const askedReranker = models.length === 0 ? sup?.spec.rerank?.model : undefined;
  const asked = [rec.model, askedReranker].filter((m): m is string => typeof m === "string");
  return {
    id: rec.id,
    origin: rec.origin,
    kind: rec.kind,
    model: rec.model,
    models: models.length > 0 ? models : asked,
    rerankers: askedReranker !== undefined
      ? [askedReranker]
      : [...(sup?.rerankers ?? b?.modelFacts.rerankers ?? [])],
    ...(models.length === 0 && sup?.spec.rerank !== undefined && sup.spec.rerank.model === undefined
      ? { loadsDefaultReranker: true }
      : {}),
    baseUrl: sup?.baseUrl ?? b?.config.baseUrl ?? "",
    state,
    message,
    placement: rec.origin === "remote" ? null : rec.placement ?? "process",
    pid: sup?.pid ?? null,
    port: rec.port ?? (b ? Number(new URL(b.config.baseUrl).port) || null : null),
    device: rec.device,
    dtype: sup?.dtype ?? sup?.spec.dtype ?? null,
    restarts: sup?.restarts ?? 0,
    randomWeights: sup?.randomWeights ?? (b !== undefined && b.modelFacts.randomWeights.length > 0),
    health: b?.health ?? null,
    circuit: snap?.circuit ?? null,
    inFlight: snap?.inFlight ?? 0,
    createdAt: rec.createdAt,
  };
}

/** The backend configuration of a stored remote engine (what the dispatcher takes). */
export function remoteConfigOf(entry: StoredRemoteEngine): BackendInstanceConfig {
  const { createdAt: _c, origin: _o, rerankers: _r, randomWeights: _w, ...config } = entry;
  return config;
}

/** The record of a registered remote engine (its backend learns the stored model facts). */
export function remoteRecord(entry: StoredRemoteEngine, backend: Backend): EngineRecord {
  backend.modelFacts = {
    rerankers: entry.rerankers ?? [],
    randomWeights: entry.randomWeights ?? [],
  };
  return {
    id: entry.id,
    origin: "remote",
    kind: engineKindOf(entry.kind),
    model: entry.models[0] ?? null,
    createdAt: entry.createdAt,
    port: null,
    device: null,
    backend,
    stored: entry,
    draining: false,
    stopped: false,
  };
}

/**
 * A port for a started engine: `requested` if free (409 if not), else the first free candidate
 * (SvcPorts by default), else any free port.
 */
export async function choosePort(
  kind: EngineKind,
  requested: number | undefined,
  ctx: { host: string; reserved: ReadonlySet<number>; candidates?: (kind: EngineKind) => number[] },
): Promise<number> {
  const host = ctx.host;
  if (requested !== undefined) {
    if (!Number.isInteger(requested) || requested < 1 || requested > 65535) {
      throw new ValidationError("'port' must be a whole number from 1 to 65535", {
        param: "port",
      });
    }
    if (ctx.reserved.has(requested) || !(await SvcPorts.isAvailable(requested, host))) {
      throw new ConflictError(
        `port ${requested} on ${host} is already in use; pick another port or leave 'port' out`,
        { param: "port" },
      );
    }
    return requested;
  }
  const candidates = ctx.candidates?.(kind) ??
    (kind === "chat" ? SvcPorts.getLlmPorts() : [SvcPorts.EMBEDDING_DEFAULT]);
  for (const port of candidates) {
    if (!ctx.reserved.has(port) && await SvcPorts.isAvailable(port, host)) return port;
  }
  for (let i = 0; i < 20; i++) {
    const port = getFreePort(connectHost(host));
    if (!ctx.reserved.has(port)) return port;
  }
  throw new ConflictError("no free port was found for the engine; free some ports", {
    param: "port",
  });
}

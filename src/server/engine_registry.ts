/**
 * The engines an app serves, by model id (and alias): lookup with the right errors (404 for an
 * unknown model, 400 for the wrong kind, 503 while loading), and their combined health.
 *
 * @module
 */
import {
  ConfigurationError,
  errorMessage,
  NotFoundError,
  ServiceUnavailableError,
  ValidationError,
} from "../core/errors.ts";
import { engineOfKind } from "../core/model_kind.ts";
import { DEFAULT_ADMISSION_LIMITS } from "../engine/admission_limits.ts";
import type {
  AdmissionLimits,
  EngineLoadState,
  EngineOfKind,
  InferenceEngine,
  ModelKind,
} from "../core/inference_types.ts";

/** Engines as given to an app: a list (served under `info.id`) or a map from id/alias. */
export type EngineSource = readonly InferenceEngine[] | ReadonlyMap<string, InferenceEngine>;

/** Seconds a client should wait before retrying a model that is loading. */
export const LOADING_RETRY_AFTER_SECONDS = 5;

/** Combined health of the engines. */
export interface HealthSummary {
  /** `ok` when every engine is ready; `loading` while any loads; `error` if any failed/stopped. */
  status: "ok" | "loading" | "error";
  models: { id: string; state: EngineLoadState; message?: string }[];
}

/**
 * Looks engines up by the `model` of a request.
 *
 * @example
 * ```ts
 * import { EngineRegistry } from "./engine_registry.ts";
 * const registry = new EngineRegistry([]);
 * registry.find("demo/chat"); // undefined
 * ```
 */
export class EngineRegistry {
  /** Ids given explicitly (a map source: aliases included). */
  #byId = new Map<string, InferenceEngine>();
  /** Engines listed without ids: found by their current `info.id`, which may change once an
   * engine that was loading knows which model it serves (e.g. a default that fell back). */
  #listed: InferenceEngine[] = [];

  constructor(engines: EngineSource) {
    if (engines instanceof Map) {
      this.#byId = new Map(engines);
    } else {
      const seen = new Set<string>();
      for (const engine of engines as readonly InferenceEngine[]) {
        if (seen.has(engine.info.id)) {
          throw new ConfigurationError(
            `two engines serve the model id '${engine.info.id}'; give each its own id`,
          );
        }
        seen.add(engine.info.id);
        this.#listed.push(engine);
      }
    }
  }

  /** Every served id (aliases included) with its engine, in the order given. */
  entries(): { id: string; engine: InferenceEngine }[] {
    return [
      ...[...this.#byId].map(([id, engine]) => ({ id, engine })),
      ...this.#listed.map((engine) => ({ id: engine.info.id, engine })),
    ];
  }

  /** Each engine once. */
  engines(): InferenceEngine[] {
    return [...new Set([...this.#byId.values(), ...this.#listed])];
  }

  /** The engine serving `id`, if any. */
  find(id: string): InferenceEngine | undefined {
    return this.#byId.get(id) ?? this.#listed.find((e) => e.info.id === id);
  }

  /**
   * The admission limits of the engine a request body's `model` names (unnamed: the one
   * {@link defaultModel} picks with `kind` and `accepts`), for checks made before the body is
   * validated; the defaults when there is none (the request is then refused by name).
   */
  limitsOf(
    body: unknown,
    kind?: ModelKind,
    accepts?: (engine: InferenceEngine) => boolean,
  ): Readonly<AdmissionLimits> {
    const model = typeof body === "object" && body !== null
      ? (body as { model?: unknown }).model
      : undefined;
    try {
      const id = typeof model === "string" ? model : this.defaultModel(kind, accepts);
      return this.find(id)?.info.limits ?? DEFAULT_ADMISSION_LIMITS;
    } catch {
      return DEFAULT_ADMISSION_LIMITS;
    }
  }

  /**
   * The ready engine serving `model`, as the interface of `kind` when one is named; with no
   * `model`, the one of `kind` served here ({@link defaultModel}). Throws NotFoundError
   * (`model_not_found`), the ValidationError `invalid_model_kind` for a model of another kind
   * (model_kind.ts: the one place a request meets a model of the wrong kind),
   * ServiceUnavailableError when not ready.
   */
  resolve(model: string): InferenceEngine;
  resolve<K extends ModelKind>(model: string | null | undefined, kind: K): EngineOfKind<K>;
  resolve(requested: string | null | undefined, kind?: ModelKind): InferenceEngine {
    const model = requested ?? this.defaultModel(kind);
    const engine = this.find(model);
    const shown = model.length > 200 ? `${model.slice(0, 200)}…` : model;
    if (engine === undefined) {
      const ids = this.entries().map((e) => e.id);
      const known = ids.length > 0 ? `Models served here: ${ids.slice(0, 20).join(", ")}.` : "";
      throw new NotFoundError(
        `The model '${shown}' does not exist on this server. ${known} GET /v1/models lists them.`,
        { code: "model_not_found", param: "model" },
      );
    }
    const typed = kind === undefined ? engine : engineOfKind(engine, kind, { model: shown });
    const health = engine.health();
    if (health.state === "loading") {
      throw new ServiceUnavailableError(
        `The model '${shown}' is still loading; retry in a few seconds.`,
        { code: "model_loading", retryAfterSeconds: LOADING_RETRY_AFTER_SECONDS },
      );
    }
    if (health.state !== "ready") {
      throw new ServiceUnavailableError(
        `The model '${shown}' is not available (${health.state}` +
          `${health.message ? `: ${health.message}` : ""}); check the server log.`,
        { code: "model_unavailable", retryAfterSeconds: 30 },
      );
    }
    return typed;
  }

  /**
   * The id of the one engine that can serve a request which names no `model` (vLLM's default:
   * the served model), among those of `kind` when one is named and those `accepts` takes. Throws
   * the ValidationError `missing_required_parameter` on `model` when there are none or several
   * to choose from (the message lists them).
   */
  defaultModel(kind?: ModelKind, accepts?: (engine: InferenceEngine) => boolean): string {
    // Each engine once, under the first id it is served by (a map source may not use `info.id`).
    const served = new Map<InferenceEngine, string>();
    for (const { id, engine } of this.entries()) {
      if (!served.has(engine)) served.set(engine, id);
    }
    const candidates = [...served].filter(([e]) =>
      (kind === undefined || e.info.kind === kind) && (accepts?.(e) ?? true)
    ).map(([, id]) => id);
    if (candidates.length === 1) return candidates[0];
    const what = kind === "rerank"
      ? "reranker"
      : kind === "embedding"
      ? "embedding model"
      : kind === "chat"
      ? "chat model"
      : "model";
    throw new ValidationError(
      candidates.length === 0
        ? `Missing required parameter: 'model'; this server serves no ${what} to default to.`
        : `Missing required parameter: 'model'; this server serves ${candidates.length} ${what}s ` +
          `(${candidates.slice(0, 20).join(", ")}): name one.`,
      { code: "missing_required_parameter", param: "model" },
    );
  }

  /** Combined health of every engine (no engines counts as an error: nothing to serve). */
  health(): HealthSummary {
    const models = this.engines().map((e) => {
      let h;
      try {
        h = e.health();
      } catch (err) {
        h = { state: "error" as const, message: errorMessage(err) };
      }
      return h.message === undefined
        ? { id: e.info.id, state: h.state }
        : { id: e.info.id, state: h.state, message: h.message };
    });
    const status =
      models.length === 0 || models.some((m) => m.state === "error" || m.state === "stopped")
        ? "error"
        : models.some((m) => m.state === "loading")
        ? "loading"
        : "ok";
    return { status, models };
  }
}

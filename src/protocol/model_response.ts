/**
 * Builders of `/v1/models` objects.
 *
 * @module
 */
import type { ModelInfo, ModelKind } from "../core/inference_types.ts";

/** One model on the wire. Fields past `owned_by` are extensions (ignored by OpenAI clients). */
export interface WireModel {
  id: string;
  object: "model";
  created: number;
  owned_by: string;
  kind: ModelKind;
  /** Longest sequence in tokens (vLLM calls it `max_model_len`). */
  max_model_len: number;
  dimensions?: number;
  random_weights?: boolean;
  /** Weight precision the engine loaded (`q8`, `q4f16`, …). */
  dtype?: string;
}

/** The `/v1/models` list. */
export interface ModelList {
  object: "list";
  data: WireModel[];
}

/**
 * Describes one model; `id` overrides `info.id` (for an alias).
 *
 * @example
 * ```ts
 * import { buildModel } from "./model_response.ts";
 * buildModel({ id: "m", kind: "chat", contextLength: 2048, created: 0, ownedBy: "svc" });
 * ```
 */
export function buildModel(info: ModelInfo, options: { id?: string } = {}): WireModel {
  const model: WireModel = {
    id: options.id ?? info.id,
    object: "model",
    created: info.created,
    owned_by: info.ownedBy,
    kind: info.kind,
    max_model_len: info.contextLength,
  };
  if (info.dimensions !== undefined) model.dimensions = info.dimensions;
  if (info.randomWeights) model.random_weights = true;
  if (info.dtype !== undefined) model.dtype = info.dtype;
  return model;
}

/**
 * Builds the `/v1/models` list.
 *
 * @example
 * ```ts
 * import { buildModelList } from "./model_response.ts";
 * buildModelList([]); // { object: "list", data: [] }
 * ```
 */
export function buildModelList(models: readonly WireModel[]): ModelList {
  return { object: "list", data: [...models] };
}

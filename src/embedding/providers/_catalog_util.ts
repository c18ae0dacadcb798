/** Lookups in a provider's model catalogue. @module */

import { ValidationError } from "../../core/errors.ts";
import type { EmbeddingMethodInfo } from "../types.ts";

/** Default vector size of `model` when the provider's catalogue knows it. */
export function knownDimensions(info: EmbeddingMethodInfo, model: string): number | undefined {
  return info.models.find((m) => m.name === model)?.dimensions;
}

/** Checks a requested vector size: a positive integer, or undefined. */
export function checkDimensions(dimensions: number | undefined): number | undefined {
  if (dimensions === undefined) return undefined;
  if (!Number.isInteger(dimensions) || dimensions < 1 || dimensions > 65536) {
    throw new ValidationError(
      `dimensions must be a whole number from 1 to 65536 (got ${dimensions})`,
      { param: "dimensions" },
    );
  }
  return dimensions;
}

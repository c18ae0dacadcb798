/**
 * The engine contract, for the engine's own modules: it is defined in
 * `src/core/inference_types.ts`, which the protocol layer imports too. Code outside `src/engine/`
 * imports it from there.
 *
 * @module
 */

export type * from "../core/inference_types.ts";

/**
 * "Did you mean …?" for mistyped commands and flags: the closest known word by edit distance
 * (implemented in `src/core/suggest.ts`, which the request validation shares).
 *
 * @module
 */
export { closestMatch } from "../core/suggest.ts";

/**
 * Deterministic benchmark inputs: embedding texts of a target length and chat prompts, made of
 * common English words (one WordPiece token each in the demo models' vocabulary).
 *
 * @module
 */

import { mulberry32 } from "../src/core/random.ts";

const WORDS = (
  "the people time year way day man thing woman life child world school state family student " +
  "group country problem hand part place case week company system program question work " +
  "government number night point home water room mother area money story fact month lot right " +
  "study book eye job word business issue side kind head house service friend father power hour " +
  "game line end member law car city community name president team minute idea kid body " +
  "information back parent face others level office door health person art war history party " +
  "result change morning reason research girl guy moment air teacher force education good new " +
  "first last long great little own other old big high different small large next early young " +
  "important few public bad same able make know take see come think look want give use find tell " +
  "ask seem feel try leave call keep let begin show hear play run move live believe hold bring"
).split(" ");

/**
 * `count` distinct texts of `words` words each (about `words + 2` tokens with [CLS]/[SEP]).
 *
 * @example
 * ```ts
 * const short = makeTexts(256, 8, 1); // ~10-token inputs
 * ```
 */
export function makeTexts(count: number, words: number, seed: number): string[] {
  const next = mulberry32(seed);
  return Array.from(
    { length: count },
    () => Array.from({ length: words }, () => WORDS[Math.floor(next() * WORDS.length)]).join(" "),
  );
}

/**
 * A chat prompt of about `words` words, distinct for each `index`.
 *
 * @example
 * ```ts
 * const prompt = chatPrompt(0, 40);
 * ```
 */
export function chatPrompt(index: number, words: number): string {
  return `Request ${index}: please write about ${makeTexts(1, words, 1000 + index)[0]}.`;
}

/**
 * The decoder export families the chat engine can drive, and the check made at load: a model is
 * served only when every input it takes is one we feed, so an architecture we cannot drive
 * (recurrent state such as LFM2's `past_conv`, `inputs_embeds`-only multimodal decoders) is refused
 * with one line instead of loading and failing every request.
 *
 * @module
 */

import { ConfigurationError } from "../../core/errors.ts";
import {
  COMMON_DECODER_INPUTS,
  type DecoderFacts,
  type DecoderFamily,
  type DecoderPlan,
  PAST_PREFIX,
  planDecoder,
  PRESENT_PREFIX,
} from "./decoder_family.ts";
import { GQA_DECODER } from "./gqa_decoder.ts";
import { MERGED_DECODER } from "./merged_decoder.ts";
import { OPTIMUM_DECODER } from "./optimum_decoder.ts";

/** Every family, most specific first. */
export const DECODER_FAMILIES: readonly DecoderFamily[] = [
  GQA_DECODER,
  MERGED_DECODER,
  OPTIMUM_DECODER,
];

const CACHE_INPUT = /^past_key_values\.\d+\.(key|value)$/;

/**
 * The family and plan of a decoder, or a ConfigurationError naming the first input we cannot
 * feed (or output we need and miss) and the supported families.
 */
export function planFor(facts: DecoderFacts, model: string): DecoderPlan {
  const names = facts.inputs.map((i) => i.name);
  const refuse = (what: string) =>
    new ConfigurationError(
      `model ${model} cannot be served: ${what}. Svc drives causal LMs exported as ` +
        DECODER_FAMILIES.map((f) => `${f.name} (e.g. ${f.examples[0]})`).join(", "),
      { param: "model" },
    );
  if (!names.includes("input_ids")) {
    throw refuse(`it takes no 'input_ids' (inputs: ${names.join(", ")})`);
  }
  const family = DECODER_FAMILIES.find((f) => f.matches(facts))!;
  const known = new Set<string>([...COMMON_DECODER_INPUTS, ...family.extraInputs]);
  const unknown = names.find((n) => !known.has(n) && !CACHE_INPUT.test(n));
  if (unknown) throw refuse(`its input '${unknown}' is not one Svc can feed`);
  if (!names.some((n) => n.startsWith(PAST_PREFIX))) {
    throw refuse("it has no key/value cache inputs (past_key_values.*)");
  }
  const missing = [
    "logits",
    ...names.filter((n) => n.startsWith(PAST_PREFIX))
      .map((n) => n.replace(PAST_PREFIX, PRESENT_PREFIX)),
  ].find((n) => !facts.outputNames.includes(n));
  if (missing) throw refuse(`it has no '${missing}' output`);
  return planDecoder(family, facts);
}

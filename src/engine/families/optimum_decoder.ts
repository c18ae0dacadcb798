/**
 * Optimum / onnx-community decoders (`onnx/model*.onnx`): standard attention that honours the
 * attention mask, so left-padded rows of different lengths batch together. Covers every dtype
 * these repos ship (fp32, fp16, q8, int8, uint8, q4, q4f16, bnb4), with or without
 * `position_ids` and `num_logits_to_keep`.
 *
 * @module
 */

import type { DecoderFamily } from "./decoder_family.ts";

/** The Optimum / onnx-community export family. */
export const OPTIMUM_DECODER: DecoderFamily = {
  name: "optimum",
  examples: [
    "HuggingFaceTB/SmolLM2-135M-Instruct",
    "onnx-community/Qwen2.5-0.5B-Instruct",
    "onnx-community/Qwen3-0.6B-ONNX",
    "onnx-community/Llama-3.2-1B-Instruct",
    "onnx-community/gemma-3-1b-it-ONNX",
    "Xenova/TinyLlama-1.1B-Chat-v1.0",
  ],
  extraInputs: [],
  batching: "padded",
  matches: (facts) =>
    !facts.opTypes.has("GroupQueryAttention") &&
    !facts.inputs.some((i) => i.name === "use_cache_branch"),
  extraFeeds: () => ({}),
};

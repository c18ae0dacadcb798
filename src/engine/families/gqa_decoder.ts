/**
 * onnxruntime-genai builder exports: attention is the `GroupQueryAttention` contrib op, which
 * derives each row's length from the attention mask and assumes there is no padding
 * (onnxruntime's `gqa_attention_base.h`). Left padding would change its results, so only rows
 * whose caches have the same length share a batch; anything else waits for its turn.
 *
 * @module
 */

import type { DecoderFamily } from "./decoder_family.ts";

/** The onnxruntime-genai (GroupQueryAttention) export family. */
export const GQA_DECODER: DecoderFamily = {
  name: "gqa",
  examples: [
    "onnx-community/Phi-3.5-mini-instruct-onnx-web",
    "microsoft/Phi-3-mini-4k-instruct-onnx-web",
    "onnxruntime-genai builder exports",
  ],
  extraInputs: [],
  batching: "aligned",
  matches: (facts) => facts.opTypes.has("GroupQueryAttention"),
  extraFeeds: () => ({}),
};

/**
 * Legacy merged decoders (`onnx/decoder_model_merged*.onnx`, Optimum before 1.14): one file with
 * an `If` over the boolean input `use_cache_branch`, false for the first call (no cache yet) and
 * true after, as transformers.js feeds it.
 *
 * @module
 */

import type { DecoderFamily } from "./decoder_family.ts";

/** The merged-decoder export family. */
export const MERGED_DECODER: DecoderFamily = {
  name: "merged",
  examples: ["Xenova/TinyLlama-1.1B-Chat-v1.0 (older revisions)", "Xenova/Qwen1.5-0.5B-Chat"],
  extraInputs: ["use_cache_branch"],
  batching: "padded",
  matches: (facts) => facts.inputs.some((i) => i.name === "use_cache_branch"),
  extraFeeds: (pastLength) => ({
    use_cache_branch: { type: "bool", data: Uint8Array.of(pastLength > 0 ? 1 : 0), dims: [1] },
  }),
};

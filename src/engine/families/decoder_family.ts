/**
 * The seam between the chat engine and the ways causal LMs are exported to ONNX. A family says
 * which inputs it feeds beyond the common ones, whether sequences of different lengths may share a
 * batch, and how to recognise its files; everything the engine derives from the session itself
 * (cache names, dtype and shape, positions) is read here once per model, as a {@link DecoderPlan}.
 *
 * A new export family is one file implementing {@link DecoderFamily}, listed in
 * decoder_families.ts, plus its conformance case in generated_models/.
 *
 * @module
 */

import type { PlainTensor, TensorInfo } from "../onnx_session.ts";

/** What is known about a loaded decoder before choosing its family. */
export interface DecoderFacts {
  /** The session's inputs with element types and shapes. */
  inputs: readonly TensorInfo[];
  outputNames: readonly string[];
  /** The folder's config.json. */
  config: Record<string, unknown>;
  /** Operator types of {@link OP_TYPES_OF_INTEREST} found in the model file. */
  opTypes: ReadonlySet<string>;
}

/** One way of exporting causal LMs to ONNX. */
export interface DecoderFamily {
  /** Short name shown in logs and errors. */
  readonly name: string;
  /** Real repositories this family stands for. */
  readonly examples: readonly string[];
  /** Inputs this family feeds beyond {@link COMMON_DECODER_INPUTS}. */
  readonly extraInputs: readonly string[];
  /**
   * `padded`: rows of different lengths share a batch by left padding. `aligned`: only rows whose
   * caches have the same length share a batch (attention kernels that assume no padding).
   */
  readonly batching: "padded" | "aligned";
  /** True when a model belongs to this family. */
  matches(facts: DecoderFacts): boolean;
  /** The family's own inputs for a model call over `pastLength` cached tokens. */
  extraFeeds(pastLength: number): Record<string, PlainTensor>;
}

/** Operator types that change how a model is driven. */
export const OP_TYPES_OF_INTEREST = ["GroupQueryAttention", "DynamicQuantizeLinear"] as const;

/** Inputs every family may take; each is fed only when the model has it. */
export const COMMON_DECODER_INPUTS = [
  "input_ids",
  "attention_mask",
  "position_ids",
  "num_logits_to_keep",
] as const;

/** Prefix of the cache inputs. */
export const PAST_PREFIX = "past_key_values.";
/** Prefix of the cache outputs, named as the inputs they feed (`present.0.key`). */
export const PRESENT_PREFIX = "present.";

/** Cache inputs and outputs of a model, and their element layout `[batch, heads, length, dim]`. */
export interface CacheLayout {
  /** Names of the cache inputs, e.g. `past_key_values.0.key`, in order. */
  pastNames: string[];
  /** Output name for each past input, e.g. `present.0.key`. */
  presentNames: string[];
  kvHeads: number;
  headDim: number;
  /** float16 cache (fp16 and q4f16 files), kept as raw bits. */
  half: boolean;
}

/**
 * How rows may share a model call: `padded` and `aligned` as in {@link DecoderFamily.batching};
 * `single`: one row per call, for files whose activations are quantized with one scale for the
 * whole tensor (`DynamicQuantizeLinear`, the q8/int8/uint8 files of Optimum's dynamic quantizer),
 * where any other row in the batch changes a row's numbers.
 */
export type Batching = "padded" | "aligned" | "single";

/** Everything the scheduler needs to drive one loaded decoder. */
export interface DecoderPlan {
  family: DecoderFamily;
  batching: Batching;
  cache: CacheLayout;
  /** Position id of a sequence's first token (1 for Gemma 3, as transformers.js does). */
  positionStart: number;
  hasPositionIds: boolean;
  /** The model can compute logits for the last position only. */
  hasLogitsToKeep: boolean;
  /** Logits per position (config `vocab_size`; 0 when unknown). */
  vocabSize: number;
}

/** Model types whose position ids start at 1 (transformers.js `decoder_forward`). */
const ONE_BASED_POSITIONS = ["paligemma", "gemma3_text", "gemma3"];

/** Reads the cache layout and position rule of a model of `family`. */
export function planDecoder(family: DecoderFamily, facts: DecoderFacts): DecoderPlan {
  const { inputs, config } = facts;
  const past = inputs.filter((i) => i.name.startsWith(PAST_PREFIX));
  const heads = Number(config.num_attention_heads);
  const dims = past[0]?.shape ?? [];
  // Real exports give heads and head size as numbers in the input shape; config is the fallback.
  const kvHeads = typeof dims[1] === "number"
    ? dims[1]
    : Number(config.num_key_value_heads ?? heads);
  const headDim = typeof dims[3] === "number"
    ? dims[3]
    : Number(config.head_dim ?? Number(config.hidden_size) / heads);
  const names = new Set(inputs.map((i) => i.name));
  return {
    family,
    batching: facts.opTypes.has("DynamicQuantizeLinear") ? "single" : family.batching,
    cache: {
      pastNames: past.map((i) => i.name),
      presentNames: past.map((i) => i.name.replace(PAST_PREFIX, PRESENT_PREFIX)),
      kvHeads,
      headDim,
      half: past[0]?.type === "float16",
    },
    positionStart: ONE_BASED_POSITIONS.includes(String(config.model_type)) ? 1 : 0,
    hasPositionIds: names.has("position_ids"),
    hasLogitsToKeep: names.has("num_logits_to_keep"),
    vocabSize: Number(config.vocab_size) || 0,
  };
}

/** The token inputs of one model call. */
export interface StepInputs {
  ids: BigInt64Array;
  mask: BigInt64Array;
  positions: BigInt64Array;
  batch: number;
  /** New tokens per row. */
  length: number;
  /** Cached tokens per row (padding included). */
  pastLength: number;
  past: readonly { data: Float32Array | Uint16Array; dims: readonly number[] }[];
}

/** The feeds of one model call for a model driven by `plan`. */
export function decoderFeeds(plan: DecoderPlan, step: StepInputs): Record<string, PlainTensor> {
  const { batch, length, pastLength } = step;
  const feeds: Record<string, PlainTensor> = {
    input_ids: { type: "int64", data: step.ids, dims: [batch, length] },
    attention_mask: { type: "int64", data: step.mask, dims: [batch, pastLength + length] },
    ...plan.family.extraFeeds(pastLength),
  };
  if (plan.hasPositionIds) {
    feeds.position_ids = { type: "int64", data: step.positions, dims: [batch, length] };
  }
  // Logits for the last position only: prefill skips the rest.
  if (plan.hasLogitsToKeep) {
    feeds.num_logits_to_keep = { type: "int64", data: BigInt64Array.of(1n), dims: [] };
  }
  const type = plan.cache.half ? "float16" : "float32";
  plan.cache.pastNames.forEach((name, i) => {
    feeds[name] = { type, data: step.past[i].data, dims: step.past[i].dims };
  });
  return feeds;
}

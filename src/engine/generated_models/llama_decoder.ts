/**
 * A LLaMA-shaped decoder with a KV cache as an ONNX graph, in the layout transformers.js'
 * `LlamaForCausalLM` loads and `generate()` drives:
 *
 * - inputs `input_ids`, `position_ids` (int64 `[batch_size, sequence_length]`), `attention_mask`
 *   (int64 `[batch_size, total_sequence_length]`, past + new tokens, 0 at padding),
 *   `past_key_values.{i}.key|value` (float `[batch_size, kv_heads, past_sequence_length, head_dim]`,
 *   may hold 0 positions) and, optionally, `num_logits_to_keep` (int64 scalar: 0 = logits for
 *   every position, k = the last k; transformers.js passes 1 while generating);
 * - outputs `logits` (float `[batch_size, kept_positions, vocab_size]`) and
 *   `present.{i}.key|value` (past and new keys/values, RoPE applied to keys).
 *
 * Layers: RMSNorm, RoPE (rotate-half, as Hugging Face LLaMA), grouped-query attention with a
 * causal and padding mask, SwiGLU MLP; a tied or separate output head, and an optional bias on the
 * EOS logit so that generations end early (for testing stop paths).
 *
 * @module
 */

import { LayerBuilder, type WeightFormat } from "./layers.ts";
import { OnnxGraph, tensorFromArray } from "./onnx_graph.ts";
import { TensorDataType } from "./onnx_proto.ts";
import type { NBitsOptions } from "./weight_formats.ts";

/** The shape and seed of a generated decoder. */
export interface LlamaDecoderSpec {
  vocabSize: number;
  hiddenSize: number;
  numLayers: number;
  numHeads: number;
  numKvHeads: number;
  intermediateSize: number;
  maxPositions: number;
  ropeTheta: number;
  rmsNormEps: number;
  tieWordEmbeddings: boolean;
  /** Spread of the logits (their standard deviation at random inputs); larger = more peaked. */
  logitStd: number;
  /** Added to the logit of `eosLogitBiasTokenId`; 0 adds nothing. */
  eosLogitBias: number;
  eosLogitBiasTokenId: number;
  /** Declare the optional `num_logits_to_keep` input. */
  numLogitsToKeep: boolean;
  /** Seed of the random weights; same seed, same bytes. */
  seed: number;
}

const MASKED = -1e9;
const INT64_BIG = Number.MAX_SAFE_INTEGER;

/** Head size of a spec. */
export function llamaHeadDim(spec: LlamaDecoderSpec): number {
  return spec.hiddenSize / spec.numHeads;
}

/**
 * Builds the decoder graph with fp32, q8 or q4 weights (`nbits`: the q4 format's MatMulNBits
 * settings, when not the default).
 *
 * @example
 * ```ts
 * import { writeOnnxModel } from "./onnx_writer.ts";
 * const spec = { vocabSize: 1024, hiddenSize: 64, numLayers: 2, numHeads: 4, numKvHeads: 2,
 *   intermediateSize: 128, maxPositions: 2048, ropeTheta: 10000, rmsNormEps: 1e-5,
 *   tieWordEmbeddings: true, logitStd: 3, eosLogitBias: 0, eosLogitBiasTokenId: 0,
 *   numLogitsToKeep: true, seed: 1 };
 * await writeOnnxModel("/tmp/llama.onnx", buildLlamaDecoderGraph(spec, "fp32"));
 * ```
 */
export function buildLlamaDecoderGraph(
  spec: LlamaDecoderSpec,
  format: WeightFormat,
  nbits?: NBitsOptions,
): OnnxGraph {
  const H = spec.hiddenSize;
  const nh = spec.numHeads;
  const kvh = spec.numKvHeads;
  if (H % nh !== 0 || nh % kvh !== 0) {
    throw new RangeError(`hidden ${H}, heads ${nh}, kv heads ${kvh} do not divide evenly`);
  }
  const hd = llamaHeadDim(spec);
  if (hd % 2 !== 0) throw new RangeError(`head size ${hd} must be even for RoPE`);
  const g = new OnnxGraph("llama_decoder");
  const L = new LayerBuilder(g, { seed: `llama:${spec.seed}`, format, nbits });
  const tokenShape = ["batch_size", "sequence_length"];
  const ids = g.input("input_ids", TensorDataType.INT64, tokenShape);
  const mask = g.input("attention_mask", TensorDataType.INT64, [
    "batch_size",
    "total_sequence_length",
  ]);
  const positionIds = g.input("position_ids", TensorDataType.INT64, tokenShape);
  const past: string[][] = [];
  for (let i = 0; i < spec.numLayers; i++) {
    past.push(
      ["key", "value"].map((kind) =>
        g.input(`past_key_values.${i}.${kind}`, TensorDataType.FLOAT, [
          "batch_size",
          kvh,
          "past_sequence_length",
          hd,
        ])
      ),
    );
  }
  const keep = spec.numLogitsToKeep
    ? g.input("num_logits_to_keep", TensorDataType.INT64, [])
    : null;

  // Logit scale: with RMS-normed inputs a row of the head gives logits of std bound * sqrt(H / 3).
  const headBound = spec.logitStd * Math.sqrt(3 / H);
  const embedName = "model.embed_tokens.weight";
  let x = L.embedding(ids, embedName, spec.vocabSize, H, {
    bound: spec.tieWordEmbeddings ? headBound : 1,
  });

  const { cos, sin } = ropeTables(g, positionIds, hd, spec.ropeTheta);
  const maskBias = causalPaddingMask(g, ids, mask);
  const scale = g.constFloat([1 / Math.sqrt(hd)], true);
  const residualBound = (inDim: number) => Math.sqrt(3 / inDim) / Math.sqrt(2 * spec.numLayers);

  for (let i = 0; i < spec.numLayers; i++) {
    const p = `model.layers.${i}`;
    const h = L.rmsNorm(x, `${p}.input_layernorm`, H, spec.rmsNormEps);
    const q = rope(
      g,
      L.splitHeads(L.linear(h, `${p}.self_attn.q_proj`, H, nh * hd), nh, hd),
      cos,
      sin,
      hd,
    );
    const k = rope(
      g,
      L.splitHeads(L.linear(h, `${p}.self_attn.k_proj`, H, kvh * hd), kvh, hd),
      cos,
      sin,
      hd,
    );
    const v = L.splitHeads(L.linear(h, `${p}.self_attn.v_proj`, H, kvh * hd), kvh, hd);
    const presentK = g.node("Concat", [past[i][0], k], { axis: 2 }, `present.${i}.key`);
    const presentV = g.node("Concat", [past[i][1], v], { axis: 2 }, `present.${i}.value`);

    // Grouped-query attention without copying K/V: the query heads that share a KV head are
    // stacked along the sequence axis ([B, kvh, group * S, hd]) and multiplied in one MatMul.
    const qGrouped = g.node("Reshape", [g.node("Mul", [q, scale]), g.constInt64([0, kvh, -1, hd])]);
    const kT = g.node("Transpose", [presentK], { perm: [0, 1, 3, 2] });
    const scores = g.node("Reshape", [
      g.node("MatMul", [qGrouped, kT]),
      g.constInt64([0, nh, -1, 0]),
    ]);
    const probs = g.node("Softmax", [g.node("Add", [scores, maskBias])], { axis: -1 });
    const probsGrouped = g.node("Reshape", [probs, g.constInt64([0, kvh, -1, 0])]);
    const ctx = g.node("Reshape", [
      g.node("MatMul", [probsGrouped, presentV]),
      g.constInt64([0, nh, -1, hd]),
    ]);
    const attnOut = L.linear(L.mergeHeads(ctx, nh, hd), `${p}.self_attn.o_proj`, nh * hd, H, {
      bound: residualBound(nh * hd),
    });
    x = g.node("Add", [x, attnOut]);

    const h2 = L.rmsNorm(x, `${p}.post_attention_layernorm`, H, spec.rmsNormEps);
    const gate = L.silu(L.linear(h2, `${p}.mlp.gate_proj`, H, spec.intermediateSize));
    const up = L.linear(h2, `${p}.mlp.up_proj`, H, spec.intermediateSize);
    const down = L.linear(
      g.node("Mul", [gate, up]),
      `${p}.mlp.down_proj`,
      spec.intermediateSize,
      H,
      {
        bound: residualBound(spec.intermediateSize),
      },
    );
    x = g.node("Add", [x, down]);
    for (const t of [presentK, presentV]) {
      g.output(t, TensorDataType.FLOAT, ["batch_size", kvh, "total_sequence_length", hd]);
    }
  }

  if (keep) x = keepLastPositions(g, x, keep);
  x = L.rmsNorm(x, "model.norm", H, spec.rmsNormEps);
  let logits = spec.tieWordEmbeddings
    ? L.tiedHead(x, embedName)
    : L.linear(x, "lm_head", H, spec.vocabSize, { bound: headBound });
  if (spec.eosLogitBias !== 0) {
    const bias = new Float32Array(spec.vocabSize);
    bias[spec.eosLogitBiasTokenId] = spec.eosLogitBias;
    const biasName = g.initializer(
      "svc.eos_logit_bias",
      tensorFromArray(TensorDataType.FLOAT, [spec.vocabSize], bias),
    );
    logits = g.node("Add", [logits, biasName]);
  }
  g.node("Identity", [logits], {}, "logits");
  g.output("logits", TensorDataType.FLOAT, [
    "batch_size",
    "logits_sequence_length",
    spec.vocabSize,
  ]);
  return g;
}

/** cos/sin tables `[B, 1, S, hd]` from `position_ids` (rotate-half layout, freqs repeated). */
export function ropeTables(g: OnnxGraph, positionIds: string, hd: number, theta: number) {
  const invFreq = Array.from({ length: hd / 2 }, (_, i) => 1 / Math.pow(theta, (2 * i) / hd));
  const pos = g.node("Unsqueeze", [
    g.node("Cast", [positionIds], { to: TensorDataType.FLOAT }),
    g.constInt64([-1]),
  ]);
  const freqs = g.node("Mul", [pos, g.constFloat(invFreq)]);
  const emb = g.node("Concat", [freqs, freqs], { axis: -1 });
  const axis1 = g.constInt64([1]);
  return {
    cos: g.node("Unsqueeze", [g.node("Cos", [emb]), axis1]),
    sin: g.node("Unsqueeze", [g.node("Sin", [emb]), axis1]),
  };
}

/** `x * cos + rotate_half(x) * sin` for `x` `[B, heads, S, hd]`. */
export function rope(g: OnnxGraph, x: string, cos: string, sin: string, hd: number): string {
  const axis = g.constInt64([3]);
  const half = g.constInt64([hd / 2]);
  const x1 = g.node("Slice", [x, g.constInt64([0]), half, axis]);
  const x2 = g.node("Slice", [x, half, g.constInt64([hd]), axis]);
  const rotated = g.node("Concat", [g.node("Neg", [x2]), x1], { axis: 3 });
  return g.node("Add", [g.node("Mul", [x, cos]), g.node("Mul", [rotated, sin])]);
}

/**
 * Additive mask `[B, 1, S, T]`: query `i` (absolute position `past + i`) may attend key `j` when
 * `j <= past + i` and `attention_mask[b, j]` is 1. Fully masked rows (left padding) stay finite.
 */
export function causalPaddingMask(g: OnnxGraph, ids: string, mask: string): string {
  const one = g.constInt64([1], true);
  const dim1 = (t: string) => g.node("Gather", [g.node("Shape", [t]), one], { axis: 0 });
  const seqLen = dim1(ids);
  const totalLen = dim1(mask);
  const pastLen = g.node("Sub", [totalLen, seqLen]);
  const qPos = g.node("Range", [pastLen, totalLen, one]);
  const kPos = g.node("Range", [g.constInt64([0], true), totalLen, one]);
  const causal = g.node("LessOrEqual", [
    g.node("Unsqueeze", [kPos, g.constInt64([0])]),
    g.node("Unsqueeze", [qPos, g.constInt64([1])]),
  ]);
  const notPad = g.node("Cast", [g.node("Unsqueeze", [mask, g.constInt64([1, 2])])], {
    to: TensorDataType.BOOL,
  });
  const allowed = g.node("And", [g.node("Unsqueeze", [causal, g.constInt64([0, 1])]), notPad]);
  return g.node("Where", [allowed, g.constFloat([0], true), g.constFloat([MASKED], true)]);
}

/** Keeps the last `keep` positions of `x` `[B, S, H]` (all of them when `keep` is 0). */
export function keepLastPositions(g: OnnxGraph, x: string, keep: string): string {
  const zero = g.constInt64([0], true);
  const start = g.node("Where", [g.node("Equal", [keep, zero]), zero, g.node("Neg", [keep])]);
  const starts = g.node("Unsqueeze", [start, g.constInt64([0])]);
  return g.node("Slice", [x, starts, g.constInt64([INT64_BIG]), g.constInt64([1])]);
}

/**
 * config.json of a generated decoder (Hugging Face `LlamaForCausalLM` fields, plus
 * `svc_random_weights: true` and the generator details under `svc_generator`).
 */
export function llamaDecoderConfig(
  spec: LlamaDecoderSpec,
  extra: {
    bosTokenId: number;
    eosTokenId: number;
    padTokenId: number;
    generator: Record<string, unknown>;
  },
): Record<string, unknown> {
  return {
    architectures: ["LlamaForCausalLM"],
    model_type: "llama",
    vocab_size: spec.vocabSize,
    hidden_size: spec.hiddenSize,
    intermediate_size: spec.intermediateSize,
    num_hidden_layers: spec.numLayers,
    num_attention_heads: spec.numHeads,
    num_key_value_heads: spec.numKvHeads,
    head_dim: llamaHeadDim(spec),
    hidden_act: "silu",
    max_position_embeddings: spec.maxPositions,
    initializer_range: 0.02,
    rms_norm_eps: spec.rmsNormEps,
    rope_theta: spec.ropeTheta,
    rope_scaling: null,
    attention_bias: false,
    attention_dropout: 0,
    mlp_bias: false,
    pretraining_tp: 1,
    tie_word_embeddings: spec.tieWordEmbeddings,
    bos_token_id: extra.bosTokenId,
    eos_token_id: extra.eosTokenId,
    pad_token_id: extra.padTokenId,
    torch_dtype: "float32",
    use_cache: true,
    svc_random_weights: true,
    svc_generator: extra.generator,
  };
}

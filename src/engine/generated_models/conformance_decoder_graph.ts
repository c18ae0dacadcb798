/**
 * The ONNX graphs of the decoder conformance cases (conformance_decoders.ts): one decoder body
 * (embedding, RMSNorm, RoPE or GroupQueryAttention, SwiGLU, logits) emitted in the signature of
 * each export family and weight format.
 *
 * @module
 */

import { causalPaddingMask, keepLastPositions, rope, ropeTables } from "./llama_decoder.ts";
import { OnnxGraph, type TensorSource } from "./onnx_graph.ts";
import { type Dim, TensorDataType } from "./onnx_proto.ts";
import { encodeGraphProto } from "./onnx_writer.ts";
import {
  emitEmbedding,
  emitLinear,
  emitParam,
  type ExportDtype,
  float16Tensor,
  float32Tensor,
  hasFloat16Io,
  type WeightSink,
} from "./weight_formats.ts";
import { uniformValues } from "./weights.ts";
import type { DecoderCase } from "./conformance_decoders.ts";
import { DEMO_MODEL_SPECS } from "./demo_models.ts";
import type { DecoderFolderSpec } from "./model_folder.ts";

/** The tiny shape every case shares: demo/chat's, with a seed of its own. */
export const SHAPE: DecoderFolderSpec = {
  ...DEMO_MODEL_SPECS["demo/chat"].spec as DecoderFolderSpec,
  seed: 20251123,
};

interface BuildContext {
  c: DecoderCase;
  shape: DecoderFolderSpec;
  dtype: ExportDtype;
  eosId: number;
  seed: string;
}

/** Random float values of a named tensor (a fixed stream per case seed and name). */
function draw(ctx: BuildContext, name: string, dims: number[], bound: number, center = 0) {
  return uniformValues({ seed: `${ctx.seed}:${name}`, dims, bound, center });
}

/** How a decoder body reads its inputs and names its outputs. */
interface BodyIo {
  ids: string;
  mask: string;
  positionIds: string | null;
  keep: string | null;
  /** past key/value input names per layer, or null (a branch without past). */
  past: string[][] | null;
  /** The name the body gives each graph output (`logits`, `present.0.key`, ...). */
  outName: (name: string) => string;
  /** Declares an output of the (sub)graph. */
  output: (name: string, type: TensorDataType, shape: Dim[]) => void;
}

function rmsNorm(
  g: OnnxGraph,
  w: WeightSink,
  ctx: BuildContext,
  x: string,
  name: string,
  dim: number,
): string {
  const ms = g.node("ReduceMean", [g.node("Pow", [x, g.constFloat([2], true)])], {
    axes: [-1],
    keepdims: 1,
  });
  const rms = g.node("Sqrt", [g.node("Add", [ms, g.constFloat([ctx.shape.rmsNormEps], true)])]);
  const scale = emitParam(g, w, ctx.dtype, `${name}.weight`, draw(ctx, name, [dim], 0.1, 1));
  return g.node("Mul", [g.node("Div", [x, rms]), scale]);
}

function linear(
  g: OnnxGraph,
  w: WeightSink,
  ctx: BuildContext,
  x: string,
  name: string,
  inDim: number,
  outDim: number,
  bound = Math.sqrt(3 / inDim),
): string {
  const values = draw(ctx, `${name}.weight`, [inDim, outDim], bound);
  return emitLinear(g, w, weightFormat(ctx), x, `${name}.weight`, values, inDim, outDim);
}

/** Rounds a float tensor through float16 and back (what a float16 cache stores). */
function roundToCache(g: OnnxGraph, ctx: BuildContext, x: string): string {
  if (!float16Io(ctx.c, ctx.dtype)) return x;
  const h = g.node("Cast", [x], { to: TensorDataType.FLOAT16 });
  return g.node("Cast", [h], { to: TensorDataType.FLOAT });
}

/** The weight encoding of the context's file (q8 with uint8 weights where the case says so). */
function weightFormat(ctx: BuildContext): ExportDtype {
  return ctx.dtype === "q8" && ctx.c.q8Weights === "uint8" ? "uint8" : ctx.dtype;
}

/** Whether case `c`'s file of `dtype` has float16 logits and cache. */
export function float16Io(c: DecoderCase, dtype: ExportDtype): boolean {
  return c.float16Io && hasFloat16Io(dtype);
}

function cacheType(c: DecoderCase, dtype: ExportDtype): TensorDataType {
  return float16Io(c, dtype) ? TensorDataType.FLOAT16 : TensorDataType.FLOAT;
}

function splitHeads(g: OnnxGraph, x: string, heads: number, hd: number): string {
  const r = g.node("Reshape", [x, g.constInt64([0, 0, heads, hd])]);
  return g.node("Transpose", [r], { perm: [0, 2, 1, 3] });
}

/** Positions `[B, S]` from the mask as Hugging Face does: `cumsum(mask) - 1`, 1 at padding. */
function positionsFromMask(g: OnnxGraph, ids: string, mask: string): string {
  const cum = g.node("CumSum", [mask, g.constInt64([1], true)]);
  const pos = g.node("Sub", [cum, g.constInt64([1], true)]);
  const isPad = g.node("Equal", [mask, g.constInt64([0], true)]);
  const filled = g.node("Where", [isPad, g.constInt64([1], true), pos]);
  const one = g.constInt64([1], true);
  const seqLen = g.node("Gather", [g.node("Shape", [ids]), one], { axis: 0 });
  const start = g.node("Unsqueeze", [g.node("Neg", [seqLen]), g.constInt64([0])]);
  return g.node("Slice", [
    filled,
    start,
    g.constInt64([Number.MAX_SAFE_INTEGER]),
    g.constInt64([1]),
  ]);
}

/** Emits the decoder (embedding to logits) into `g`, weights into `w`. */
function decoderBody(g: OnnxGraph, w: WeightSink, ctx: BuildContext, io: BodyIo): void {
  const { c, dtype } = ctx;
  const H = ctx.shape.hiddenSize;
  const nh = ctx.shape.numHeads;
  const kvh = ctx.shape.numKvHeads;
  const hd = c.headDim;
  const ct = cacheType(c, dtype);
  const headBound = ctx.shape.logitStd * Math.sqrt(3 / H);
  const embedName = "model.embed_tokens.weight";
  let x = emitEmbedding(
    g,
    w,
    weightFormat(ctx),
    io.ids,
    embedName,
    draw(ctx, embedName, [ctx.shape.vocabSize, H], 1),
    ctx.shape.vocabSize,
    H,
  );
  const residualBound = (inDim: number) =>
    Math.sqrt(3 / inDim) / Math.sqrt(2 * ctx.shape.numLayers);
  const presentShape = ["batch_size", kvh, "total_sequence_length", hd];

  let attention: (i: number, h: string) => string;
  if (c.attention === "gqa") {
    // As the onnxruntime-genai builder: seqlens_k = sum(mask) - 1 and total_sequence_length, int32.
    const seqlensK = g.node("Cast", [
      g.node("Sub", [
        g.node("ReduceSum", [io.mask, g.constInt64([1])], { keepdims: 0 }),
        g.constInt64([1], true),
      ]),
    ], { to: TensorDataType.INT32 });
    const totalLen = g.node("Cast", [
      g.node("Gather", [g.node("Shape", [io.mask]), g.constInt64([1], true)], { axis: 0 }),
    ], { to: TensorDataType.INT32 });
    const half = hd / 2;
    const cos = new Float32Array(ctx.shape.maxPositions * half);
    const sin = new Float32Array(ctx.shape.maxPositions * half);
    for (let p = 0; p < ctx.shape.maxPositions; p++) {
      for (let i = 0; i < half; i++) {
        const a = p / Math.pow(ctx.shape.ropeTheta, (2 * i) / hd);
        cos[p * half + i] = Math.cos(a);
        sin[p * half + i] = Math.sin(a);
      }
    }
    const f16 = float16Io(c, dtype);
    const table = (v: Float32Array): TensorSource =>
      f16
        ? float16Tensor([ctx.shape.maxPositions, half], v)
        : float32Tensor([ctx.shape.maxPositions, half], v);
    const cosCache = w.initializer("cos_cache", table(cos));
    const sinCache = w.initializer("sin_cache", table(sin));
    const toCache = (t: string) => f16 ? g.node("Cast", [t], { to: TensorDataType.FLOAT16 }) : t;
    const inAttention = c.gqaRotary === "in-attention";
    const rotate = (t: string, heads: number) =>
      g.nodeIn("com.microsoft", "RotaryEmbedding", [t, io.positionIds!, cosCache, sinCache], 1, {
        interleaved: 0,
        num_heads: heads,
      })[0];
    attention = (i, h) => {
      const p = `model.layers.${i}.self_attn`;
      let q: string, k: string, v: string;
      if (c.packedQkv) {
        // The builder's packed MatMul: columns [q | k | v] of one weight.
        const parts = [["q_proj", nh], ["k_proj", kvh], ["v_proj", kvh]] as const;
        const widths = parts.map(([, heads]) => heads * hd);
        const n = widths.reduce((a, b) => a + b, 0);
        const packed = new Float32Array(H * n);
        let col = 0;
        parts.forEach(([proj, heads], j) => {
          const part = draw(ctx, `${p}.${proj}.weight`, [H, heads * hd], Math.sqrt(3 / H));
          for (let r = 0; r < H; r++) {
            packed.set(part.subarray(r * widths[j], (r + 1) * widths[j]), r * n + col);
          }
          col += widths[j];
        });
        q = toCache(emitLinear(g, w, weightFormat(ctx), h, `${p}.qkv_proj.weight`, packed, H, n));
        k = "";
        v = "";
      } else {
        q = toCache(linear(g, w, ctx, h, `${p}.q_proj`, H, nh * hd));
        k = toCache(linear(g, w, ctx, h, `${p}.k_proj`, H, kvh * hd));
        v = toCache(linear(g, w, ctx, h, `${p}.v_proj`, H, kvh * hd));
        if (!inAttention) {
          q = rotate(q, nh);
          k = rotate(k, kvh);
        }
      }
      const past = io.past ? io.past[i] : ["", ""];
      const [out] = g.nodeIn(
        "com.microsoft",
        "GroupQueryAttention",
        [
          q,
          k,
          v,
          past[0],
          past[1],
          seqlensK,
          totalLen,
          ...(inAttention ? [cosCache, sinCache] : []),
        ],
        3,
        {
          num_heads: nh,
          kv_num_heads: kvh,
          scale: { float: 1 / Math.sqrt(hd) },
          do_rotary: inAttention ? 1 : 0,
          rotary_interleaved: 0,
          local_window_size: -1,
        },
        [
          io.outName(`gqa.${i}.output`),
          io.outName(`present.${i}.key`),
          io.outName(`present.${i}.value`),
        ],
      );
      for (const kind of ["key", "value"]) {
        io.output(io.outName(`present.${i}.${kind}`), ct, presentShape);
      }
      const o = f16 ? g.node("Cast", [out], { to: TensorDataType.FLOAT }) : out;
      return linear(g, w, ctx, o, `${p}.o_proj`, nh * hd, H, residualBound(nh * hd));
    };
  } else {
    const positions = io.positionIds ?? positionsFromMask(g, io.ids, io.mask);
    if (c.absolutePositions) {
      const table = draw(ctx, "svc.position_embedding", [ctx.shape.maxPositions, H], 0.5);
      x = g.node("Add", [
        x,
        emitEmbedding(
          g,
          w,
          weightFormat(ctx),
          positions,
          "svc.position_embedding",
          table,
          ctx.shape.maxPositions,
          H,
        ),
      ]);
    }
    const { cos, sin } = ropeTables(g, positions, hd, ctx.shape.ropeTheta);
    const maskBias = causalPaddingMask(g, io.ids, io.mask);
    const scale = g.constFloat([1 / Math.sqrt(hd)], true);
    attention = (i, h) => {
      const p = `model.layers.${i}.self_attn`;
      let q = splitHeads(g, linear(g, w, ctx, h, `${p}.q_proj`, H, nh * hd), nh, hd);
      let k = splitHeads(g, linear(g, w, ctx, h, `${p}.k_proj`, H, kvh * hd), kvh, hd);
      if (c.qkNorm) {
        q = rmsNorm(g, w, ctx, q, `${p}.q_norm`, hd);
        k = rmsNorm(g, w, ctx, k, `${p}.k_norm`, hd);
      }
      q = rope(g, q, cos, sin, hd);
      k = roundToCache(g, ctx, rope(g, k, cos, sin, hd));
      const v = roundToCache(
        g,
        ctx,
        splitHeads(g, linear(g, w, ctx, h, `${p}.v_proj`, H, kvh * hd), kvh, hd),
      );
      const present = [k, v].map((t, j) => {
        const kind = j === 0 ? "key" : "value";
        let all = t;
        if (io.past) {
          const past = float16Io(c, dtype)
            ? g.node("Cast", [io.past[i][j]], { to: TensorDataType.FLOAT })
            : io.past[i][j];
          all = g.node("Concat", [past, t], { axis: 2 });
        }
        const name = io.outName(`present.${i}.${kind}`);
        if (float16Io(c, dtype)) g.node("Cast", [all], { to: TensorDataType.FLOAT16 }, name);
        else g.node("Identity", [all], {}, name);
        io.output(name, ct, presentShape);
        return all;
      });
      const qGrouped = g.node("Reshape", [
        g.node("Mul", [q, scale]),
        g.constInt64([0, kvh, -1, hd]),
      ]);
      const kT = g.node("Transpose", [present[0]], { perm: [0, 1, 3, 2] });
      const scores = g.node("Reshape", [
        g.node("MatMul", [qGrouped, kT]),
        g.constInt64([0, nh, -1, 0]),
      ]);
      const probs = g.node("Softmax", [g.node("Add", [scores, maskBias])], { axis: -1 });
      const probsGrouped = g.node("Reshape", [probs, g.constInt64([0, kvh, -1, 0])]);
      const ctxOut = g.node("Reshape", [
        g.node("MatMul", [probsGrouped, present[1]]),
        g.constInt64([0, nh, -1, hd]),
      ]);
      const merged = g.node("Reshape", [
        g.node("Transpose", [ctxOut], { perm: [0, 2, 1, 3] }),
        g.constInt64([0, 0, nh * hd]),
      ]);
      return linear(g, w, ctx, merged, `${p}.o_proj`, nh * hd, H, residualBound(nh * hd));
    };
  }

  for (let i = 0; i < ctx.shape.numLayers; i++) {
    const p = `model.layers.${i}`;
    x = g.node("Add", [x, attention(i, rmsNorm(g, w, ctx, x, `${p}.input_layernorm`, H))]);
    const h2 = rmsNorm(g, w, ctx, x, `${p}.post_attention_layernorm`, H);
    const I = ctx.shape.intermediateSize;
    const gate = linear(g, w, ctx, h2, `${p}.mlp.gate_proj`, H, I);
    const up = linear(g, w, ctx, h2, `${p}.mlp.up_proj`, H, I);
    const act = g.node("Mul", [g.node("Mul", [gate, g.node("Sigmoid", [gate])]), up]);
    x = g.node("Add", [x, linear(g, w, ctx, act, `${p}.mlp.down_proj`, I, H, residualBound(I))]);
  }
  if (io.keep) x = keepLastPositions(g, x, io.keep);
  x = rmsNorm(g, w, ctx, x, "model.norm", H);
  let logits = linear(g, w, ctx, x, "lm_head", H, ctx.shape.vocabSize, headBound);
  const bias = new Float32Array(ctx.shape.vocabSize);
  bias[ctx.eosId] = ctx.shape.eosLogitBias;
  logits = g.node("Add", [
    logits,
    w.initializer("svc.eos_logit_bias", float32Tensor([ctx.shape.vocabSize], bias)),
  ]);
  const name = io.outName("logits");
  if (float16Io(c, dtype)) g.node("Cast", [logits], { to: TensorDataType.FLOAT16 }, name);
  else g.node("Identity", [logits], {}, name);
  io.output(name, ct, ["batch_size", "sequence_length", ctx.shape.vocabSize]);
}

/**
 * Builds the ONNX graph of one case in one dtype, at the conformance cases' tiny shape unless
 * `shape` says otherwise (bench/decode_formats.ts builds the bench model's shape as a case).
 */
export function buildDecoderCaseGraph(
  c: DecoderCase,
  dtype: ExportDtype,
  eosId: number,
  shape: DecoderFolderSpec = SHAPE,
): OnnxGraph {
  const ctx: BuildContext = { c, shape, dtype, eosId, seed: `conformance:${shape.seed}` };
  const g = new OnnxGraph(`${c.fileName}`);
  const tokenShape = ["batch_size", "sequence_length"];
  const ids = g.input("input_ids", TensorDataType.INT64, tokenShape);
  const mask = g.input("attention_mask", TensorDataType.INT64, [
    "batch_size",
    "total_sequence_length",
  ]);
  const positionIds = c.positionIds
    ? g.input("position_ids", TensorDataType.INT64, tokenShape)
    : null;
  const past: string[][] = [];
  for (let i = 0; i < ctx.shape.numLayers; i++) {
    past.push(
      ["key", "value"].map((kind) =>
        g.input(`past_key_values.${i}.${kind}`, cacheType(c, dtype), [
          "batch_size",
          ctx.shape.numKvHeads,
          "past_sequence_length",
          c.headDim,
        ])
      ),
    );
  }
  const keep = c.numLogitsToKeep ? g.input("num_logits_to_keep", TensorDataType.INT64, []) : null;
  if (!c.merged) {
    decoderBody(g, g, ctx, {
      ids,
      mask,
      positionIds,
      keep,
      past,
      outName: (n) => n,
      output: (n, t, s) => g.output(n, t, s),
    });
    return g;
  }
  // Optimum's merged decoder: weights shared in the outer graph, one branch per cache state.
  const useCache = g.input("use_cache_branch", TensorDataType.BOOL, [1]);
  const seen = new Set<string>();
  const shared: WeightSink = {
    initializer: (name, source) => {
      if (!seen.has(name)) {
        seen.add(name);
        g.initializer(name, source);
      }
      return name;
    },
  };
  const branches: Record<string, Uint8Array> = {};
  const outNames: string[] = [];
  for (const [attr, withPast] of [["then_branch", true], ["else_branch", false]] as const) {
    const prefix = withPast ? "with_past/" : "no_past/";
    const b = new OnnxGraph(withPast ? "decoder_with_past" : "decoder", { prefix });
    const outs: string[] = [];
    decoderBody(b, shared, ctx, {
      ids,
      mask,
      positionIds,
      keep,
      past: withPast ? past : null,
      outName: (n) => `${prefix}${n}`,
      output: (n, t, s) => {
        b.output(n, t, s);
        outs.push(n.slice(prefix.length));
      },
    });
    if (withPast) outNames.push(...outs);
    branches[attr] = encodeGraphProto(b);
  }
  // Outputs in the order the branches declare them (presents per layer, then logits).
  g.nodeMulti("If", [useCache], outNames.length, {
    then_branch: { graph: branches.then_branch },
    else_branch: { graph: branches.else_branch },
  }, outNames);
  for (const n of outNames) {
    if (n === "logits") {
      g.output(n, cacheType(c, dtype), ["batch_size", "sequence_length", ctx.shape.vocabSize]);
    } else {
      g.output(n, cacheType(c, dtype), [
        "batch_size",
        ctx.shape.numKvHeads,
        "total_sequence_length",
        c.headDim,
      ]);
    }
  }
  return g;
}

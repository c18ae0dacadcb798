/**
 * A BERT-shaped encoder as an ONNX graph, in the layout transformers.js' `BertModel` and the
 * feature-extraction pipeline load: inputs `input_ids`, `attention_mask`, `token_type_ids`
 * (int64 `[batch_size, sequence_length]`), output `last_hidden_state` (float
 * `[batch_size, sequence_length, hidden_size]`). Word + position + token-type embeddings and
 * LayerNorm, then post-LN layers of masked multi-head self-attention and a GELU feed-forward block.
 *
 * @module
 */

import { LayerBuilder, type WeightFormat } from "./layers.ts";
import { OnnxGraph, tensorFromArray } from "./onnx_graph.ts";
import { encodeNode, TensorDataType } from "./onnx_proto.ts";
import { floatToHalf } from "../../core/float16.ts";

/** The shape and seed of a generated encoder. */
export interface BertEncoderSpec {
  vocabSize: number;
  hiddenSize: number;
  numLayers: number;
  numHeads: number;
  intermediateSize: number;
  maxPositions: number;
  /** Token-type (segment) vocabulary, 2 in BERT. */
  typeVocabSize: number;
  layerNormEps: number;
  /** Seed of the random weights; same seed, same bytes. */
  seed: number;
}

const MASKED = -1e9;

/** A sentence-transformers Dense layer: `y = act(W x + b)` with `W` `[out, in]` row-major. */
export interface DenseLayerWeights {
  inFeatures: number;
  outFeatures: number;
  weight: Float32Array;
  bias: Float32Array | null;
  activation: "identity" | "tanh";
}

/** The pooled head some exports put in the graph (`sentence_embedding`). */
export interface SentenceHead {
  pooling: "mean" | "cls";
  dense: DenseLayerWeights[];
  normalize: boolean;
}

/** Variations of the encoder's inputs and outputs, as different real exports have them. */
export interface EncoderGraphOptions {
  /** Take `token_type_ids` (BERT); false for XLM-R-style encoders. Default true. */
  tokenTypeIds?: boolean;
  /** Take an extra int64 `task_id` `[1]` input (jina-embeddings-v3 style). */
  taskIdInput?: boolean;
  /** Outputs to declare; default `["last_hidden_state"]`. */
  outputs?: ("last_hidden_state" | "sentence_embedding" | "logits")[];
  /** Labels of the classification head behind `logits` (default 1: a cross-encoder's score). */
  numLabels?: number;
  /** How `sentence_embedding` is computed in the graph (required when it is an output). */
  sentenceHead?: SentenceHead;
  /**
   * Add this constant to the token vectors (a common offset, as real models have; it makes
   * mean-centering steps such as nomic's Matryoshka layer_norm matter).
   */
  hiddenOffset?: number;
  /**
   * Store the weights as float16 initializers cast to float where the graph starts (an fp16
   * file's weights; the compute stays float32 here).
   */
  float16Weights?: boolean;
  /** Return float16 outputs (as fp16 exports do). */
  float16Outputs?: boolean;
}

/**
 * Builds the encoder graph with fp32 or q8 weights.
 *
 * @example
 * ```ts
 * import { writeOnnxModel } from "./onnx_writer.ts";
 * const spec = { vocabSize: 512, hiddenSize: 32, numLayers: 2, numHeads: 4, intermediateSize: 64,
 *   maxPositions: 128, typeVocabSize: 2, layerNormEps: 1e-12, seed: 1 };
 * await writeOnnxModel("/tmp/bert.onnx", buildBertEncoderGraph(spec, "fp32"));
 * ```
 */
export function buildBertEncoderGraph(
  spec: BertEncoderSpec,
  format: WeightFormat,
  options: EncoderGraphOptions = {},
): OnnxGraph {
  const H = spec.hiddenSize;
  const heads = spec.numHeads;
  if (H % heads !== 0) throw new RangeError(`hidden ${H} is not a multiple of ${heads} heads`);
  const hd = H / heads;
  const g = new OnnxGraph("bert_encoder");
  const L = new LayerBuilder(g, { seed: `bert:${spec.seed}`, format });
  const tokenShape = ["batch_size", "sequence_length"];
  const ids = g.input("input_ids", TensorDataType.INT64, tokenShape);
  const mask = g.input("attention_mask", TensorDataType.INT64, tokenShape);
  const types = options.tokenTypeIds === false
    ? null
    : g.input("token_type_ids", TensorDataType.INT64, tokenShape);
  const taskId = options.taskIdInput ? g.input("task_id", TensorDataType.INT64, [1]) : null;

  // Embeddings: word + absolute position + token type, then LayerNorm.
  const seqLen = g.node("Gather", [g.node("Shape", [ids]), g.constInt64([1], true)], { axis: 0 });
  const positions = g.node("Range", [g.constInt64([0], true), seqLen, g.constInt64([1], true)]);
  const word = L.embedding(ids, "embeddings.word_embeddings.weight", spec.vocabSize, H, {
    bound: 1,
  });
  const pos = L.embedding(
    positions,
    "embeddings.position_embeddings.weight",
    spec.maxPositions,
    H,
    {
      bound: 0.5,
      quantize: false,
    },
  );
  let summed = g.node("Add", [word, pos]);
  if (types) {
    const type = L.embedding(
      types,
      "embeddings.token_type_embeddings.weight",
      spec.typeVocabSize,
      H,
      {
        bound: 0.5,
        quantize: false,
      },
    );
    summed = g.node("Add", [summed, type]);
  }
  if (taskId) {
    const task = L.embedding(taskId, "embeddings.task_embeddings.weight", 4, H, {
      bound: 0.5,
      quantize: false,
    });
    summed = g.node("Add", [summed, task]);
  }
  let x = L.layerNorm(summed, "embeddings.LayerNorm", H, spec.layerNormEps);

  // Additive mask [B, 1, 1, S]: 0 where attended, MASKED at padding.
  const maskF = g.node("Cast", [g.node("Unsqueeze", [mask, g.constInt64([1, 2])])], {
    to: TensorDataType.FLOAT,
  });
  const maskBias = g.node("Mul", [
    g.node("Sub", [g.constFloat([1], true), maskF]),
    g.constFloat([MASKED], true),
  ]);
  const scale = g.constFloat([1 / Math.sqrt(hd)], true);

  for (let i = 0; i < spec.numLayers; i++) {
    const p = `encoder.layer.${i}`;
    const proj = (name: string): string =>
      L.splitHeads(
        L.linear(x, `${p}.attention.self.${name}`, H, H, { biasBound: 0.05 }),
        heads,
        hd,
      );
    const q = g.node("Mul", [proj("query"), scale]);
    const k = proj("key");
    const v = proj("value");
    const scores = g.node("Add", [
      g.node("MatMul", [q, g.node("Transpose", [k], { perm: [0, 1, 3, 2] })]),
      maskBias,
    ]);
    const probs = g.node("Softmax", [scores], { axis: -1 });
    const ctx = L.mergeHeads(g.node("MatMul", [probs, v]), heads, hd);
    const attnOut = L.linear(ctx, `${p}.attention.output.dense`, H, H, { biasBound: 0.05 });
    x = L.layerNorm(
      g.node("Add", [x, attnOut]),
      `${p}.attention.output.LayerNorm`,
      H,
      spec.layerNormEps,
    );
    const inter = L.gelu(
      L.linear(x, `${p}.intermediate.dense`, H, spec.intermediateSize, { biasBound: 0.05 }),
    );
    const out = L.linear(inter, `${p}.output.dense`, spec.intermediateSize, H, { biasBound: 0.05 });
    x = L.layerNorm(g.node("Add", [x, out]), `${p}.output.LayerNorm`, H, spec.layerNormEps);
  }
  if (options.hiddenOffset) x = g.node("Add", [x, g.constFloat([options.hiddenOffset], true)]);
  const outputs = options.outputs ?? ["last_hidden_state"];
  const outType = options.float16Outputs ? TensorDataType.FLOAT16 : TensorDataType.FLOAT;
  const emit = (value: string, name: string, shape: (string | number)[]) => {
    if (options.float16Outputs) g.node("Cast", [value], { to: TensorDataType.FLOAT16 }, name);
    else g.node("Identity", [value], {}, name);
    g.output(name, outType, shape);
  };
  if (outputs.includes("last_hidden_state")) emit(x, "last_hidden_state", [...tokenShape, H]);
  if (outputs.includes("sentence_embedding")) {
    const head = options.sentenceHead;
    if (!head) throw new Error("a sentence_embedding output needs options.sentenceHead");
    const [pooled, dim] = sentenceHead(g, x, mask, H, head);
    emit(pooled, "sentence_embedding", ["batch_size", dim]);
  }
  if (outputs.includes("logits")) {
    const labels = options.numLabels ?? 1;
    emit(classifierHead(L, x, H, labels), "logits", ["batch_size", labels]);
  }
  if (options.float16Weights) storeWeightsAsFloat16(g);
  return g;
}

/**
 * Replaces every float initializer of more than one value by a float16 one plus a Cast back to
 * float named like the original, placed before every other node.
 */
function storeWeightsAsFloat16(g: OnnxGraph): void {
  const casts: Uint8Array[] = [];
  g.initializers.forEach(({ name, source }, i) => {
    const count = source.dims.reduce((a, b) => a * b, 1);
    if (source.dataType !== TensorDataType.FLOAT || count <= 1) return;
    const bytes = new Uint8Array(source.byteLength);
    let at = 0;
    for (const chunk of source.chunks()) {
      bytes.set(chunk, at);
      at += chunk.length;
    }
    const f32 = new Float32Array(bytes.buffer);
    const half = new Uint16Array(count);
    for (let k = 0; k < count; k++) half[k] = floatToHalf(f32[k]);
    const halfBytes = new Uint8Array(half.buffer);
    g.initializers[i] = {
      name: g.fresh(`${name}_fp16`),
      source: {
        dataType: TensorDataType.FLOAT16,
        dims: source.dims,
        byteLength: halfBytes.length,
        chunks: () => [halfBytes],
      },
    };
    casts.push(
      encodeNode("Cast", [g.initializers[i].name], [name], {
        name: `${name}_cast`,
        attributes: { to: TensorDataType.FLOAT },
      }),
    );
  });
  g.nodes.unshift(...casts);
}

/**
 * The sequence-classification head of BertForSequenceClassification (pooler: dense + tanh on the
 * [CLS] vector, then a linear classifier): `[B, S, H]` → `[B, labels]`. XLM-RoBERTa's head has
 * the same ops (dense, tanh, out_proj), so one head stands for both layouts.
 */
function classifierHead(L: LayerBuilder, x: string, hidden: number, labels: number): string {
  const g = L.graph;
  const cls = g.node("Gather", [x, g.constInt64([0], true)], { axis: 1 });
  const pooled = g.node("Tanh", [
    L.linear(cls, "pooler.dense", hidden, hidden, { biasBound: 0.05 }),
  ]);
  // A wide weight range spreads the random scores, so rankings differ between documents.
  return L.linear(pooled, "classifier", hidden, labels, { bound: 1, biasBound: 0.1 });
}

/** Pooling, Dense layers and normalization in the graph: `[B, S, H]` → `[B, D]`. */
function sentenceHead(
  g: OnnxGraph,
  x: string,
  mask: string,
  hidden: number,
  head: SentenceHead,
): [string, number] {
  let y: string;
  if (head.pooling === "cls") {
    y = g.node("Gather", [x, g.constInt64([0], true)], { axis: 1 });
  } else {
    const m = g.node("Cast", [g.node("Unsqueeze", [mask, g.constInt64([2])])], {
      to: TensorDataType.FLOAT,
    });
    const axis = g.constInt64([1]);
    const sum = g.node("ReduceSum", [g.node("Mul", [x, m]), axis], { keepdims: 0 });
    y = g.node("Div", [sum, g.node("ReduceSum", [m, axis], { keepdims: 0 })]);
  }
  let dim = hidden;
  head.dense.forEach((d, i) => {
    if (d.inFeatures !== dim) throw new RangeError(`dense ${i} takes ${d.inFeatures}, not ${dim}`);
    // MatMul wants W^T, [in, out].
    const t = new Float32Array(d.inFeatures * d.outFeatures);
    for (let o = 0; o < d.outFeatures; o++) {
      for (let k = 0; k < d.inFeatures; k++) {
        t[k * d.outFeatures + o] = d.weight[o * d.inFeatures + k];
      }
    }
    const w = g.initializer(
      `dense.${i}.weight_t`,
      tensorFromArray(TensorDataType.FLOAT, [d.inFeatures, d.outFeatures], t),
    );
    y = g.node("MatMul", [y, w]);
    if (d.bias) {
      const b = tensorFromArray(TensorDataType.FLOAT, [d.outFeatures], d.bias);
      y = g.node("Add", [y, g.initializer(`dense.${i}.bias`, b)]);
    }
    if (d.activation === "tanh") y = g.node("Tanh", [y]);
    dim = d.outFeatures;
  });
  if (head.normalize) {
    const norm = g.node("Sqrt", [g.node("ReduceSumSquare", [y], { axes: [-1], keepdims: 1 })]);
    y = g.node("Div", [y, norm]);
  }
  return [y, dim];
}

/**
 * config.json of a generated encoder (Hugging Face `BertModel` fields, plus
 * `svc_random_weights: true` and the generator details under `svc_generator`).
 */
export function bertEncoderConfig(
  spec: BertEncoderSpec,
  extra: { padTokenId: number; generator: Record<string, unknown> },
): Record<string, unknown> {
  return {
    architectures: ["BertModel"],
    model_type: "bert",
    vocab_size: spec.vocabSize,
    hidden_size: spec.hiddenSize,
    num_hidden_layers: spec.numLayers,
    num_attention_heads: spec.numHeads,
    intermediate_size: spec.intermediateSize,
    hidden_act: "gelu",
    hidden_dropout_prob: 0.1,
    attention_probs_dropout_prob: 0.1,
    max_position_embeddings: spec.maxPositions,
    type_vocab_size: spec.typeVocabSize,
    initializer_range: 0.02,
    layer_norm_eps: spec.layerNormEps,
    pad_token_id: extra.padTokenId,
    position_embedding_type: "absolute",
    use_cache: true,
    torch_dtype: "float32",
    svc_random_weights: true,
    svc_generator: extra.generator,
  };
}

/**
 * A corpus of tiny generated encoder folders, one per way real Hugging Face ONNX embedding exports
 * differ (inputs, outputs, pooling, Dense modules, config fields, dtype), so the embedding engine
 * can be checked against transformers.js on each. Deterministic: same case, same bytes.
 *
 * | case            | stands for                         | what differs                                  |
 * | --------------- | ---------------------------------- | --------------------------------------------- |
 * | `bert_mean`     | all-MiniLM-L6-v2, gte-small        | token_type_ids, mean pooling, Normalize       |
 * | `bert_cls`      | bge-small-en-v1.5                  | CLS pooling, Normalize                        |
 * | `xlmr_mean`     | multilingual-e5-small              | no token_type_ids input (XLM-R)               |
 * | `pooled_only`   | exports with one pooled output     | only output `sentence_embedding`              |
 * | `gemma_dense`   | embeddinggemma-300m                | `last_hidden_state` + `sentence_embedding`, Dense, Dense, Normalize modules |
 * | `dense_tanh`    | sentence-transformers + Dense      | only `last_hidden_state`; `2_Dense` (Tanh) to apply |
 * | `nomic`         | nomic-embed-text-v1.5              | model_type nomic_bert, `n_embd`, Matryoshka   |
 * | `no_modules`    | a bare ONNX export                 | no modules.json / 1_Pooling                   |
 * | `task_id`       | jina-embeddings-v3                 | extra `task_id` input                         |
 * | `fp16_output`   | `onnx/model_fp16.onnx` exports     | float16 `last_hidden_state`                   |
 *
 * @module
 */

import { join } from "node:path";
import {
  bertEncoderConfig,
  type BertEncoderSpec,
  buildBertEncoderGraph,
  type DenseLayerWeights,
  type EncoderGraphOptions,
} from "./bert_encoder.ts";
import type { WeightFormat } from "./layers.ts";
import { MODEL_GENERATOR_VERSION, ONNX_FILE_NAMES, writeJson } from "./model_folder.ts";
import { writeOnnxModel } from "./onnx_writer.ts";
import { uniformValues } from "./weights.ts";
import { buildWordPieceTokenizer } from "./wordpiece_tokenizer.ts";
import { writeSafetensors } from "../embedding/safetensors.ts";

/** A sentence-transformers Dense module of a case. */
export interface DenseModuleSpec {
  inFeatures: number;
  outFeatures: number;
  bias: boolean;
  activation: "identity" | "tanh";
}

/** One conformance case. */
export interface EncoderCase {
  /** The real models it stands for. */
  standsFor: string;
  modelType: "bert" | "xlm-roberta" | "nomic_bert";
  graph: Omit<EncoderGraphOptions, "sentenceHead">;
  /** Pooling in 1_Pooling/config.json; null: no modules.json and no 1_Pooling at all. */
  pooling: "mean" | "cls" | null;
  normalize: boolean;
  /** Dense modules after pooling (`2_Dense`, `3_Dense`, …). */
  dense: DenseModuleSpec[];
  /** ONNX files to write. */
  formats: ("fp32" | "q8" | "fp16")[];
}

/** The tiny shape every case uses (dims differ in the Dense cases). */
export const CONFORMANCE_SPEC: BertEncoderSpec = {
  vocabSize: 512,
  hiddenSize: 32,
  numLayers: 2,
  numHeads: 4,
  intermediateSize: 64,
  maxPositions: 128,
  typeVocabSize: 2,
  layerNormEps: 1e-12,
  seed: 4242,
};

const H = CONFORMANCE_SPEC.hiddenSize;

/** The cases, by name. */
export const ENCODER_CASES = {
  bert_mean: {
    standsFor: "sentence-transformers/all-MiniLM-L6-v2, thenlper/gte-small",
    modelType: "bert",
    graph: {},
    pooling: "mean",
    normalize: true,
    dense: [],
    formats: ["fp32", "q8"],
  },
  bert_cls: {
    standsFor: "BAAI/bge-small-en-v1.5",
    modelType: "bert",
    graph: {},
    pooling: "cls",
    normalize: true,
    dense: [],
    formats: ["fp32"],
  },
  xlmr_mean: {
    standsFor: "intfloat/multilingual-e5-small",
    modelType: "xlm-roberta",
    graph: { tokenTypeIds: false },
    pooling: "mean",
    normalize: true,
    dense: [],
    formats: ["fp32"],
  },
  pooled_only: {
    standsFor: "exports whose only output is sentence_embedding",
    modelType: "bert",
    graph: { outputs: ["sentence_embedding"] },
    pooling: "mean",
    normalize: true,
    dense: [],
    formats: ["fp32"],
  },
  gemma_dense: {
    standsFor: "onnx-community/embeddinggemma-300m-ONNX",
    modelType: "bert",
    graph: { outputs: ["last_hidden_state", "sentence_embedding"], tokenTypeIds: false },
    pooling: "mean",
    normalize: true,
    dense: [
      { inFeatures: H, outFeatures: 4 * H, bias: false, activation: "identity" },
      { inFeatures: 4 * H, outFeatures: H, bias: false, activation: "identity" },
    ],
    formats: ["fp32"],
  },
  dense_tanh: {
    standsFor: "sentence-transformers models with a Dense module (e.g. LaBSE)",
    modelType: "bert",
    graph: {},
    pooling: "cls",
    normalize: true,
    dense: [{ inFeatures: H, outFeatures: 24, bias: true, activation: "tanh" }],
    formats: ["fp32"],
  },
  nomic: {
    standsFor: "nomic-ai/nomic-embed-text-v1.5",
    modelType: "nomic_bert",
    graph: { hiddenOffset: 0.5 },
    pooling: "mean",
    normalize: true,
    dense: [],
    formats: ["fp32"],
  },
  no_modules: {
    standsFor: "a bare ONNX export without sentence-transformers files",
    modelType: "bert",
    graph: {},
    pooling: null,
    normalize: true,
    dense: [],
    formats: ["fp32"],
  },
  task_id: {
    standsFor: "jinaai/jina-embeddings-v3",
    modelType: "xlm-roberta",
    graph: { tokenTypeIds: false, taskIdInput: true },
    pooling: "mean",
    normalize: true,
    dense: [],
    formats: ["fp32"],
  },
  fp16_output: {
    standsFor: "fp16 exports (onnx/model_fp16.onnx): float16 weights and last_hidden_state",
    modelType: "bert",
    graph: { float16Outputs: true },
    pooling: "mean",
    normalize: true,
    dense: [],
    formats: ["fp16"],
  },
} as const satisfies Record<string, EncoderCase>;

/** A case name. */
export type EncoderCaseName = keyof typeof ENCODER_CASES;

/** File name of each format under `onnx/`, as Hugging Face exports name them. */
export const CONFORMANCE_ONNX_FILES = { ...ONNX_FILE_NAMES, fp16: "model_fp16.onnx" } as const;

/** The deterministic weights of a case's Dense modules (`weight` `[out, in]`). */
export function denseWeights(name: EncoderCaseName): DenseLayerWeights[] {
  const c: EncoderCase = ENCODER_CASES[name];
  return c.dense.map((d, i) => ({
    inFeatures: d.inFeatures,
    outFeatures: d.outFeatures,
    weight: uniformValues({
      seed: `${name}:dense${i}:weight`,
      dims: [d.outFeatures, d.inFeatures],
      bound: Math.sqrt(3 / d.inFeatures),
    }),
    bias: d.bias
      ? uniformValues({ seed: `${name}:dense${i}:bias`, dims: [d.outFeatures], bound: 0.1 })
      : null,
    activation: d.activation,
  }));
}

// Building the WordPiece tokenizer takes about a second; every case shares one.
let tokenizer: ReturnType<typeof buildWordPieceTokenizer> | undefined;
function caseTokenizer(): ReturnType<typeof buildWordPieceTokenizer> {
  const s = CONFORMANCE_SPEC;
  tokenizer ??= buildWordPieceTokenizer(s.vocabSize, { modelMaxLength: s.maxPositions });
  return tokenizer;
}

/** config.json of a case: BERT fields, or nomic_bert's GPT-style names (no hidden_size). */
function caseConfig(name: EncoderCaseName, padTokenId: number): Record<string, unknown> {
  const c: EncoderCase = ENCODER_CASES[name];
  const s = CONFORMANCE_SPEC;
  const generator = { version: MODEL_GENERATOR_VERSION, id: `conformance/${name}`, seed: s.seed };
  const bert = bertEncoderConfig(s, { padTokenId, generator });
  if (c.modelType === "xlm-roberta") {
    return { ...bert, architectures: ["XLMRobertaModel"], model_type: "xlm-roberta" };
  }
  if (c.modelType === "nomic_bert") {
    return {
      architectures: ["NomicBertModel"],
      model_type: "nomic_bert",
      vocab_size: s.vocabSize,
      n_embd: s.hiddenSize,
      n_head: s.numHeads,
      n_layer: s.numLayers,
      n_inner: s.intermediateSize,
      n_positions: s.maxPositions,
      type_vocab_size: s.typeVocabSize,
      layer_norm_epsilon: s.layerNormEps,
      pad_token_id: padTokenId,
      svc_random_weights: true,
      svc_generator: generator,
    };
  }
  return bert;
}

/**
 * Writes the model folder of conformance case `name` into `folder` (created if needed).
 *
 * @example
 * ```ts
 * await writeEncoderCase("/tmp/bge-like", "bert_cls");
 * ```
 */
export async function writeEncoderCase(folder: string, name: EncoderCaseName): Promise<void> {
  const c: EncoderCase = ENCODER_CASES[name];
  const s = CONFORMANCE_SPEC;
  const tok = await caseTokenizer();
  await Deno.mkdir(join(folder, "onnx"), { recursive: true });
  await writeJson(join(folder, "config.json"), caseConfig(name, tok.padId));
  await Deno.writeTextFile(join(folder, "tokenizer.json"), JSON.stringify(tok.tokenizerJson));
  await writeJson(join(folder, "tokenizer_config.json"), tok.tokenizerConfig);
  const dense = denseWeights(name);
  if (c.pooling !== null) {
    const modules = [
      { idx: 0, name: "0", path: "", type: "sentence_transformers.models.Transformer" },
      { idx: 1, name: "1", path: "1_Pooling", type: "sentence_transformers.models.Pooling" },
      ...c.dense.map((_, i) => ({
        idx: 2 + i,
        name: String(2 + i),
        path: `${2 + i}_Dense`,
        type: "sentence_transformers.models.Dense",
      })),
    ];
    if (c.normalize) {
      const idx = modules.length;
      modules.push({
        idx,
        name: String(idx),
        path: `${idx}_Normalize`,
        type: "sentence_transformers.models.Normalize",
      });
    }
    await writeJson(join(folder, "modules.json"), modules);
    await Deno.mkdir(join(folder, "1_Pooling"), { recursive: true });
    await writeJson(join(folder, "1_Pooling", "config.json"), {
      word_embedding_dimension: s.hiddenSize,
      pooling_mode_cls_token: c.pooling === "cls",
      pooling_mode_mean_tokens: c.pooling === "mean",
      pooling_mode_max_tokens: false,
      pooling_mode_mean_sqrt_len_tokens: false,
      pooling_mode_weightedmean_tokens: false,
      pooling_mode_lasttoken: false,
      include_prompt: true,
    });
  }
  for (const [i, d] of c.dense.entries()) {
    const dir = join(folder, `${2 + i}_Dense`);
    await Deno.mkdir(dir, { recursive: true });
    await writeJson(join(dir, "config.json"), {
      in_features: d.inFeatures,
      out_features: d.outFeatures,
      bias: d.bias,
      activation_function: d.activation === "tanh"
        ? "torch.nn.modules.activation.Tanh"
        : "torch.nn.modules.linear.Identity",
    });
    const w = dense[i];
    const tensors: Record<string, { shape: number[]; data: Float32Array }> = {
      "linear.weight": { shape: [d.outFeatures, d.inFeatures], data: w.weight },
    };
    if (w.bias) tensors["linear.bias"] = { shape: [d.outFeatures], data: w.bias };
    await Deno.writeFile(join(dir, "model.safetensors"), writeSafetensors(tensors));
  }
  const graphOptions: EncoderGraphOptions = {
    ...c.graph,
    sentenceHead: {
      pooling: c.pooling ?? "mean",
      dense,
      normalize: c.normalize,
    },
  };
  for (const format of c.formats) {
    // fp16: float16 weights (cast to float inside), float16 outputs where the case says so.
    const weights: WeightFormat = format === "q8" ? "q8" : "fp32";
    await writeOnnxModel(
      join(folder, "onnx", CONFORMANCE_ONNX_FILES[format]),
      buildBertEncoderGraph(s, weights, { ...graphOptions, float16Weights: format === "fp16" }),
      {
        producerName: "svc-model-generator",
        producerVersion: String(MODEL_GENERATOR_VERSION),
        docString: `conformance/${name}: RANDOM weights (${format}), stands for ${c.standsFor}`,
        metadata: { svc_random_weights: "true" },
      },
    );
  }
}

/**
 * A conformance corpus of tiny decoder (chat) models that copy the input/output names, dtypes,
 * operator types and file layouts of real Hugging Face ONNX exports, so the engine can be tested
 * against transformers.js on each layout:
 *
 * - Optimum / onnx-community exports (`onnx/model{,_fp16,_q4,_q4f16,_quantized,_int8,_uint8,
 *   _bnb4}.onnx`), with and without `position_ids` and `num_logits_to_keep`, an explicit
 *   `head_dim` (Qwen3), float16 logits and KV cache in the float16 files;
 * - external data (`model.onnx_data`, and the `model.onnx.data` spelling);
 * - onnxruntime-genai builder exports with `com.microsoft` `GroupQueryAttention`;
 * - legacy merged decoders (`onnx/decoder_model_merged{,_quantized}.onnx`, an `If` on
 *   `use_cache_branch`).
 *
 * Every case has hidden size 64, 2 layers, 4 heads / 2 KV heads, the chat tokenizer and ChatML
 * template of `demo/chat` (vocabulary 4096) and an EOS logit bias so replies end. A file's
 * signature matches the real exports; its internal compute may stay float32 (float16 weights are
 * cast to float, float16 cache inputs are cast to float and the outputs back). New keys and values
 * are rounded through the cache's type before attention uses them, so decoding with the cache
 * equals a full forward pass without it. Weights are random from a fixed seed: same case, same bytes.
 *
 * @module
 */

import { join } from "node:path";
import { buildChatTokenizer } from "./chat_tokenizer.ts";
import { llamaDecoderConfig, type LlamaDecoderSpec } from "./llama_decoder.ts";
import { MODEL_GENERATOR_VERSION, writeChatTokenizerFiles, writeJson } from "./model_folder.ts";
import { writeOnnxModel } from "./onnx_writer.ts";
import { EXPORT_DTYPE_SUFFIX, type ExportDtype } from "./weight_formats.ts";
import { buildDecoderCaseGraph, SHAPE } from "./conformance_decoder_graph.ts";

/** One conformance case: a layout of real exports, and the dtypes its folder holds. */
export interface DecoderCase {
  description: string;
  /** Real repositories with this layout. */
  standsFor: string[];
  /** config.json `model_type` and `architectures[0]`. */
  modelType: string;
  architecture: string;
  /** Base name of the ONNX files under `onnx/` (`model` or `decoder_model_merged`). */
  fileName: "model" | "decoder_model_merged";
  /** The transformers.js dtypes the folder has a file for. */
  dtypes: ExportDtype[];
  /** `optimum`: attention from standard ops; `gqa`: `com.microsoft` `GroupQueryAttention`. */
  attention: "optimum" | "gqa";
  /**
   * GroupQueryAttention only: `in-attention` rotates inside GQA (`do_rotary`, cos/sin caches, no
   * position_ids; the builder's choice for cpu/cuda), `rotary-embedding` uses `com.microsoft`
   * `RotaryEmbedding` nodes fed by position_ids (its choice for DirectML).
   */
  gqaRotary: "in-attention" | "rotary-embedding";
  /** GroupQueryAttention only: one packed Q/K/V MatMul, GQA's key and value inputs left empty. */
  packedQkv: boolean;
  positionIds: boolean;
  numLogitsToKeep: boolean;
  /** Head size; 16 is hidden / heads, anything else is written to config.json as `head_dim`. */
  headDim: number;
  /** Per-head RMSNorm of queries and keys (Qwen3). */
  qkNorm: boolean;
  /**
   * Add a learned absolute position table to the embeddings (not in the real architecture): RoPE
   * alone depends on relative positions only, so this makes where position_ids start observable.
   */
  absolutePositions: boolean;
  /** Merged decoder: a bool `use_cache_branch` input and an `If` node. */
  merged: boolean;
  /**
   * External data: the data file's name after the model file's (`_data`: `model.onnx_data`,
   * `.data`: `model.onnx.data`), and the dtypes that have one; null for none.
   */
  externalData: { suffix: "_data" | ".data"; dtypes: ExportDtype[] } | null;
  /** Write `transformers.js_config.use_external_data_format` (transformers.js fetches `_data`). */
  declareExternalData: boolean;
  /** Write `transformers.js_config.kv_cache_dtype` as onnx-community repos do. */
  kvCacheDtype: boolean;
  /**
   * Whether the fp16 and q4f16 files have float16 logits and cache (Optimum `--dtype fp16`
   * exports) or keep float32 IO (transformers.js' `scripts/quantize.py`, `keep_io_types=True`).
   */
  float16Io: boolean;
  /**
   * Weights of the q8 (`_quantized`) file: transformers.js' quantize.py picks uint8 when the graph
   * has GroupQueryAttention, MultiHeadAttention or Conv, else int8.
   */
  q8Weights: "int8" | "uint8";
}

const BASE = {
  modelType: "llama",
  architecture: "LlamaForCausalLM",
  fileName: "model",
  attention: "optimum",
  gqaRotary: "in-attention",
  packedQkv: false,
  positionIds: true,
  numLogitsToKeep: false,
  headDim: 16,
  qkNorm: false,
  absolutePositions: false,
  merged: false,
  externalData: null,
  declareExternalData: false,
  kvCacheDtype: false,
  float16Io: true,
  q8Weights: "int8",
} as const;

/** The conformance cases by name. */
export const DECODER_CASES: Readonly<Record<string, DecoderCase>> = {
  "optimum-llama": {
    ...BASE,
    description:
      "Optimum/onnx-community export: every transformers.js dtype, position_ids, float16 IO in " +
      "the fp16 and q4f16 files",
    standsFor: [
      "onnx-community/Llama-3.2-1B-Instruct",
      "HuggingFaceTB/SmolLM2-135M-Instruct (onnx/)",
      "onnx-community/Qwen2.5-0.5B-Instruct",
    ],
    dtypes: ["fp32", "fp16", "q4", "q4f16", "q8", "int8", "uint8", "bnb4"],
    kvCacheDtype: true,
  },
  "optimum-qwen3": {
    ...BASE,
    description:
      "Qwen3-style export: head_dim 32 (not hidden / heads), q_norm/k_norm, num_logits_to_keep",
    standsFor: ["onnx-community/Qwen3-0.6B-ONNX"],
    modelType: "qwen3",
    architecture: "Qwen3ForCausalLM",
    dtypes: ["fp32", "fp16", "q4", "q4f16"],
    numLogitsToKeep: true,
    headDim: 32,
    qkNorm: true,
    kvCacheDtype: true,
  },
  "optimum-gemma3": {
    ...BASE,
    description: "Gemma3 text export (model_type gemma3_text): head_dim 32, q_norm/k_norm; " +
      "transformers.js makes its position_ids start at 1, not 0 (an absolute position table " +
      "makes that observable)",
    standsFor: ["onnx-community/gemma-3-1b-it-ONNX", "onnx-community/gemma-3-270m-it-ONNX"],
    modelType: "gemma3_text",
    architecture: "Gemma3ForCausalLM",
    dtypes: ["fp32", "fp16", "q4", "q4f16", "q8"],
    headDim: 32,
    qkNorm: true,
    absolutePositions: true,
    kvCacheDtype: true,
  },
  "tjs-quantize-fp32-io": {
    ...BASE,
    description: "files from transformers.js' scripts/quantize.py: fp16 and q4f16 keep float32 " +
      "logits and cache (keep_io_types), q8 has int8 weights",
    standsFor: [
      "onnx-community/* converted with transformers.js scripts/convert.py + quantize.py",
      "Xenova/* v3 conversions",
    ],
    dtypes: ["fp32", "fp16", "q4f16", "q8"],
    float16Io: false,
  },
  "no-position-ids": {
    ...BASE,
    description: "export without a position_ids input: positions come from attention_mask " +
      "(cumsum - 1) inside the graph",
    standsFor: ["exports whose graph derives positions itself (e.g. older Xenova decoders)"],
    modelType: "qwen2",
    architecture: "Qwen2ForCausalLM",
    dtypes: ["fp32", "q8"],
    positionIds: false,
    numLogitsToKeep: true,
  },
  "external-data": {
    ...BASE,
    description: "weights of model.onnx, model_fp16.onnx and model_q4f16.onnx in " +
      "model{,_fp16,_q4f16}.onnx_data (use_external_data_format per file), as large repos ship them",
    standsFor: ["onnx-community/Llama-3.2-1B-Instruct", "onnx-community/Qwen2.5-1.5B-Instruct"],
    dtypes: ["fp32", "fp16", "q4f16"],
    externalData: { suffix: "_data", dtypes: ["fp32", "fp16", "q4f16"] },
    declareExternalData: true,
    kvCacheDtype: true,
  },
  "external-data-dot": {
    ...BASE,
    description: "weights in model.onnx.data (torch.onnx dynamo / onnxruntime-genai spelling), " +
      "no use_external_data_format (transformers.js would look for model.onnx_data)",
    standsFor: ["microsoft/Phi-3-mini-4k-instruct-onnx (*.onnx.data)"],
    dtypes: ["fp32"],
    externalData: { suffix: ".data", dtypes: ["fp32"] },
  },
  "genai-gqa": {
    ...BASE,
    description: "onnxruntime-genai builder export: com.microsoft GroupQueryAttention with " +
      "rotary inside (do_rotary, cos_cache/sin_cache), seqlens_k and total_sequence_length " +
      "from attention_mask, no position_ids",
    standsFor: [
      "onnx-community/Phi-3.5-mini-instruct-onnx-web",
      "microsoft/Phi-3-mini-4k-instruct-onnx (cpu-int4)",
    ],
    dtypes: ["fp32", "fp16", "q4", "q4f16", "q8"],
    attention: "gqa",
    packedQkv: true,
    q8Weights: "uint8",
    positionIds: false,
  },
  "genai-gqa-rotary-embedding": {
    ...BASE,
    description: "onnxruntime-genai builder export for DirectML: separate Q/K/V MatMuls, " +
      "com.microsoft RotaryEmbedding nodes fed by position_ids, GroupQueryAttention without " +
      "do_rotary; float16 IO",
    standsFor: ["microsoft/Phi-3-mini-4k-instruct-onnx (directml-int4-awq-block-128)"],
    dtypes: ["fp16", "q4f16", "fp32"],
    attention: "gqa",
    gqaRotary: "rotary-embedding",
  },
  "optimum-merged": {
    ...BASE,
    description: "legacy Optimum merged decoder: onnx/decoder_model_merged{,_quantized}.onnx " +
      "with a bool use_cache_branch input and an If node (with-past / without-past branch); " +
      "no onnx/model.onnx",
    standsFor: ["Xenova/TinyLlama-1.1B-Chat-v1.0", "Xenova/Qwen1.5-0.5B-Chat"],
    fileName: "decoder_model_merged",
    dtypes: ["fp32", "q8"],
    merged: true,
  },
};

/** The files of a case under its folder (`onnx/...` and data files). */
export function decoderCaseFiles(c: DecoderCase): string[] {
  const files: string[] = [];
  for (const dtype of c.dtypes) {
    const file = `onnx/${c.fileName}${EXPORT_DTYPE_SUFFIX[dtype]}.onnx`;
    files.push(file);
    if (c.externalData?.dtypes.includes(dtype)) files.push(file + c.externalData.suffix);
  }
  return files;
}

// Every case has the same tokenizer: built once per process.
let tokenizer: ReturnType<typeof buildChatTokenizer> | undefined;

/**
 * Writes the folder of conformance case `name` (config, tokenizer, generation config, README and
 * every ONNX file of its dtypes).
 *
 * @example
 * ```ts
 * await writeDecoderCase("/tmp/llama", "optimum-llama");
 * ```
 */
export async function writeDecoderCase(folder: string, name: string): Promise<void> {
  const c = DECODER_CASES[name];
  if (!c) throw new RangeError(`no decoder conformance case ${name}`);
  tokenizer ??= buildChatTokenizer(SHAPE.vocabSize, { modelMaxLength: SHAPE.maxPositions });
  const tok = await tokenizer;
  const spec: LlamaDecoderSpec = {
    ...SHAPE,
    tieWordEmbeddings: false,
    numLogitsToKeep: c.numLogitsToKeep,
    eosLogitBiasTokenId: tok.imEndId,
  };
  const id = `conformance/${name}`;
  const config = llamaDecoderConfig(spec, {
    bosTokenId: tok.endOfTextId,
    eosTokenId: tok.imEndId,
    padTokenId: tok.endOfTextId,
    generator: { version: MODEL_GENERATOR_VERSION, id, seed: SHAPE.seed, case: name },
  });
  config.model_type = c.modelType;
  config.architectures = [c.architecture];
  config.head_dim = c.headDim;
  const tjs: Record<string, unknown> = {};
  if (c.kvCacheDtype) tjs.kv_cache_dtype = { q4f16: "float16", fp16: "float16" };
  if (c.declareExternalData && c.externalData) {
    tjs.use_external_data_format = Object.fromEntries(
      c.externalData.dtypes.map((d) => [`${c.fileName}${EXPORT_DTYPE_SUFFIX[d]}.onnx`, true]),
    );
  }
  if (Object.keys(tjs).length > 0) config["transformers.js_config"] = tjs;

  await Deno.mkdir(join(folder, "onnx"), { recursive: true });
  await writeJson(join(folder, "config.json"), config);
  await writeChatTokenizerFiles(folder, tok);
  for (const dtype of c.dtypes) {
    const file = `${c.fileName}${EXPORT_DTYPE_SUFFIX[dtype]}.onnx`;
    const external = c.externalData?.dtypes.includes(dtype)
      ? { location: file + c.externalData.suffix, threshold: 1024 }
      : undefined;
    await writeOnnxModel(join(folder, "onnx", file), buildDecoderCaseGraph(c, dtype, tok.imEndId), {
      opset: 17,
      opsetImports: { "com.microsoft": 1 },
      producerName: "svc-model-generator",
      producerVersion: String(MODEL_GENERATOR_VERSION),
      docString: `${id}: generated with RANDOM weights (${dtype}); output is meaningless`,
      metadata: { svc_random_weights: "true", svc_model_id: id },
      externalData: external,
    });
  }
  await Deno.writeTextFile(
    join(folder, "README.md"),
    [
      `# ${id} (generated, RANDOM WEIGHTS)`,
      "",
      c.description + ".",
      "",
      `Stands for: ${c.standsFor.join(", ")}.`,
      "",
      `Files: ${decoderCaseFiles(c).join(", ")}.`,
      "",
    ].join("\n"),
  );
}

/**
 * A generated BERT encoder as a GGUF file for llama.cpp's `bert` architecture: the same random
 * weights as {@link buildBertEncoderGraph} draws for the same spec (same seeds, names and ranges)
 * and the same WordPiece vocabulary as the model folder's tokenizer.json, so llama.cpp's
 * `--embedding` server and our engine tokenize alike and compute the same function.
 *
 * What changes on the way, as llama.cpp's converter (`conversion/bert.py`) does it for a Hugging
 * Face `BertModel`:
 * - linear weights are stored `[out, in]` (ONNX holds `x @ W` with `W` `[in, out]`);
 * - Hugging Face names become llama.cpp's (`token_embd`, `position_embd`, `token_types`,
 *   `token_embd_norm`, `blk.N.attn_q|k|v|output`, `blk.N.attn_output_norm`, `blk.N.ffn_up|down`,
 *   `blk.N.layer_output_norm`);
 * - vocabulary entries get llama.cpp's "phantom space" form: a word `hello` is stored as
 *   `▁hello`, a continuation `##lo` as `lo`, special (control) tokens unchanged;
 * - the pooling of the sentence-transformers folder (mean) becomes `bert.pooling_type`.
 *
 * 1-D tensors and the position and token-type tables stay F32 (as the converter keeps them); the
 * word embeddings and the matrices are F32, F16 or Q8_0 (quantized from the float32 values with
 * llama.cpp's own per-block scales, so not bit-equal to our per-tensor int8 q8 file).
 *
 * @module
 */

import type { BertEncoderSpec } from "./bert_encoder.ts";
import { type GgufTensor, type GgufValue, writeGguf } from "./gguf_writer.ts";
import { uniformValues } from "./weights.ts";
import { buildWordPieceTokenizer } from "./wordpiece_tokenizer.ts";

/** Version of this writer's output; caches of written files compare it. */
export const BERT_GGUF_VERSION = 1;

/** The GGUF weight type of the word embeddings and the matrices. */
export type BertGgufType = "F32" | "F16" | "Q8_0";

/** llama.cpp's `general.file_type` values (`LLAMA_FTYPE_ALL_F32`, `MOSTLY_F16`, `MOSTLY_Q8_0`). */
const FILE_TYPE: Record<BertGgufType, number> = { F32: 0, F16: 1, Q8_0: 7 };

/** llama.cpp's token types (`LLAMA_TOKEN_TYPE_*`). */
const TOKEN_NORMAL = 1;
const TOKEN_CONTROL = 3;

/** llama.cpp's pooling types (`LLAMA_POOLING_TYPE_*`); the generated folders pool by mean. */
export const BERT_GGUF_POOLING = { mean: 1, cls: 2 } as const;

/** The word-start marker llama.cpp's WordPiece tokenizer puts before every word (U+2581). */
const PHANTOM_SPACE = "\u2581";

/** `W^T` of a row-major `[rows, cols]` matrix. */
function transpose(w: Float32Array, rows: number, cols: number): Float32Array {
  const out = new Float32Array(w.length);
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) out[c * rows + r] = w[r * cols + c];
  }
  return out;
}

/**
 * A WordPiece vocabulary entry as llama.cpp stores it: control tokens as they are, `##piece` as
 * `piece`, a word `w` as `▁w`.
 */
export function phantomSpaceToken(token: string, control: boolean): string {
  if (control) return token;
  return token.startsWith("##") ? token.slice(2) : PHANTOM_SPACE + token;
}

/** The GGUF metadata and tensors of an encoder: `spec` as the model folder writes it. */
export async function bertGgufContents(
  spec: BertEncoderSpec,
  type: BertGgufType,
  name: string,
): Promise<{ metadata: [string, GgufValue][]; tensors: GgufTensor[] }> {
  const H = spec.hiddenSize;
  const I = spec.intermediateSize;
  const V = spec.vocabSize;
  if (H % spec.numHeads !== 0) {
    throw new RangeError(`hidden ${H} is not a multiple of ${spec.numHeads} heads`);
  }
  const tok = await buildWordPieceTokenizer(V, { modelMaxLength: spec.maxPositions });
  // The LayerBuilder's seeds: `bert:<seed>:<initializer name>`.
  const draw = (hfName: string, dims: number[], bound: number, center = 0) =>
    uniformValues({ seed: `bert:${spec.seed}:${hfName}`, dims, bound, center });

  const tensors: GgufTensor[] = [];
  const f32 = (gguf: string, hf: string, dims: number[], bound: number, center = 0) =>
    tensors.push({
      name: gguf,
      // ggml order: the row length first.
      dims: [...dims].reverse(),
      type: "F32",
      values: () => draw(hf, dims, bound, center),
    });
  const layerNorm = (gguf: string, hf: string) => {
    f32(`${gguf}.weight`, `${hf}.weight`, [H], 0.1, 1);
    f32(`${gguf}.bias`, `${hf}.bias`, [H], 0.05);
  };
  /** An ONNX `[inDim, outDim]` linear weight as llama.cpp's `[out, in]` rows, and its bias. */
  const linear = (gguf: string, hf: string, inDim: number, outDim: number) => {
    tensors.push({
      name: `${gguf}.weight`,
      dims: [inDim, outDim],
      type,
      values: () =>
        transpose(draw(`${hf}.weight`, [inDim, outDim], Math.sqrt(3 / inDim)), inDim, outDim),
    });
    f32(`${gguf}.bias`, `${hf}.bias`, [outDim], 0.05);
  };

  tensors.push({
    name: "token_embd.weight",
    dims: [H, V],
    type,
    values: () => draw("embeddings.word_embeddings.weight", [V, H], 1),
  });
  f32("position_embd.weight", "embeddings.position_embeddings.weight", [spec.maxPositions, H], 0.5);
  f32(
    "token_types.weight",
    "embeddings.token_type_embeddings.weight",
    [spec.typeVocabSize, H],
    0.5,
  );
  layerNorm("token_embd_norm", "embeddings.LayerNorm");
  for (let i = 0; i < spec.numLayers; i++) {
    const p = `encoder.layer.${i}`;
    const b = `blk.${i}`;
    linear(`${b}.attn_q`, `${p}.attention.self.query`, H, H);
    linear(`${b}.attn_k`, `${p}.attention.self.key`, H, H);
    linear(`${b}.attn_v`, `${p}.attention.self.value`, H, H);
    linear(`${b}.attn_output`, `${p}.attention.output.dense`, H, H);
    layerNorm(`${b}.attn_output_norm`, `${p}.attention.output.LayerNorm`);
    linear(`${b}.ffn_up`, `${p}.intermediate.dense`, H, I);
    linear(`${b}.ffn_down`, `${p}.output.dense`, I, H);
    layerNorm(`${b}.layer_output_norm`, `${p}.output.LayerNorm`);
  }

  const json = tok.tokenizerJson as {
    model: { vocab: Record<string, number> };
    added_tokens: { id: number; content: string; special: boolean }[];
  };
  const control = new Set(json.added_tokens.filter((t) => t.special).map((t) => t.id));
  const tokens = new Array<string>(V);
  for (const [text, id] of Object.entries(json.model.vocab)) {
    tokens[id] = phantomSpaceToken(text, control.has(id));
  }
  const tokenTypes = Array.from(
    { length: V },
    (_, id) => control.has(id) ? TOKEN_CONTROL : TOKEN_NORMAL,
  );
  const vocab = json.model.vocab;

  const u32 = (value: number): GgufValue => ({ type: "uint32", value });
  const metadata: [string, GgufValue][] = [
    ["general.architecture", { type: "string", value: "bert" }],
    ["general.name", { type: "string", value: name }],
    ["general.file_type", u32(FILE_TYPE[type])],
    ["general.alignment", u32(32)],
    ["bert.context_length", u32(spec.maxPositions)],
    ["bert.embedding_length", u32(H)],
    ["bert.feed_forward_length", u32(I)],
    ["bert.block_count", u32(spec.numLayers)],
    ["bert.attention.head_count", u32(spec.numHeads)],
    ["bert.attention.layer_norm_epsilon", { type: "float32", value: spec.layerNormEps }],
    ["bert.attention.causal", { type: "bool", value: false }],
    ["bert.pooling_type", u32(BERT_GGUF_POOLING.mean)],
    ["tokenizer.ggml.model", { type: "string", value: "bert" }],
    ["tokenizer.ggml.pre", { type: "string", value: "default" }],
    ["tokenizer.ggml.tokens", { type: "string[]", value: tokens }],
    ["tokenizer.ggml.token_type", { type: "int32[]", value: tokenTypes }],
    ["tokenizer.ggml.token_type_count", u32(spec.typeVocabSize)],
    // BertNormalizer(lowercase: true, strip_accents: null): accents are stripped with lowercasing.
    ["tokenizer.ggml.normalizer.lowercase", { type: "bool", value: true }],
    ["tokenizer.ggml.normalizer.strip_accents", { type: "bool", value: true }],
    ["tokenizer.ggml.bos_token_id", u32(tok.clsId)],
    ["tokenizer.ggml.cls_token_id", u32(tok.clsId)],
    ["tokenizer.ggml.seperator_token_id", u32(tok.sepId)],
    ["tokenizer.ggml.padding_token_id", u32(tok.padId)],
    ["tokenizer.ggml.unknown_token_id", u32(vocab["[UNK]"])],
    ["tokenizer.ggml.mask_token_id", u32(vocab["[MASK]"])],
    ["tokenizer.ggml.add_bos_token", { type: "bool", value: true }],
    ["tokenizer.ggml.add_sep_token", { type: "bool", value: true }],
  ];
  return { metadata, tensors };
}

/**
 * Writes `spec` (an encoder as {@link writeEncoderFolder} writes it) as a llama.cpp GGUF file of
 * the `bert` architecture with mean pooling.
 *
 * @example
 * ```ts
 * import { DEMO_MODEL_SPECS } from "./demo_models.ts";
 * const demo = DEMO_MODEL_SPECS["demo/embed"];
 * if (demo.kind === "embedding") await writeBertGguf("/tmp/embed.F16.gguf", demo.spec, "F16");
 * ```
 */
export async function writeBertGguf(
  path: string,
  spec: BertEncoderSpec,
  type: BertGgufType,
  name = "svc generated bert (random weights)",
): Promise<void> {
  const { metadata, tensors } = await bertGgufContents(spec, type, name);
  await writeGguf(path, metadata, tensors);
}

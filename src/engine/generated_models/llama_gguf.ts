/**
 * A generated LLaMA decoder as a GGUF file for llama.cpp: the same random weights as
 * {@link buildLlamaDecoderGraph} draws for the same spec (same seeds, names and ranges), and the
 * same tokenizer vocabulary and merges as the model folder's tokenizer.json, so llama.cpp and our
 * engine count the same prompt tokens and compute the same function.
 *
 * What changes on the way, as llama.cpp's `convert_hf_to_gguf.py` does it for Hugging Face LLaMA:
 * - linear weights are stored `[out, in]` (ONNX holds `x @ W` with `W` `[in, out]`);
 * - the rows of Q and K are permuted per head from the rotate-half RoPE layout to llama.cpp's
 *   adjacent-pair layout (row `2i + j` of a head takes row `j * headDim / 2 + i`);
 * - Hugging Face names become llama.cpp's (`blk.N.attn_q.weight`, `token_embd.weight`, ...).
 *
 * Norm weights stay F32 (as the converter keeps 1-D tensors); the rest is F16, Q8_0 or Q4_0,
 * quantized from the float32 values (with llama.cpp's own per-block scales, so not bit-equal to
 * our q8 and q4 files).
 *
 * @module
 */

import { buildChatTokenizer } from "./chat_tokenizer.ts";
import { type GgufTensor, type GgufValue, writeGguf } from "./gguf_writer.ts";
import { type LlamaDecoderSpec, llamaHeadDim } from "./llama_decoder.ts";
import type { DecoderFolderSpec } from "./model_folder.ts";
import { uniformValues } from "./weights.ts";

/** The GGUF weight type of the matrices (norms are always F32). */
export type LlamaGgufType = "F16" | "Q8_0" | "Q4_0";

/** llama.cpp's `general.file_type` values (`LLAMA_FTYPE_MOSTLY_*`). */
const FILE_TYPE: Record<LlamaGgufType, number> = { F16: 1, Q4_0: 2, Q8_0: 7 };

/** `W^T` of a row-major `[rows, cols]` matrix. */
function transpose(w: Float32Array, rows: number, cols: number): Float32Array {
  const out = new Float32Array(w.length);
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) out[c * rows + r] = w[r * cols + c];
  }
  return out;
}

/**
 * Reorders the rows of `w` (`[heads * headDim, cols]`) within each head from rotate-half
 * (`x[i]` pairs with `x[i + headDim/2]`) to adjacent pairs (`x[2i]` with `x[2i + 1]`).
 */
export function permuteRopeRows(w: Float32Array, heads: number, cols: number): Float32Array {
  const headDim = w.length / cols / heads;
  const half = headDim / 2;
  const out = new Float32Array(w.length);
  for (let h = 0; h < heads; h++) {
    for (let i = 0; i < half; i++) {
      for (let j = 0; j < 2; j++) {
        const to = (h * headDim + 2 * i + j) * cols;
        const from = (h * headDim + j * half + i) * cols;
        out.set(w.subarray(from, from + cols), to);
      }
    }
  }
  return out;
}

/**
 * The GGUF metadata and tensors of a decoder: `spec` as the model folder writes it.
 * `eosLogitBias` must be 0 (llama.cpp's llama has no output bias to carry it).
 */
export async function llamaGgufContents(
  spec: DecoderFolderSpec,
  type: LlamaGgufType,
  name: string,
): Promise<{ metadata: [string, GgufValue][]; tensors: GgufTensor[] }> {
  if (spec.eosLogitBias !== 0) throw new RangeError("a GGUF decoder cannot carry an EOS bias");
  const tok = await buildChatTokenizer(spec.vocabSize, { modelMaxLength: spec.maxPositions });
  const full: LlamaDecoderSpec = { ...spec, eosLogitBiasTokenId: tok.imEndId };
  const H = full.hiddenSize;
  const hd = llamaHeadDim(full);
  const I = full.intermediateSize;
  const V = full.vocabSize;
  const seed = `llama:${full.seed}`;
  const headBound = full.logitStd * Math.sqrt(3 / H);
  const residualBound = (inDim: number) => Math.sqrt(3 / inDim) / Math.sqrt(2 * full.numLayers);
  const draw = (hfName: string, dims: number[], bound: number, center = 0) =>
    uniformValues({ seed: `${seed}:${hfName}`, dims, bound, center });

  const tensors: GgufTensor[] = [];
  const norm = (gguf: string, hf: string) =>
    tensors.push({
      name: gguf,
      dims: [H],
      type: "F32",
      values: () => draw(`${hf}.weight`, [H], 0.1, 1),
    });
  /** An ONNX `[inDim, outDim]` linear weight as llama.cpp's `[out, in]` rows. */
  const linear = (
    gguf: string,
    hf: string,
    inDim: number,
    outDim: number,
    bound = Math.sqrt(3 / inDim),
    ropeHeads = 0,
  ) =>
    tensors.push({
      name: gguf,
      dims: [inDim, outDim],
      type,
      values: () => {
        const rows = transpose(draw(`${hf}.weight`, [inDim, outDim], bound), inDim, outDim);
        return ropeHeads ? permuteRopeRows(rows, ropeHeads, inDim) : rows;
      },
    });

  const embedBound = full.tieWordEmbeddings ? headBound : 1;
  tensors.push({
    name: "token_embd.weight",
    dims: [H, V],
    type,
    values: () => draw("model.embed_tokens.weight", [V, H], embedBound),
  });
  for (let i = 0; i < full.numLayers; i++) {
    const p = `model.layers.${i}`;
    const b = `blk.${i}`;
    norm(`${b}.attn_norm.weight`, `${p}.input_layernorm`);
    linear(
      `${b}.attn_q.weight`,
      `${p}.self_attn.q_proj`,
      H,
      full.numHeads * hd,
      undefined,
      full.numHeads,
    );
    linear(
      `${b}.attn_k.weight`,
      `${p}.self_attn.k_proj`,
      H,
      full.numKvHeads * hd,
      undefined,
      full.numKvHeads,
    );
    linear(`${b}.attn_v.weight`, `${p}.self_attn.v_proj`, H, full.numKvHeads * hd);
    linear(
      `${b}.attn_output.weight`,
      `${p}.self_attn.o_proj`,
      full.numHeads * hd,
      H,
      residualBound(full.numHeads * hd),
    );
    norm(`${b}.ffn_norm.weight`, `${p}.post_attention_layernorm`);
    linear(`${b}.ffn_gate.weight`, `${p}.mlp.gate_proj`, H, I);
    linear(`${b}.ffn_up.weight`, `${p}.mlp.up_proj`, H, I);
    linear(`${b}.ffn_down.weight`, `${p}.mlp.down_proj`, I, H, residualBound(I));
  }
  norm("output_norm.weight", "model.norm");
  // A tied head reads token_embd.weight (llama.cpp falls back to it when output.weight is absent).
  if (!full.tieWordEmbeddings) linear("output.weight", "lm_head", H, V, headBound);

  const json = tok.tokenizerJson as {
    model: { vocab: Record<string, number>; merges: (string | [string, string])[] };
    added_tokens: { id: number; content: string; special: boolean }[];
  };
  const tokens = new Array<string>(V);
  const tokenTypes = new Array<number>(V).fill(1); // LLAMA_TOKEN_TYPE_NORMAL
  for (const [text, id] of Object.entries(json.model.vocab)) tokens[id] = text;
  for (const t of json.added_tokens) {
    tokens[t.id] = t.content;
    tokenTypes[t.id] = t.special ? 3 : 4; // CONTROL : USER_DEFINED
  }
  const merges = json.model.merges.map((m) => typeof m === "string" ? m : m.join(" "));

  const u32 = (value: number): GgufValue => ({ type: "uint32", value });
  const metadata: [string, GgufValue][] = [
    ["general.architecture", { type: "string", value: "llama" }],
    ["general.name", { type: "string", value: name }],
    ["general.file_type", u32(FILE_TYPE[type])],
    ["general.alignment", u32(32)],
    ["llama.context_length", u32(full.maxPositions)],
    ["llama.embedding_length", u32(H)],
    ["llama.block_count", u32(full.numLayers)],
    ["llama.feed_forward_length", u32(I)],
    ["llama.rope.dimension_count", u32(hd)],
    ["llama.attention.head_count", u32(full.numHeads)],
    ["llama.attention.head_count_kv", u32(full.numKvHeads)],
    ["llama.attention.layer_norm_rms_epsilon", { type: "float32", value: full.rmsNormEps }],
    ["llama.rope.freq_base", { type: "float32", value: full.ropeTheta }],
    ["llama.vocab_size", u32(V)],
    ["tokenizer.ggml.model", { type: "string", value: "gpt2" }],
    ["tokenizer.ggml.pre", { type: "string", value: "qwen2" }],
    ["tokenizer.ggml.tokens", { type: "string[]", value: tokens }],
    ["tokenizer.ggml.token_type", { type: "int32[]", value: tokenTypes }],
    ["tokenizer.ggml.merges", { type: "string[]", value: merges }],
    ["tokenizer.ggml.bos_token_id", u32(tok.endOfTextId)],
    ["tokenizer.ggml.eos_token_id", u32(tok.imEndId)],
    ["tokenizer.ggml.padding_token_id", u32(tok.endOfTextId)],
    ["tokenizer.ggml.add_bos_token", { type: "bool", value: false }],
  ];
  return { metadata, tensors };
}

/**
 * Writes `spec` (a decoder as {@link writeDecoderFolder} writes it) as a llama.cpp GGUF file.
 *
 * @example
 * ```ts
 * import { DEMO_MODEL_SPECS } from "./demo_models.ts";
 * const demo = DEMO_MODEL_SPECS["demo/chat-bench"];
 * if (demo.kind === "chat") await writeLlamaGguf("/tmp/chat-bench.Q8_0.gguf", demo.spec, "Q8_0");
 * ```
 */
export async function writeLlamaGguf(
  path: string,
  spec: DecoderFolderSpec,
  type: LlamaGgufType,
  name = "svc generated llama (random weights)",
): Promise<void> {
  const { metadata, tensors } = await llamaGgufContents(spec, type, name);
  await writeGguf(path, metadata, tensors);
}

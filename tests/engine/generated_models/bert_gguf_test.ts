import { assert, assertEquals } from "../../_assert.ts";
import { halfToFloat } from "../../../src/core/float16.ts";
import {
  bertGgufContents,
  phantomSpaceToken,
  writeBertGguf,
} from "../../../fixtures/generated_models/bert_gguf.ts";
import { buildBertEncoderGraph } from "../../../src/engine/generated_models/bert_encoder.ts";
import { buildWordPieceTokenizer } from "../../../src/engine/generated_models/wordpiece_tokenizer.ts";
import { TINY_EMBED } from "./_fixtures.ts";
import { decodeQ8_0, readGguf } from "./_gguf_reader.ts";

const spec = TINY_EMBED;
const H = spec.hiddenSize;
const I = spec.intermediateSize;

/** The fp32 ONNX encoder's initializer `name` as floats. */
function onnxInitializer(name: string): { dims: readonly number[]; values: Float32Array } {
  const graph = buildBertEncoderGraph(spec, "fp32");
  const t = graph.initializers.find((x) => x.name === name);
  if (!t) throw new Error(`no initializer ${name}`);
  const raw = new Uint8Array(t.source.byteLength);
  let at = 0;
  for (const c of t.source.chunks()) raw.set(c, (at += c.length) - c.length);
  return { dims: t.source.dims, values: new Float32Array(raw.buffer) };
}

Deno.test("phantomSpaceToken() stores words as ▁word, ##pieces bare and control tokens as they are", () => {
  assertEquals(phantomSpaceToken("hello", false), "\u2581hello");
  assertEquals(phantomSpaceToken("##lo", false), "lo");
  assertEquals(phantomSpaceToken(",", false), "\u2581,");
  assertEquals(phantomSpaceToken("[CLS]", true), "[CLS]");
});

Deno.test("writeBertGguf() writes llama.cpp's bert header, metadata and tensor table", async () => {
  const path = await Deno.makeTempFile({ suffix: ".gguf" });
  try {
    await writeBertGguf(path, spec, "F16", "demo/embed");
    const bytes = await Deno.readFile(path);
    const f = readGguf(bytes);
    assertEquals([f.magic, f.version], ["GGUF", 3]);
    const m = f.metadata;
    assertEquals(m.get("general.architecture"), "bert");
    assertEquals(m.get("general.name"), "demo/embed");
    assertEquals(m.get("general.file_type"), 1);
    assertEquals(
      ["context_length", "embedding_length", "feed_forward_length", "block_count"].map((k) =>
        m.get(`bert.${k}`)
      ),
      [spec.maxPositions, H, I, spec.numLayers],
    );
    assertEquals(m.get("bert.attention.head_count"), spec.numHeads);
    assert(Math.abs((m.get("bert.attention.layer_norm_epsilon") as number) - 1e-12) < 1e-18);
    assertEquals(m.get("bert.attention.causal"), false);
    assertEquals(m.get("bert.pooling_type"), 1); // mean, as the folder's 1_Pooling says

    // The vocabulary: the tokenizer.json's ids, in llama.cpp's phantom-space form.
    const tok = await buildWordPieceTokenizer(spec.vocabSize, {
      modelMaxLength: spec.maxPositions,
    });
    const vocab = (tok.tokenizerJson as { model: { vocab: Record<string, number> } }).model.vocab;
    const tokens = m.get("tokenizer.ggml.tokens") as string[];
    const types = m.get("tokenizer.ggml.token_type") as number[];
    assertEquals(m.get("tokenizer.ggml.model"), "bert");
    assertEquals([tokens.length, types.length], [spec.vocabSize, spec.vocabSize]);
    assertEquals(new Set(tokens).size, tokens.length, "no two tokens read alike");
    assertEquals(tokens.slice(0, 5), ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]);
    assertEquals(types.slice(0, 6), [3, 3, 3, 3, 3, 1]);
    assertEquals(tokens[vocab["the"]], "\u2581the");
    assertEquals(tokens[vocab["##s"]], "s");
    assertEquals(m.get("tokenizer.ggml.token_type_count"), spec.typeVocabSize);
    assertEquals(
      ["bos", "cls", "seperator", "padding", "unknown", "mask"].map((k) =>
        m.get(`tokenizer.ggml.${k}_token_id`)
      ),
      [tok.clsId, tok.clsId, tok.sepId, tok.padId, vocab["[UNK]"], vocab["[MASK]"]],
    );
    assertEquals(m.get("tokenizer.ggml.add_bos_token"), true);
    assertEquals(m.get("tokenizer.ggml.add_sep_token"), true);

    // The tensor table: llama.cpp's names and ggml dims; matrices F16, the rest F32.
    const table = new Map(f.tensors.map((t) => [t.name, t]));
    assertEquals(f.tensors.length, 5 + 16 * spec.numLayers);
    const expect = (name: string, dims: number[], type: number) =>
      assertEquals([table.get(name)?.dims, table.get(name)?.type], [dims, type], name);
    expect("token_embd.weight", [H, spec.vocabSize], 1);
    expect("position_embd.weight", [H, spec.maxPositions], 0);
    expect("token_types.weight", [H, spec.typeVocabSize], 0);
    expect("token_embd_norm.weight", [H], 0);
    expect("token_embd_norm.bias", [H], 0);
    for (let i = 0; i < spec.numLayers; i++) {
      for (const p of ["attn_q", "attn_k", "attn_v", "attn_output"]) {
        expect(`blk.${i}.${p}.weight`, [H, H], 1);
        expect(`blk.${i}.${p}.bias`, [H], 0);
      }
      expect(`blk.${i}.ffn_up.weight`, [H, I], 1);
      expect(`blk.${i}.ffn_up.bias`, [I], 0);
      expect(`blk.${i}.ffn_down.weight`, [I, H], 1);
      expect(`blk.${i}.ffn_down.bias`, [H], 0);
      for (const n of ["attn_output_norm", "layer_output_norm"]) {
        expect(`blk.${i}.${n}.weight`, [H], 0);
        expect(`blk.${i}.${n}.bias`, [H], 0);
      }
    }
    // Data: aligned, and holds the ONNX weights (ffn_up transposed to [out, in] rows).
    assert(f.tensors.every((t) => t.offset % 32 === 0));
    const last = f.tensors[f.tensors.length - 1];
    assertEquals(bytes.length, f.dataStart + last.offset + Math.ceil(H * 4 / 32) * 32);
    const up = onnxInitializer("encoder.layer.1.intermediate.dense.weight");
    assertEquals(up.dims, [H, I]);
    const data = bytes.subarray(f.dataStart + table.get("blk.1.ffn_up.weight")!.offset);
    const half = new DataView(data.buffer, data.byteOffset);
    for (const [r, c] of [[0, 0], [5, 17], [I - 1, H - 1]]) {
      const gguf = halfToFloat(half.getUint16(2 * (r * H + c), true));
      assert(Math.abs(gguf - up.values[c * I + r]) < 1e-3, `ffn_up[${r}, ${c}]`);
    }
  } finally {
    await Deno.remove(path);
  }
});

Deno.test("bertGgufContents() keeps F32 values exact and Q8_0 within half a block step or so", async () => {
  const f32 = await bertGgufContents(spec, "F32", "t");
  const q8 = await bertGgufContents(spec, "Q8_0", "t");
  const word = onnxInitializer("embeddings.word_embeddings.weight");
  const exact = f32.tensors.find((t) => t.name === "token_embd.weight")!;
  assertEquals(exact.type, "F32");
  assertEquals([...exact.values().subarray(0, 4 * H)], [...word.values.subarray(0, 4 * H)]);
  const pos = onnxInitializer("embeddings.position_embeddings.weight");
  const posGguf = f32.tensors.find((t) => t.name === "position_embd.weight")!;
  assertEquals([...posGguf.values()], [...pos.values]);
  // Q8_0: the matrices quantized per 32-value block; norms and tables stay F32.
  const types = new Map(q8.tensors.map((t) => [t.name, t.type]));
  assertEquals(types.get("blk.0.attn_q.weight"), "Q8_0");
  assertEquals(types.get("token_embd.weight"), "Q8_0");
  assertEquals(types.get("position_embd.weight"), "F32");
  assertEquals(types.get("blk.0.attn_q.bias"), "F32");
  const path = await Deno.makeTempFile({ suffix: ".gguf" });
  try {
    await writeBertGguf(path, spec, "Q8_0");
    const bytes = await Deno.readFile(path);
    const f = readGguf(bytes);
    assertEquals(f.metadata.get("general.file_type"), 7);
    const t = f.tensors.find((x) => x.name === "token_embd.weight")!;
    const back = decodeQ8_0(bytes.subarray(f.dataStart + t.offset), 4 * H);
    // Word embeddings lie in [-1, 1]: a block scale is at most 1/127; half a step off, plus the
    // rounding of the scale to fp16 (up to 127 steps of 2^-11 relative).
    for (let i = 0; i < 4 * H; i++) {
      assert(Math.abs(back[i] - word.values[i]) <= 0.5 / 127 + 1 / 2048, `token_embd[${i}]`);
    }
  } finally {
    await Deno.remove(path);
  }
});

// The embedding engine against transformers.js on every encoder conformance case (tiny generated
// folders shaped like real Hugging Face ONNX exports), on the native CPU runtime. The oracle is
// pipeline("feature-extraction") with the model's pooling, followed (where the model has them) by
// the sentence-transformers Dense layers and normalization computed here, or the model's own
// sentence_embedding output. Single inputs and a mixed-length batch must both match.
import { assert, assertEquals, assertMatch, assertRejects } from "../../_assert.ts";
import { cosine } from "../../_helpers/vectors.ts";
import { join } from "node:path";
import {
  CONFORMANCE_SPEC,
  denseWeights,
  ENCODER_CASES,
  type EncoderCase,
  type EncoderCaseName,
  writeEncoderCase,
} from "../../../fixtures/generated_models/conformance_encoders.ts";
import { EmbeddingEngine } from "../../../src/engine/embedding/embedding_engine.ts";
import { loadModel } from "../../../src/engine/load_model.ts";
import { setupLogger } from "../../../src/core/logging.ts";
import { ServiceError } from "../../../src/core/errors.ts";
import { setUpTransformers } from "../generated_models/_fixtures.ts";

const TEXTS = [
  "a",
  "The quick brown fox jumps over the lazy dog, then runs far away.",
  "Embeddings turn text into vectors",
  "ü漢字 and ASCII",
];

const root = await Deno.makeTempDir({ prefix: "svc-conformance-" });
const folders = new Map<EncoderCaseName, string>();
async function caseFolder(name: EncoderCaseName): Promise<string> {
  let folder = folders.get(name);
  if (!folder) {
    folder = join(root, name);
    await writeEncoderCase(folder, name);
    folders.set(name, folder);
  }
  return folder;
}

type Dtype = "fp32" | "q8" | "fp16";

function normalize(v: Float32Array): Float32Array {
  const n = Math.hypot(...v);
  return v.map((x) => x / n);
}

/** Dense layers as sentence-transformers computes them: act(W x + b), W [out, in]. */
function dense(name: EncoderCaseName, v: Float32Array): Float32Array {
  for (const d of denseWeights(name)) {
    const y = new Float32Array(d.outFeatures);
    for (let o = 0; o < d.outFeatures; o++) {
      let s = d.bias ? d.bias[o] : 0;
      for (let k = 0; k < d.inFeatures; k++) s += d.weight[o * d.inFeatures + k] * v[k];
      y[o] = d.activation === "tanh" ? Math.tanh(s) : s;
    }
    v = y;
  }
  return v;
}

/** Pooled, not yet normalized vectors from transformers.js' feature-extraction pipeline. */
async function pipelinePooled(
  folder: string,
  dtype: Dtype,
  pooling: "mean" | "cls",
): Promise<Float32Array[]> {
  const { pipeline } = setUpTransformers();
  const fe = await pipeline("feature-extraction", folder, { device: "cpu", dtype });
  try {
    const out: Float32Array[] = [];
    for (const text of TEXTS) {
      const t = await fe(text, { pooling, normalize: false });
      out.push(Float32Array.from(t.data as ArrayLike<number>));
    }
    return out;
  } finally {
    await fe.dispose();
  }
}

/** The model's own `sentence_embedding` output, one text at a time. */
async function rawSentenceEmbeddings(folder: string, dtype: Dtype): Promise<Float32Array[]> {
  const t = setUpTransformers();
  const tokenizer = await t.AutoTokenizer.from_pretrained(folder);
  const model = await t.AutoModel.from_pretrained(folder, { device: "cpu", dtype });
  try {
    const out: Float32Array[] = [];
    for (const text of TEXTS) {
      const result = await model(tokenizer(text));
      out.push(Float32Array.from(result.sentence_embedding.data as ArrayLike<number>));
    }
    return out;
  } finally {
    await model.dispose();
  }
}

async function engineFor(name: EncoderCaseName, dtype: Dtype): Promise<EmbeddingEngine> {
  const model = await loadModel(await caseFolder(name), "embedding", { device: "cpu", dtype });
  return await EmbeddingEngine.create(model, { id: `conformance/${name}` });
}

/** Checks single inputs and one mixed-length batch against the expected vectors. */
async function assertMatches(
  engine: EmbeddingEngine,
  expected: Float32Array[],
  options: { dimensions?: number } = {},
): Promise<void> {
  const single: Float32Array[] = [];
  for (const text of TEXTS) single.push((await engine.embed([text], options)).vectors[0]);
  const batch = (await engine.embed(TEXTS, options)).vectors;
  for (let i = 0; i < TEXTS.length; i++) {
    const c1 = cosine(single[i], expected[i]);
    const c2 = cosine(batch[i], expected[i]);
    assert(c1 >= 0.9999, `text ${i} alone: cosine ${c1}`);
    assert(c2 >= 0.9999, `text ${i} in a batch: cosine ${c2}`);
    assert(Math.abs(Math.hypot(...batch[i]) - 1) < 1e-4, "unit length");
  }
  assert(cosine(batch[0], batch[1]) < 0.999, "different texts, different vectors");
}

const POOLED_CASES: [EncoderCaseName, Dtype][] = [
  ["bert_mean", "fp32"],
  ["bert_mean", "q8"],
  ["bert_cls", "fp32"],
  ["xlmr_mean", "fp32"],
  ["dense_tanh", "fp32"],
  ["nomic", "fp32"],
  ["fp16_output", "fp16"],
];

for (const [name, dtype] of POOLED_CASES) {
  const c: EncoderCase = ENCODER_CASES[name];
  Deno.test(`EmbeddingEngine equals transformers.js on '${name}' (${c.standsFor}, ${dtype})`, async () => {
    const folder = await caseFolder(name);
    const expected = (await pipelinePooled(folder, dtype, c.pooling ?? "mean")).map((v) =>
      normalize(dense(name, v))
    );
    const engine = await engineFor(name, dtype);
    try {
      assertEquals(
        engine.info.dimensions,
        c.dense.at(-1)?.outFeatures ?? CONFORMANCE_SPEC.hiddenSize,
      );
      await assertMatches(engine, expected);
    } finally {
      await engine.dispose();
    }
  });
}

Deno.test("EmbeddingEngine uses a model's only output sentence_embedding as is ('pooled_only')", async () => {
  const folder = await caseFolder("pooled_only");
  const expected = await rawSentenceEmbeddings(folder, "fp32");
  const engine = await engineFor("pooled_only", "fp32");
  try {
    assertEquals(engine.info.dimensions, CONFORMANCE_SPEC.hiddenSize);
    await assertMatches(engine, expected);
  } finally {
    await engine.dispose();
  }
});

Deno.test("EmbeddingEngine reads sentence_embedding and does not apply the Dense modules again ('gemma_dense')", async () => {
  const folder = await caseFolder("gemma_dense");
  const expected = await rawSentenceEmbeddings(folder, "fp32");
  // The export's pooled output is mean pooling + both Dense modules + Normalize.
  const viaModules = (await pipelinePooled(folder, "fp32", "mean")).map((v) =>
    normalize(dense("gemma_dense", v))
  );
  for (let i = 0; i < TEXTS.length; i++) assert(cosine(expected[i], viaModules[i]) > 0.9999);
  const engine = await engineFor("gemma_dense", "fp32");
  try {
    assertEquals(engine.info.dimensions, CONFORMANCE_SPEC.hiddenSize);
    await assertMatches(engine, expected);
  } finally {
    await engine.dispose();
  }
});

Deno.test("EmbeddingEngine shortens nomic_bert vectors with layer_norm, truncation, normalization", async () => {
  const folder = await caseFolder("nomic");
  const dims = 12;
  const expected = (await pipelinePooled(folder, "fp32", "mean")).map((v) => {
    const mean = v.reduce((a, b) => a + b, 0) / v.length;
    const variance = v.reduce((a, b) => a + (b - mean) ** 2, 0) / v.length;
    const ln = v.map((x) => (x - mean) / Math.sqrt(variance + 1e-5));
    return normalize(ln.slice(0, dims));
  });
  // Plain truncation gives other vectors, so the recipe is really tested.
  const plain = (await pipelinePooled(folder, "fp32", "mean")).map((v) => v.slice(0, dims));
  assert(cosine(plain[1], expected[1]) < 0.999, `cosine ${cosine(plain[1], expected[1])}`);
  const engine = await engineFor("nomic", "fp32");
  try {
    assertEquals(engine.info.dimensions, CONFORMANCE_SPEC.hiddenSize);
    assertEquals(engine.info.contextLength, CONFORMANCE_SPEC.maxPositions);
    await assertMatches(engine, expected, { dimensions: dims });
  } finally {
    await engine.dispose();
  }
});

Deno.test("EmbeddingEngine truncates and renormalizes other models' vectors for dimensions", async () => {
  const folder = await caseFolder("bert_mean");
  const expected = (await pipelinePooled(folder, "fp32", "mean")).map((v) =>
    normalize(v.slice(0, 10))
  );
  const engine = await engineFor("bert_mean", "fp32");
  try {
    await assertMatches(engine, expected, { dimensions: 10 });
  } finally {
    await engine.dispose();
  }
});

Deno.test("EmbeddingEngine warns loudly and mean-pools a folder without pooling config ('no_modules')", async () => {
  const folder = await caseFolder("no_modules");
  const expected = (await pipelinePooled(folder, "fp32", "mean")).map(normalize);
  const lines: string[] = [];
  setupLogger({ level: "warn", stderr: false, sink: (line) => lines.push(line) });
  let engine: EmbeddingEngine | undefined;
  try {
    engine = await engineFor("no_modules", "fp32");
  } finally {
    setupLogger({ level: "info" });
  }
  try {
    const warning = lines.find((l) => l.includes("pooling config"));
    assert(warning, `no warning among ${JSON.stringify(lines)}`);
    assertMatch(warning, /WARN.*assuming MEAN pooling.*1_Pooling\/config\.json/);
    await assertMatches(engine, expected);
  } finally {
    await engine.dispose();
  }
});

Deno.test("EmbeddingEngine refuses at load an encoder input it cannot feed ('task_id')", async () => {
  const model = await loadModel(await caseFolder("task_id"), "embedding", {
    device: "cpu",
    dtype: "fp32",
  });
  const err = await assertRejects(
    () => EmbeddingEngine.create(model, { id: "jina-like" }),
    ServiceError,
  );
  assertMatch(
    err.message,
    /^embedding model 'jina-like' takes the input 'task_id', which the embedding engine cannot feed \(it feeds input_ids, attention_mask, token_type_ids\)$/,
  );
});

Deno.test({
  name: "conformance corpus cleanup",
  fn: async () => {
    await Deno.remove(root, { recursive: true });
  },
});

import {
  assert,
  assertAlmostEquals,
  assertEquals,
  assertMatch,
  assertRejects,
  assertThrows,
} from "../../_assert.ts";
import { demoEmbeddingEngine, demoFolder } from "../../_helpers/demo_engines.ts";
import { ContextLengthError, ValidationError } from "../../../src/core/errors.ts";
import { engineOfKind } from "../../../src/core/model_kind.ts";
import { readPoolingConfig } from "../../../src/engine/embedding/embedding_engine.ts";
import { loadModel } from "../../../src/engine/load_model.ts";

const TEXTS = [
  "a",
  "The quick brown fox jumps over the lazy dog.",
  "Embeddings turn text into vectors.",
  "word ".repeat(120),
  "ü漢字😀 and some ASCII",
];

function maxDiff(a: Float32Array, b: Float32Array): number {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

Deno.test("EmbeddingEngine returns one unit vector per input, in order", async () => {
  const engine = await demoEmbeddingEngine();
  const { vectors, promptTokens } = await engine.embed(TEXTS);
  assertEquals(vectors.length, TEXTS.length);
  for (const v of vectors) {
    assertEquals(v.length, engine.info.dimensions);
    assertAlmostEquals(Math.hypot(...v), 1, 1e-5);
  }
  assert(maxDiff(vectors[1], vectors[2]) > 1e-3, "different texts give different vectors");
  const again = await engine.embed([TEXTS[2]]);
  assert(maxDiff(again.vectors[0], vectors[2]) < 1e-6, "same text, same vector");
  assertEquals(promptTokens, TEXTS.reduce((n, t) => n + engine.countTokens(t), 0));
  await engine.dispose();
});

Deno.test("EmbeddingEngine batched vectors equal vectors computed one at a time", async () => {
  const batched = await demoEmbeddingEngine();
  const single = await demoEmbeddingEngine({ batching: { maxBatchSize: 1 } });
  const together = await Promise.all(TEXTS.map((t) => batched.embed([t])));
  assert(batched.stats().batches < TEXTS.length, "concurrent inputs should share batches");
  for (const [i, text] of TEXTS.entries()) {
    const alone = await single.embed([text]);
    assert(maxDiff(together[i].vectors[0], alone.vectors[0]) < 1e-5, `input ${i}`);
  }
  await batched.dispose();
  await single.dispose();
});

Deno.test("EmbeddingEngine accepts token ids the same as the text they encode", async () => {
  const engine = await demoEmbeddingEngine();
  const text = "tokens in, vectors out";
  const [fromText] = (await engine.embed([text])).vectors;
  const model = await loadModel(await demoFolder("demo/embed"), "embedding", {
    device: "cpu",
    dtype: "q8",
  });
  const [fromIds] = (await engine.embed([model.tokenizer.encode(text)])).vectors;
  assert(maxDiff(fromText, fromIds) < 1e-6);
  await model.session.release();
  await engine.dispose();
});

Deno.test("EmbeddingEngine truncates to fewer dimensions and renormalizes", async () => {
  const engine = await demoEmbeddingEngine();
  const [full] = (await engine.embed(["matryoshka"])).vectors;
  const [short] = (await engine.embed(["matryoshka"], { dimensions: 16 })).vectors;
  assertEquals(short.length, 16);
  assertAlmostEquals(Math.hypot(...short), 1, 1e-5);
  const norm = Math.hypot(...full.slice(0, 16));
  assertAlmostEquals(short[3], full[3] / norm, 1e-5);
  await assertRejects(
    () => engine.embed(["x"], { dimensions: engine.info.dimensions! + 1 }),
    ValidationError,
    "dimensions",
  );
  await engine.dispose();
});

Deno.test("EmbeddingEngine refuses an input over the model's length unless asked to truncate", async () => {
  const engine = await demoEmbeddingEngine();
  const long = "many words ".repeat(engine.info.contextLength);
  const err = await assertRejects(() => engine.embed(["ok", long]), ContextLengthError);
  assertMatch(err.message, /input\[1\] has \d+ tokens, more than the 256/);
  assertEquals(err.param, "input.1");
  const { vectors, promptTokens } = await engine.embed(["ok", long], { truncate: true });
  assertEquals(vectors.length, 2);
  assert(promptTokens <= engine.countTokens("ok") + engine.info.contextLength);
  await engine.dispose();
});

Deno.test("readPoolingConfig() reads CLS pooling and normalization from sentence-transformers files", async () => {
  const folder = await Deno.makeTempDir();
  await Deno.mkdir(`${folder}/1_Pooling`);
  await Deno.writeTextFile(
    `${folder}/modules.json`,
    JSON.stringify([
      { idx: 0, path: "", type: "sentence_transformers.models.Transformer" },
      { idx: 1, path: "1_Pooling", type: "sentence_transformers.models.Pooling" },
    ]),
  );
  await Deno.writeTextFile(
    `${folder}/1_Pooling/config.json`,
    JSON.stringify({ pooling_mode_cls_token: true }),
  );
  const readJson = async (name: string) => {
    try {
      return JSON.parse(await Deno.readTextFile(`${folder}/${name}`));
    } catch {
      return null;
    }
  };
  // deno-lint-ignore no-explicit-any
  assertEquals(await readPoolingConfig({ readJson } as any), {
    mode: "cls",
    normalize: false,
    known: true,
    densePaths: [],
  });
  await Deno.remove(`${folder}/modules.json`);
  // deno-lint-ignore no-explicit-any
  assertEquals(await readPoolingConfig({ readJson } as any), {
    mode: "mean",
    normalize: true,
    known: false,
    densePaths: [],
  });
  await Deno.remove(folder, { recursive: true });
});

Deno.test("EmbeddingEngine is an embedding engine only: as a chat engine it is invalid_model_kind", async () => {
  const engine = await demoEmbeddingEngine();
  try {
    assert(!("generate" in engine), "an embedding engine has no generate()");
    const err = assertThrows(() => engineOfKind(engine, "chat"), ValidationError);
    assertEquals([err.code, err.param], ["invalid_model_kind", "model"]);
    assertMatch(err.message, /is an embedding model .*\/v1\/embeddings/);
  } finally {
    await engine.dispose();
  }
});

Deno.test("readPoolingConfig() lists Dense modules and refuses pooling modes it cannot compute", async () => {
  const files: Record<string, unknown> = {
    "modules.json": [
      { idx: 0, path: "", type: "sentence_transformers.models.Transformer" },
      { idx: 1, path: "1_Pooling", type: "sentence_transformers.models.Pooling" },
      { idx: 2, path: "2_Dense", type: "sentence_transformers.models.Dense" },
      { idx: 3, path: "3_Dense", type: "sentence_transformers.models.Dense" },
      { idx: 4, path: "4_Normalize", type: "sentence_transformers.models.Normalize" },
    ],
    "1_Pooling/config.json": { pooling_mode_mean_tokens: true },
  };
  const model = { readJson: (name: string) => Promise.resolve(files[name] ?? null) };
  // deno-lint-ignore no-explicit-any
  assertEquals(await readPoolingConfig(model as any), {
    mode: "mean",
    normalize: true,
    known: true,
    densePaths: ["2_Dense", "3_Dense"],
  });
  files["1_Pooling/config.json"] = { pooling_mode_max_tokens: true };
  // deno-lint-ignore no-explicit-any
  await assertRejects(() => readPoolingConfig(model as any), Error, "pooling_mode_max_tokens");
});

Deno.test("EmbeddingEngine refuses token ids outside the vocabulary with a 400 naming the input", async () => {
  const engine = await demoEmbeddingEngine();
  const err = await assertRejects(
    () => engine.embed([[1, 2], [3, 999_999_999]]),
    ValidationError,
  );
  assertEquals([err.status, err.param], [400, "input.1"]);
  assertMatch(err.message, /token id 999999999 at position 1/);
  assertEquals(engine.stats().batches, 0, "nothing was embedded");
  await engine.dispose();
});

Deno.test("EmbeddingEngine refuses a request over its token limit before embedding anything", async () => {
  const engine = await demoEmbeddingEngine({ limits: { maxEmbeddingTokens: 5 } });
  const err = await assertRejects(() => engine.embed([[1, 2, 3], [4, 5, 6]]), ValidationError);
  assertEquals(err.param, "input");
  assertMatch(err.message, /6, more than this server's limit of 5 .*--max-embedding-tokens/);
  assertEquals((await engine.embed([[1, 2, 3], [4, 5]])).vectors.length, 2);
  await engine.dispose();
});

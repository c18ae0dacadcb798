// The reranker engine against transformers.js' own AutoTokenizer + AutoModelForSequenceClassification
// on the same generated folders (both real layouts: BERT with token_type_ids, XLM-RoBERTa without),
// fp32 and q8: the same logits for the same (query, document) pairs, batched or alone.
import {
  assert,
  assertAlmostEquals,
  assertEquals,
  assertRejects,
  assertThrows,
} from "../../_assert.ts";
import { join } from "node:path";
import { writeRerankerFolder } from "../../../src/engine/generated_models/reranker_folder.ts";
import { createEngine, detectKind } from "../../../src/engine/create_engine.ts";
import type { RerankEngine } from "../../../src/engine/rerank/rerank_engine.ts";
import { engineOfKind } from "../../../src/core/model_kind.ts";
import { setupLogger } from "../../../src/core/logging.ts";
import { ContextLengthError, ServiceError, ValidationError } from "../../../src/core/errors.ts";
import { setUpTransformers, TINY_EMBED } from "../generated_models/_fixtures.ts";
import { demoFolder, TEST_MODEL_CACHE } from "../../_helpers/demo_engines.ts";

setupLogger("error");

const QUERY = "what is the capital of france";
const DOCS = [
  "Paris is the capital and largest city of France.",
  "a",
  "The quick brown fox jumps over the lazy dog, then runs far away from the river bank.",
  "ü漢字 and ASCII",
];

const root = await Deno.makeTempDir({ prefix: "svc-rerank-" });

/** Logits from transformers.js for each (query, document) pair, one pair per call. */
async function oracleLogits(folder: string, dtype: "fp32" | "q8"): Promise<number[]> {
  const t = setUpTransformers();
  const tokenizer = await t.AutoTokenizer.from_pretrained(folder);
  const model = await t.AutoModelForSequenceClassification.from_pretrained(folder, {
    device: "cpu",
    dtype,
  });
  try {
    const out: number[] = [];
    for (const doc of DOCS) {
      const inputs = tokenizer(QUERY, { text_pair: doc });
      const { logits } = await model(inputs);
      out.push(Number(logits.data[0]));
    }
    return out;
  } finally {
    await model.dispose();
  }
}

async function rerankerFolder(
  name: string,
  options: Parameters<typeof writeRerankerFolder>[2],
): Promise<string> {
  const folder = join(root, name);
  await writeRerankerFolder(folder, { ...TINY_EMBED, seed: 7 }, options);
  return folder;
}

for (const layout of ["bert", "xlm-roberta"] as const) {
  for (const dtype of ["fp32", "q8"] as const) {
    Deno.test(`RerankEngine.rerank() gives transformers.js' logits (${layout}, ${dtype})`, async () => {
      const folder = await rerankerFolder(`${layout}-${dtype}`, { id: "t", layout });
      assertEquals(await detectKind(folder), "rerank");
      const expected = await oracleLogits(folder, dtype);
      const engine = await createEngine(folder, {
        cacheDir: TEST_MODEL_CACHE,
        device: "cpu",
        dtype,
      }) as RerankEngine;
      try {
        assertEquals(engine.info.kind, "rerank");
        // All pairs in one request (one padded batch) and each alone.
        const batched = await engine.rerank(QUERY, DOCS, { rawScores: true });
        for (let i = 0; i < DOCS.length; i++) {
          assertAlmostEquals(batched.scores[i], expected[i], 1e-4);
          const alone = await engine.rerank(QUERY, [DOCS[i]], { rawScores: true });
          assertAlmostEquals(alone.scores[0], expected[i], 1e-4);
        }
        // The default score is the sigmoid of the logit (the config names no activation).
        const scored = await engine.rerank(QUERY, DOCS);
        scored.scores.forEach((s, i) =>
          assertAlmostEquals(s, 1 / (1 + Math.exp(-expected[i])), 1e-5)
        );
        assert(new Set(expected.map((x) => x.toFixed(3))).size > 1, "random scores should differ");
      } finally {
        await engine.dispose();
      }
    });
  }
}

Deno.test("RerankEngine scores with the logits when the config names Identity (ms-marco)", async () => {
  const folder = await rerankerFolder("identity", {
    id: "t",
    activation: "identity",
    formats: ["fp32"],
  });
  const expected = await oracleLogits(folder, "fp32");
  const engine = await createEngine(folder, {
    cacheDir: TEST_MODEL_CACHE,
    device: "cpu",
  }) as RerankEngine;
  try {
    const { scores, promptTokens } = await engine.rerank(QUERY, DOCS);
    scores.forEach((s, i) => assertAlmostEquals(s, expected[i], 1e-4));
    assert(promptTokens > DOCS.length * 8, `usage counts every pair's tokens: ${promptTokens}`);
  } finally {
    await engine.dispose();
  }
});

Deno.test("RerankEngine refuses long pairs unless asked to truncate, and an empty query", async () => {
  const engine = await createEngine("demo/rerank", {
    cacheDir: TEST_MODEL_CACHE,
    device: "cpu",
    dtype: "fp32",
  }) as RerankEngine;
  try {
    const long = "word ".repeat(engine.info.contextLength + 10);
    const err = await assertRejects(
      () => engine.rerank(QUERY, ["short", long]),
      ContextLengthError,
    );
    assertEquals(err.param, "documents.1");
    const cut = await engine.rerank(QUERY, ["short", long], { truncate: true });
    assertEquals(cut.scores.length, 2);
    await assertRejects(() => engine.rerank("  ", ["doc"]), ValidationError);
    assert(!("embed" in engine) && !("generate" in engine), "a reranker only reranks");
    const kind = assertThrows(() => engineOfKind(engine, "embedding"), ValidationError);
    assertEquals([kind.code, kind.param], ["invalid_model_kind", "model"]);
    // Tokenize and detokenize with the reranker's own tokenizer.
    const hello = await engine.tokenize({ prompt: "hello world" }, { tokenStrs: true });
    assertEquals(hello.tokenStrs?.[0], "[CLS]");
    assertEquals(await engine.detokenize(hello.tokens), "[CLS] hello world [SEP]");
  } finally {
    await engine.dispose();
  }
});

Deno.test("RerankEngine refuses a classifier with more than one label", async () => {
  const folder = await rerankerFolder("two-labels", { id: "t", formats: ["fp32"] });
  const configPath = join(folder, "config.json");
  const config = JSON.parse(await Deno.readTextFile(configPath));
  config.id2label = { "0": "NEG", "1": "POS" };
  await Deno.writeTextFile(configPath, JSON.stringify(config));
  const err = await assertRejects(
    () => createEngine(folder, { cacheDir: TEST_MODEL_CACHE, device: "cpu" }),
    ServiceError,
  );
  assert(/2 labels/.test(err.message), err.message);
});

Deno.test("demo/rerank is a generated reranker folder", async () => {
  const folder = await demoFolder("demo/rerank");
  assertEquals(await detectKind(folder), "rerank");
});

Deno.test("createEngine() says a reranker is one when asked for another kind, and the reverse", async () => {
  const options = { cacheDir: TEST_MODEL_CACHE, device: "cpu" as const };
  const asEmbedding = await assertRejects(
    () => createEngine("demo/rerank", { ...options, kind: "embedding" }),
    ValidationError,
  );
  assert(/is a reranker .*--kind rerank/.test(asEmbedding.message), asEmbedding.message);
  const asReranker = await assertRejects(
    () => createEngine("demo/embed", { ...options, kind: "rerank" }),
    ValidationError,
  );
  assert(/not a reranker .*as an embedding model/.test(asReranker.message), asReranker.message);
});

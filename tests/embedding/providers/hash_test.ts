import { ValidationError } from "../../../src/core/errors.ts";
import { createHashEmbedder } from "../../../src/embedding/providers/hash.ts";
import {
  assert,
  assertAlmostEquals,
  assertEquals,
  assertNotEquals,
  assertRejects,
  assertThrows,
} from "../../_assert.ts";

const norm = (v: number[]) => Math.sqrt(v.reduce((s, x) => s + x * x, 0));
const cosine = (a: number[], b: number[]) => a.reduce((s, x, i) => s + x * b[i], 0);

Deno.test("createHashEmbedder() makes unit-length 384-dimension vectors by default", async () => {
  const embedder = createHashEmbedder();
  assertEquals(embedder.dimensions, 384);
  assertEquals(embedder.model, "hash-384");
  const vector = await embedder.embed("The quick brown fox");
  assertEquals(vector.length, 384);
  assertAlmostEquals(norm(vector), 1, 1e-12);
});

Deno.test("createHashEmbedder() is deterministic and case/width-insensitive", async () => {
  const a = await createHashEmbedder().embed("Hello World");
  const b = await createHashEmbedder().embed("hello   WORLD");
  const c = await createHashEmbedder().embed("ｈｅｌｌｏ world"); // full-width letters, NFKC
  assertEquals(a, b);
  assertEquals(a, c);
});

Deno.test("createHashEmbedder() puts texts sharing words closer than unrelated texts", async () => {
  const e = createHashEmbedder();
  const [apple, apples, train] = await e.embedBatch([
    "red apple pie",
    "red apples pie",
    "late night train",
  ]);
  assert(cosine(apple, apples) > 0.5, `related cosine ${cosine(apple, apples)}`);
  assert(Math.abs(cosine(apple, train)) < 0.3, `unrelated cosine ${cosine(apple, train)}`);
  assertNotEquals(apple, apples);
});

Deno.test("createHashEmbedder() handles CJK text through character n-grams", async () => {
  const e = createHashEmbedder({ dimensions: 256 });
  const [a, b, c] = await e.embedBatch(["今天天气很好", "今天天气不错", "机器学习模型"]);
  assert(cosine(a, b) > cosine(a, c));
});

Deno.test("createHashEmbedder() takes its size from dimensions or a hash-N model name", async () => {
  assertEquals((await createHashEmbedder({ dimensions: 64 }).embed("x")).length, 64);
  const named = createHashEmbedder({ model: "hash-768" });
  assertEquals(named.dimensions, 768);
  assertEquals((await named.embed("x")).length, 768);
  assertThrows(() => createHashEmbedder({ dimensions: 0 }), ValidationError, "dimensions");
  assertThrows(() => createHashEmbedder({ ngram: 2.5 }), ValidationError, "ngram");
});

Deno.test("createHashEmbedder() returns the zero vector for text without words", async () => {
  const v = await createHashEmbedder({ dimensions: 16 }).embed("  ?!  ");
  assertEquals(v, new Array(16).fill(0));
});

Deno.test("createHashEmbedder().embed() rejects a non-string with ValidationError", async () => {
  const e = createHashEmbedder();
  await assertRejects(() => e.embed(["a"] as unknown as string), ValidationError, "embedBatch");
  await assertRejects(
    () => e.embedBatch(["a", 3 as unknown as string]),
    ValidationError,
    "input 1",
  );
  assertEquals(await e.embedBatch([]), []);
});

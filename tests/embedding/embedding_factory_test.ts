import { ValidationError } from "../../src/core/errors.ts";
import { EmbeddingFactory } from "../../src/embedding/embedding_factory.ts";
import { assertEquals, assertThrows } from "../_assert.ts";

Deno.test("EmbeddingFactory.createEmbedding() returns an object with encode and encodeBatch", async () => {
  const embedding = EmbeddingFactory.createEmbedding("hash", "hash-32");
  assertEquals([embedding.provider, embedding.model, embedding.dimensions], [
    "hash",
    "hash-32",
    32,
  ]);
  const one = await embedding.encode("hello");
  const many = await embedding.encodeBatch(["hello", "world"]);
  assertEquals(one.length, 32);
  assertEquals(many[0], one);
  assertEquals(many.length, 2);
  await embedding.dispose();
});

Deno.test("EmbeddingFactory.createEmbedding() uses the provider default for an empty model name", () => {
  const embedding = EmbeddingFactory.createEmbedding("mockembedder", "", { seed: 3 });
  assertEquals(embedding.model, "mockembedder");
  assertEquals(EmbeddingFactory.providers().includes("bedrock"), true);
});

Deno.test("EmbeddingFactory.createEmbedding() rejects an unknown provider", () => {
  assertThrows(() => EmbeddingFactory.createEmbedding("nope", "x"), ValidationError, "hash");
});

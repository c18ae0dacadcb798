import { ValidationError } from "../../src/core/errors.ts";
import { EmbeddingClientAdapter } from "../../src/embedding/embedding_client_adapter.ts";
import { createEmbeddingClientCompat } from "../../src/embedding/embedding_client_compat.ts";
import { EmbeddingFactory } from "../../src/embedding/embedding_factory.ts";
import { assertEquals, assertThrows } from "../_assert.ts";

Deno.test("createEmbeddingClientCompat() wraps a method name, a function and factory objects", async () => {
  const byName = createEmbeddingClientCompat("hash", { dimensions: 16 });
  assertEquals((await byName.embed(["a", "b"])).map((v) => v.length), [16, 16]);

  const fn = createEmbeddingClientCompat((text: string) => [text.length, 0]);
  assertEquals(await fn.embed(["ab", "abc"]), [[2, 0], [3, 0]]);

  const factoryObject = EmbeddingFactory.createEmbedding("mockembedder", "", { dimensions: 4 });
  const fromFactory = createEmbeddingClientCompat(factoryObject);
  assertEquals(await fromFactory.embed(["q"]), [await factoryObject.encode("q")]);
});

Deno.test("createEmbeddingClientCompat() uses embedQuery/embedDocuments and batch-style embed", async () => {
  const calls: string[] = [];
  const langchainLike = createEmbeddingClientCompat({
    embedQuery: (t: string) => [t.length],
    embedDocuments: (ts: string[]) => {
      calls.push("documents");
      return ts.map((t) => [t.length]);
    },
  });
  assertEquals(await langchainLike.embed(["aa", "b"]), [[2], [1]]);
  assertEquals(calls, ["documents"]);

  const listEmbed = createEmbeddingClientCompat(
    { embed: (ts: string[]) => Promise.resolve(ts.map((t) => [t.length * 10])) },
    { batchInput: true },
  );
  assertEquals(await listEmbed.embed(["a", "bb"]), [[10], [20]]);
});

Deno.test("createEmbeddingClientCompat() returns an adapter as is and rejects unknown shapes", () => {
  const adapter = new EmbeddingClientAdapter({ embed: () => [1] });
  assertEquals(createEmbeddingClientCompat(adapter), adapter);
  assertThrows(() => createEmbeddingClientCompat({ foo: 1 } as never), ValidationError);
});

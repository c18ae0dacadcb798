import { ValidationError } from "../../src/core/errors.ts";
import { EmbeddingClientAdapter } from "../../src/embedding/embedding_client_adapter.ts";
import { getEmbeddingModel } from "../../src/embedding/get_embedding_model.ts";
import { assertEquals, assertRejects, assertThrows } from "../_assert.ts";

Deno.test("EmbeddingClientAdapter.embed() returns one vector per text using the batch call", async () => {
  const embedder = getEmbeddingModel("mockembedder", { dimensions: 8 });
  const adapter = new EmbeddingClientAdapter(embedder);
  const vectors = await adapter.embed(["a", "b", "c"]);
  assertEquals(vectors.length, 3);
  assertEquals(vectors[1], await embedder.embed("b"));
  assertEquals(adapter.dimensions, 8);
  assertEquals(adapter.model, "mockembedder");
  assertEquals(await adapter.embed("solo"), [await embedder.embed("solo")]);
  assertEquals(await adapter.embed([]), []);
});

Deno.test("EmbeddingClientAdapter.embed() maps embed(text) in order when there is no batch call", async () => {
  const seen: string[] = [];
  const adapter = new EmbeddingClientAdapter({
    embed: (text: string) => {
      seen.push(text);
      return Promise.resolve([text.length]);
    },
  });
  assertEquals(await adapter.embed(["x", "yyy", "zz"]), [[1], [3], [2]]);
  assertEquals(seen, ["x", "yyy", "zz"]);
});

Deno.test("EmbeddingClientAdapter rejects things that are not embedders or texts", async () => {
  assertThrows(() => new EmbeddingClientAdapter({} as never), ValidationError);
  const adapter = new EmbeddingClientAdapter({ embed: () => [1] });
  await assertRejects(() => adapter.embed([1] as unknown as string[]), ValidationError);
});

// rerank() of the embedding library: the `openai` method with a rerankModel against a real engine
// server serving demo/embed with demo/rerank beside it, through EmbeddingClientAdapter; and the
// clear refusal of an embedder that cannot rerank.
import { assert, assertEquals, assertRejects } from "../_assert.ts";
import { ValidationError } from "../../src/core/errors.ts";
import { EmbeddingClientAdapter } from "../../src/embedding/embedding_client_adapter.ts";
import { getEmbeddingModel } from "../../src/embedding/get_embedding_model.ts";
import { setupLogger } from "../../src/core/logging.ts";
import { demoEngineServer } from "../_helpers/demo_server.ts";

setupLogger("error");
const DOCS = ["pandas eat bamboo", "the stock market fell", "bamboo forests in China"];

Deno.test("EmbeddingClientAdapter.rerank() ranks with the server's reranker beside its embeddings", async () => {
  const server = await demoEngineServer("demo/embed", undefined, { withReranker: true });
  try {
    const embedder = getEmbeddingModel("openai", {
      baseUrl: server.baseUrl,
      model: "demo/embed",
      rerankModel: "demo/rerank",
      env: {},
    });
    const adapter = new EmbeddingClientAdapter(embedder);
    const expected = await server.reranker!.rerank("what do pandas eat", DOCS);
    const ranked = await adapter.rerank("what do pandas eat", DOCS);
    assertEquals(
      ranked.map((r) => r.index),
      [0, 1, 2].sort((a, b) => expected.scores[b] - expected.scores[a]),
    );
    ranked.forEach((r) => {
      assertEquals(r.document, DOCS[r.index]);
      assert(Math.abs(r.score - expected.scores[r.index]) < 1e-6);
    });
    assertEquals((await adapter.rerank("q", DOCS, { topN: 2 })).length, 2);
    assertEquals((await adapter.embed(["one"])).length, 1, "embeddings still work");
  } finally {
    await server.stop();
  }
});

Deno.test("EmbeddingClientAdapter.rerank() says which embedder cannot rerank and what to use", async () => {
  const adapter = new EmbeddingClientAdapter(getEmbeddingModel("hash"));
  await assertRejects(() => adapter.rerank("q", ["a"]), ValidationError, "'hash' embedder");
});

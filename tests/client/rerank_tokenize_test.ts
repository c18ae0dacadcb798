// The client's rerank, tokenize and detokenize against real servers: an embedding engine server
// with demo/rerank beside demo/embed, a chat engine server, and the gateway in front of both.
import { assert, assertEquals, assertRejects } from "../_assert.ts";
import { ConfigurationError, ValidationError } from "../../src/core/errors.ts";
import { UnifiedInferenceClient } from "../../src/client/unified_inference_client.ts";
import { startGateway } from "../../src/gateway/gateway_server.ts";
import type { HttpLogger } from "../../src/http/logger.ts";
import { setupLogger } from "../../src/core/logging.ts";
import { demoEngineServer } from "../_helpers/demo_server.ts";

setupLogger("error");
const QUIET: HttpLogger = { error: () => {}, warn: () => {} };
const DOCS = ["pandas eat bamboo", "the stock market fell", "bamboo forests in China"];

Deno.test("client: rerank, tokenize and detokenize, direct and through the gateway", async (t) => {
  const [chat, emb] = await Promise.all([
    demoEngineServer("demo/chat"),
    demoEngineServer("demo/embed", undefined, { withReranker: true }),
  ]);
  const gw = await startGateway({
    logger: QUIET,
    backends: [
      { id: "chat", baseUrl: chat.baseUrl, kind: "llm", models: ["demo/chat"] },
      {
        id: "emb",
        baseUrl: emb.baseUrl,
        kind: "embedding",
        models: ["demo/embed", "demo/rerank"],
      },
    ],
  });
  try {
    const expected = await emb.reranker!.rerank("what do pandas eat", DOCS);
    const best = [0, 1, 2].sort((a, b) => expected.scores[b] - expected.scores[a]);
    const direct = await UnifiedInferenceClient.create({
      llmBaseUrl: chat.baseUrl,
      embeddingBaseUrl: emb.baseUrl,
      env: {},
      envFile: null,
    });
    await gw.gateway.checker.checkAll();
    const viaGateway = await UnifiedInferenceClient.create({
      controlPlaneUrl: gw.baseUrl,
      env: {},
      envFile: null,
    });
    for (const [name, client] of [["direct", direct], ["gateway", viaGateway]] as const) {
      await t.step(`${name}: rerank finds the reranker and ranks best first`, async () => {
        const ranked = await client.rerank("what do pandas eat", DOCS);
        assertEquals(ranked.map((r) => r.index), best);
        assertEquals(ranked[0].document, DOCS[best[0]]);
        ranked.forEach((r) => assert(Math.abs(r.score - expected.scores[r.index]) < 1e-6));
        const top = await client.rerank("what do pandas eat", DOCS, { topN: 1 });
        assertEquals(top.map((r) => r.index), [best[0]]);
        assertEquals(await client.rerank("q", []), []);
        await assertRejects(
          () => client.rerank("q", ["a"], { model: "demo/embed" }),
          ValidationError,
          "embedding model",
        );
      });
      await t.step(`${name}: tokenize and detokenize with either model`, async () => {
        const chatTokens = await client.tokenize([{ role: "user", content: "hi" }]);
        assert(chatTokens.count > 1 && chatTokens.maxModelLen > chatTokens.count);
        const bare = await client.tokenize([{ role: "user", content: "hi" }], {
          addGenerationPrompt: false,
        });
        assert(bare.count < chatTokens.count);
        const text = await client.tokenize("hello world", {
          kind: "embedding",
          returnTokenStrs: true,
        });
        assertEquals(text.tokenStrs?.[0], "[CLS]");
        assertEquals(
          await client.detokenize(text.tokens, { kind: "embedding" }),
          "[CLS] hello world [SEP]",
        );
        await assertRejects(
          () => client.detokenize([10_000_000], { kind: "embedding" }),
          ValidationError,
          "not in the model's vocabulary",
        );
      });
    }
    await t.step("an endpoint without a reranker says how to get one", async () => {
      const plain = await demoEngineServer("demo/embed");
      try {
        const client = await UnifiedInferenceClient.create({
          llmBaseUrl: chat.baseUrl,
          embeddingBaseUrl: plain.baseUrl,
          env: {},
          envFile: null,
        });
        await assertRejects(
          () => client.rerank("q", ["a"]),
          ConfigurationError,
          "--with-embedding",
        );
      } finally {
        await plain.stop();
      }
    });
  } finally {
    await gw.stop();
    await Promise.all([chat.stop(), emb.stop()]);
  }
});

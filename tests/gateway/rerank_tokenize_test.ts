// /v1/rerank, /tokenize and /detokenize through the gateway, over real sockets: a chat engine
// server and an embedding engine server with demo/rerank beside demo/embed (the processes
// `svc llm serve --with-embedding` starts). The gateway routes each request by its model.
import { assert, assertEquals, assertMatch } from "../_assert.ts";
import { setupLogger } from "../../src/core/logging.ts";
import { startGateway } from "../../src/gateway/gateway_server.ts";
import type { HttpLogger } from "../../src/http/logger.ts";
import { demoEngineServer } from "../_helpers/demo_server.ts";

setupLogger("error");
const QUIET: HttpLogger = { error: () => {}, warn: () => {} };

Deno.test("gateway: rerank, tokenize and detokenize are routed by model", async () => {
  const chat = await demoEngineServer("demo/chat");
  const embed = await demoEngineServer("demo/embed", undefined, { withReranker: true });
  const gw = await startGateway({
    logger: QUIET,
    backends: [
      { id: "chat", baseUrl: chat.baseUrl, kind: "llm", models: ["demo/chat"] },
      {
        id: "embed",
        baseUrl: embed.baseUrl,
        kind: "embedding",
        models: ["demo/embed", "demo/rerank"],
      },
    ],
  });
  const post = async (path: string, body: unknown, url = gw.url) => {
    const res = await fetch(`${url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    return {
      status: res.status,
      backend: res.headers.get("x-svc-backend"),
      body: await res.json(),
    };
  };
  try {
    await gw.gateway.checker.checkAll();
    const request = { model: "demo/rerank", query: "q", documents: ["alpha", "beta", "gamma"] };
    const direct = await post("/v1/rerank", request, embed.served.url);
    for (const path of ["/v1/rerank", "/rerank"]) {
      const viaGateway = await post(path, request);
      assertEquals(viaGateway.status, 200, JSON.stringify(viaGateway.body));
      assertEquals(viaGateway.backend, "embed");
      assertEquals(viaGateway.body.results, direct.body.results);
    }
    // Cohere's /v2/rerank (at the backend's root, next to /v1) and vLLM's /score and /v1/score
    // reach the same reranker.
    const v2 = await post("/v2/rerank", request);
    assertEquals([v2.status, v2.backend], [200, "embed"], JSON.stringify(v2.body));
    assertEquals(v2.body.results, direct.body.results);
    const pairs = { model: "demo/rerank", text_1: "q", text_2: ["alpha", "beta", "gamma"] };
    const scored = await post("/score", pairs, embed.served.url);
    assertEquals(scored.status, 200, JSON.stringify(scored.body));
    for (const path of ["/score", "/v1/score"]) {
      const viaGateway = await post(path, pairs);
      assertEquals([viaGateway.status, viaGateway.backend], [200, "embed"], path);
      assertEquals(viaGateway.body.data, scored.body.data);
    }
    const ranked = Object.fromEntries(
      direct.body.results.map((r: { index: number; relevance_score: number }) => [
        r.index,
        r.relevance_score,
      ]),
    );
    assertEquals(
      scored.body.data.map((d: { score: number }) => d.score),
      [0, 1, 2].map((i) => ranked[i]),
    );
    // The gateway lists the reranker.
    const models = await (await fetch(`${gw.baseUrl}/models`)).json();
    assert(models.data.some((m: { id: string }) => m.id === "demo/rerank"));

    // Tokenize goes to the engine that serves the model: the chat engine, the embedding engine.
    const chatTokens = await post("/tokenize", {
      model: "demo/chat",
      messages: [{ role: "user", content: "hi" }],
    });
    assertEquals(chatTokens.status, 200);
    assertEquals(chatTokens.backend, "chat");
    const embedTokens = await post("/v1/tokenize", { model: "demo/embed", prompt: "hi there" });
    assertEquals(embedTokens.backend, "embed");
    assertEquals(embedTokens.body.count, embedTokens.body.tokens.length);
    const text = await post("/detokenize", {
      model: "demo/rerank",
      tokens: embedTokens.body.tokens,
    });
    assertEquals(text.body, { prompt: "[CLS] hi there [SEP]" });

    // Bad input is a 400 at the gateway; an unknown model a 404.
    const empty = await post("/v1/rerank", { ...request, documents: [] });
    assertEquals(empty.status, 400);
    assertEquals(empty.body.error.param, "documents");
    const unknown = await post("/v1/rerank", { ...request, model: "nope" });
    assertEquals(unknown.status, 404);
    const wrongKind = await post("/v1/rerank", { ...request, model: "demo/embed" });
    assertEquals(wrongKind.status, 400);
    assertMatch(wrongKind.body.error.message, /embedding model/);
    const unknownTokenizer = await post("/tokenize", { model: "nope", prompt: "x" });
    assertEquals(unknownTokenizer.status, 404);
    // Every model tokenizes, so the 404 names them all.
    assertMatch(unknownTokenizer.body.error.message, /demo\/chat.*demo\/embed.*demo\/rerank/);
    // With several models to choose from, one left out is a 400 naming model (engines default
    // only where they serve one model that fits).
    for (
      const [path, body] of [
        ["/v1/rerank", { query: "q", documents: ["a"] }],
        ["/v1/embeddings", { input: "x" }],
        ["/v2/rerank", { query: "q", documents: ["a"] }],
        ["/score", { text_1: "q", text_2: "a" }],
        ["/tokenize", { prompt: "x" }],
        ["/detokenize", { tokens: [5] }],
      ] as const
    ) {
      const missing = await post(path, body);
      assertEquals(missing.status, 400, JSON.stringify(missing.body));
      assertEquals(missing.body.error.param, "model");
    }
  } finally {
    await gw.stop();
    await embed.stop();
    await chat.stop();
  }
});

import { AuthenticationError, ConfigurationError } from "../../../src/core/errors.ts";
import { createJinaEmbedder } from "../../../src/embedding/providers/jina.ts";
import { assertEquals, assertRejects, assertThrows } from "../../_assert.ts";
import { fakeVector, jsonResponse, type ReceivedRequest, startStandIn } from "../_stand_in.ts";

/** Answers like Jina's /v1/embeddings, after checking what Jina requires. */
function jinaStandIn(r: ReceivedRequest): Response {
  if (r.path !== "/v1/embeddings") return jsonResponse({ detail: "Not Found" }, 404);
  if (r.headers.get("authorization") !== "Bearer jina_test") {
    return jsonResponse({ detail: "Invalid API key" }, 401);
  }
  if (typeof r.json?.model !== "string" || !Array.isArray(r.json?.input)) {
    return jsonResponse({ detail: [{ msg: "field required" }] }, 422);
  }
  const size = r.json.dimensions ?? 1024;
  return jsonResponse({
    model: r.json.model,
    object: "list",
    usage: { total_tokens: 5, prompt_tokens: 5 },
    data: r.json.input.map((t: string, index: number) => ({
      object: "embedding",
      index,
      embedding: fakeVector(t, size),
    })),
  });
}

Deno.test("createJinaEmbedder() sends model, input, task, late_chunking and dimensions to /v1/embeddings", async () => {
  const server = startStandIn(jinaStandIn);
  try {
    const embedder = createJinaEmbedder({
      baseUrl: `${server.url}/v1`,
      apiKey: "jina_test",
      task: "retrieval.passage",
      lateChunking: true,
      dimensions: 8,
      maxBatchSize: 1,
    });
    const texts = ["Berlin is a city.", "It is the capital."];
    assertEquals(await embedder.embedBatch(texts), texts.map((t) => fakeVector(t, 8)));
    // Late chunking: the whole batch goes in one request despite maxBatchSize 1.
    assertEquals(server.requests.length, 1);
    assertEquals(server.requests[0].json, {
      model: "jina-embeddings-v3",
      embedding_type: "float",
      task: "retrieval.passage",
      late_chunking: true,
      dimensions: 8,
      input: texts,
    });
    assertEquals(embedder.dimensions, 8);
  } finally {
    await server.close();
  }
});

Deno.test("createJinaEmbedder() splits batches when late chunking is off", async () => {
  const server = startStandIn(jinaStandIn);
  try {
    const embedder = createJinaEmbedder({
      baseUrl: `${server.url}/v1`,
      env: { JINA_API_KEY: "jina_test" },
      maxBatchSize: 2,
    });
    const vectors = await embedder.embedBatch(["a", "b", "c"]);
    assertEquals(vectors.length, 3);
    assertEquals(vectors[0].length, 1024);
    assertEquals(server.requests.map((r) => r.json.input), [["a", "b"], ["c"]]);
    assertEquals("late_chunking" in server.requests[0].json, false);
  } finally {
    await server.close();
  }
});

Deno.test("createJinaEmbedder() surfaces Jina's 401 detail as AuthenticationError naming JINA_API_KEY", async () => {
  const server = startStandIn(jinaStandIn);
  try {
    const embedder = createJinaEmbedder({ baseUrl: `${server.url}/v1`, apiKey: "wrong" });
    const err = await assertRejects(
      () => embedder.embed("x"),
      AuthenticationError,
      "Invalid API key",
    );
    assertEquals(err.message.includes("JINA_API_KEY"), true);
  } finally {
    await server.close();
  }
});

Deno.test("createJinaEmbedder() without a key throws ConfigurationError naming JINA_API_KEY", () => {
  assertThrows(() => createJinaEmbedder({ env: {} }), ConfigurationError, "JINA_API_KEY");
});

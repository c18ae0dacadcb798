import { ConfigurationError, ServiceError } from "../../../src/core/errors.ts";
import { createZhipuEmbedder } from "../../../src/embedding/providers/zhipu.ts";
import { assertEquals, assertRejects, assertThrows } from "../../_assert.ts";
import { fakeVector, jsonResponse, type ReceivedRequest, startStandIn } from "../_stand_in.ts";

function zhipuStandIn(r: ReceivedRequest): Response {
  if (r.path !== "/api/paas/v4/embeddings") {
    return jsonResponse({ error: { code: "404", message: "no route" } }, 404);
  }
  if (r.headers.get("authorization") !== "Bearer zhipu-key") {
    return jsonResponse({ error: { code: "1000", message: "身份验证失败" } }, 401);
  }
  if (r.json.input.length > 64) {
    return jsonResponse({ error: { code: "1214", message: "input too long" } }, 400);
  }
  const size = r.json.dimensions ?? 2048;
  return jsonResponse({
    model: r.json.model,
    object: "list",
    data: r.json.input.map((t: string, index: number) => ({
      index,
      object: "embedding",
      embedding: fakeVector(t, size),
    })),
    usage: { prompt_tokens: 4, completion_tokens: 0, total_tokens: 4 },
  });
}

Deno.test("createZhipuEmbedder() posts {model, input, dimensions} to /api/paas/v4/embeddings with a bearer key", async () => {
  const server = startStandIn(zhipuStandIn);
  try {
    const embedder = createZhipuEmbedder({
      baseUrl: `${server.url}/api/paas/v4`,
      env: { ZHIPUAI_API_KEY: "zhipu-key" },
      dimensions: 256,
    });
    const vector = await embedder.embed("你好，今天天气怎么样");
    assertEquals(vector, fakeVector("你好，今天天气怎么样", 256));
    assertEquals(server.requests[0].json, {
      model: "embedding-3",
      input: ["你好，今天天气怎么样"],
      dimensions: 256,
    });
  } finally {
    await server.close();
  }
});

Deno.test("createZhipuEmbedder() sends at most 64 inputs per request", async () => {
  const server = startStandIn(zhipuStandIn);
  try {
    const embedder = createZhipuEmbedder({
      baseUrl: `${server.url}/api/paas/v4`,
      apiKey: "zhipu-key",
    });
    const texts = Array.from({ length: 70 }, (_, i) => `t${i}`);
    const vectors = await embedder.embedBatch(texts);
    assertEquals(vectors.length, 70);
    assertEquals(embedder.dimensions, 2048);
    assertEquals(server.requests.map((r) => r.json.input.length), [64, 6]);
  } finally {
    await server.close();
  }
});

Deno.test("createZhipuEmbedder() passes Zhipu's error message through a ServiceError", async () => {
  const server = startStandIn(zhipuStandIn);
  try {
    const embedder = createZhipuEmbedder({
      baseUrl: `${server.url}/api/paas/v4`,
      apiKey: "zhipu-key",
      maxBatchSize: 100,
    });
    await assertRejects(
      () => embedder.embedBatch(Array(65).fill("x")),
      ServiceError,
      "input too long",
    );
  } finally {
    await server.close();
  }
});

Deno.test("createZhipuEmbedder() without a key throws ConfigurationError naming ZHIPUAI_API_KEY", () => {
  assertThrows(() => createZhipuEmbedder({ env: {} }), ConfigurationError, "ZHIPUAI_API_KEY");
});

import { ConfigurationError, ServiceError } from "../../../src/core/errors.ts";
import { createCohereEmbedder } from "../../../src/embedding/providers/cohere.ts";
import { assertEquals, assertRejects, assertThrows } from "../../_assert.ts";
import { fakeVector, jsonResponse, type ReceivedRequest, startStandIn } from "../_stand_in.ts";

function cohereStandIn(r: ReceivedRequest): Response {
  if (r.path !== "/v2/embed") return jsonResponse({ message: "not found" }, 404);
  if (r.headers.get("authorization") !== "Bearer co-key") {
    return jsonResponse({ message: "invalid api token" }, 401);
  }
  const { texts, input_type, embedding_types, model } = r.json ?? {};
  if (!Array.isArray(texts) || texts.length > 96) {
    return jsonResponse({ message: "too many texts" }, 400);
  }
  if (typeof input_type !== "string") {
    return jsonResponse({ message: "input_type is required" }, 400);
  }
  if (JSON.stringify(embedding_types) !== '["float"]') {
    return jsonResponse({ message: "bad embedding_types" }, 400);
  }
  const size = model.includes("light") ? 384 : 1024;
  return jsonResponse({
    id: "id-1",
    embeddings: { float: texts.map((t: string) => fakeVector(t, size)) },
    texts,
    meta: { api_version: { version: "2" } },
    response_type: "embeddings_by_type",
  });
}

Deno.test("createCohereEmbedder() posts texts, input_type and embedding_types to /v2/embed and reads embeddings.float", async () => {
  const server = startStandIn(cohereStandIn);
  try {
    const embedder = createCohereEmbedder({
      baseUrl: server.url,
      env: { COHERE_API_KEY: "co-key" },
      inputType: "search_query",
      model: "embed-multilingual-light-v3.0",
    });
    assertEquals(embedder.dimensions, 384);
    const vectors = await embedder.embedBatch(["hola", "mundo!"]);
    assertEquals(vectors, [fakeVector("hola", 384), fakeVector("mundo!", 384)]);
    assertEquals(server.requests[0].json, {
      model: "embed-multilingual-light-v3.0",
      input_type: "search_query",
      embedding_types: ["float"],
      texts: ["hola", "mundo!"],
    });
  } finally {
    await server.close();
  }
});

Deno.test("createCohereEmbedder() defaults to search_document and at most 96 texts per request", async () => {
  const server = startStandIn(cohereStandIn);
  try {
    const embedder = createCohereEmbedder({
      baseUrl: server.url,
      apiKey: "co-key",
      maxBatchSize: 500,
    });
    const vectors = await embedder.embedBatch(Array.from({ length: 100 }, (_, i) => `${i}`));
    assertEquals(vectors.length, 100);
    assertEquals(server.requests.map((r) => r.json.texts.length), [96, 4]);
    assertEquals(server.requests[0].json.input_type, "search_document");
  } finally {
    await server.close();
  }
});

Deno.test("createCohereEmbedder() reports an answer without embeddings.float as ServiceError", async () => {
  const server = startStandIn(() => jsonResponse({ embeddings: { int8: [[1]] } }));
  try {
    const embedder = createCohereEmbedder({ baseUrl: server.url, apiKey: "co-key" });
    await assertRejects(() => embedder.embed("x"), ServiceError, "no list of embeddings");
  } finally {
    await server.close();
  }
});

Deno.test("createCohereEmbedder() without a key throws ConfigurationError naming COHERE_API_KEY", () => {
  assertThrows(() => createCohereEmbedder({ env: {} }), ConfigurationError, "COHERE_API_KEY");
});

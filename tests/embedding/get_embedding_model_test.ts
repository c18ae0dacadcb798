import { ConfigurationError, ValidationError } from "../../src/core/errors.ts";
import { getEmbeddingModel } from "../../src/embedding/get_embedding_model.ts";
import { listEmbeddingModels } from "../../src/embedding/list_embedding_models.ts";
import { assertEquals, assertThrows } from "../_assert.ts";

Deno.test("getEmbeddingModel() returns an embedder whose embed(text) gives one vector", async () => {
  const embedder = getEmbeddingModel("hash", { model: "hash-64" });
  assertEquals(embedder.method, "hash");
  assertEquals(embedder.model, "hash-64");
  const vector = await embedder.embed("hello");
  assertEquals(vector.length, 64);
  assertEquals(typeof vector[0], "number");
});

Deno.test("getEmbeddingModel() lists the known methods when the method is unknown", () => {
  const err = assertThrows(
    () => getEmbeddingModel("word2vec"),
    ValidationError,
    "unknown embedding method",
  );
  for (
    const m of [
      "hf",
      "openai",
      "jina",
      "zhipu",
      "cohere",
      "bedrock",
      "ollama",
      "siliconcloud",
      "hash",
      "mockembedder",
    ]
  ) {
    assertEquals(err.message.includes(m), true, `${m} missing from: ${err.message}`);
  }
  assertEquals(err.param, "method");
});

Deno.test("getEmbeddingModel() accepts aliases and any letter case", () => {
  assertEquals(getEmbeddingModel("MOCK").method, "mockembedder");
  assertEquals(getEmbeddingModel("SiliconFlow", { apiKey: "k" }).method, "siliconcloud");
  assertEquals(getEmbeddingModel("openai-compatible", { apiKey: "k" }).method, "openai");
  assertEquals(getEmbeddingModel("huggingface", { model: "demo/embed" }).method, "hf");
});

Deno.test("getEmbeddingModel() throws ConfigurationError naming the variable for every key-needing method", () => {
  for (const info of listEmbeddingModels().filter((m) => m.needsKey)) {
    const err = assertThrows(
      () => getEmbeddingModel(info.method, { env: {}, baseUrl: "https://example.com/v1" }),
      ConfigurationError,
      info.envVariable!,
    );
    assertEquals(err.code, "missing_api_key");
  }
});

Deno.test("getEmbeddingModel() builds every keyless method with no options", async () => {
  for (const info of listEmbeddingModels().filter((m) => !m.needsKey)) {
    const embedder = getEmbeddingModel(info.method, { env: {} });
    assertEquals(embedder.model, info.defaultModel);
    assertEquals(embedder.dimensions, info.defaultDimensions);
    await embedder.dispose();
  }
});

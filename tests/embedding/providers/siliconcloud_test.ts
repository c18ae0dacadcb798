import { ConfigurationError } from "../../../src/core/errors.ts";
import { createSiliconCloudEmbedder } from "../../../src/embedding/providers/siliconcloud.ts";
import { assertEquals, assertThrows } from "../../_assert.ts";
import { fakeVector, jsonResponse, type ReceivedRequest, startStandIn } from "../_stand_in.ts";

function siliconStandIn(r: ReceivedRequest): Response {
  if (r.path !== "/v1/embeddings") return jsonResponse({ message: "not found" }, 404);
  if (r.headers.get("authorization") !== "Bearer sf-key") {
    return jsonResponse({ message: "Invalid token" }, 401);
  }
  return jsonResponse({
    object: "list",
    model: r.json.model,
    data: r.json.input.map((t: string, index: number) => ({
      object: "embedding",
      index,
      embedding: fakeVector(t, 1024),
    })),
    usage: { prompt_tokens: 2, completion_tokens: 0, total_tokens: 2 },
  });
}

Deno.test("createSiliconCloudEmbedder() speaks OpenAI-compatible /v1/embeddings with SILICONFLOW_API_KEY", async () => {
  const server = startStandIn(siliconStandIn);
  try {
    const embedder = createSiliconCloudEmbedder({
      baseUrl: `${server.url}/v1`,
      env: { SILICONFLOW_API_KEY: "sf-key" },
    });
    assertEquals(await embedder.embed("你好"), fakeVector("你好", 1024));
    assertEquals(server.requests[0].json, {
      model: "BAAI/bge-m3",
      input: ["你好"],
      encoding_format: "float",
    });
    assertEquals(embedder.method, "siliconcloud");
  } finally {
    await server.close();
  }
});

Deno.test("createSiliconCloudEmbedder() without a key throws ConfigurationError naming SILICONFLOW_API_KEY", () => {
  assertThrows(
    () => createSiliconCloudEmbedder({ env: {} }),
    ConfigurationError,
    "SILICONFLOW_API_KEY",
  );
});

import { ServiceError } from "../../../src/core/errors.ts";
import { createOllamaEmbedder } from "../../../src/embedding/providers/ollama.ts";
import { assertEquals, assertRejects } from "../../_assert.ts";
import { fakeVector, jsonResponse, type ReceivedRequest, startStandIn } from "../_stand_in.ts";

function ollamaStandIn(r: ReceivedRequest): Response {
  if (r.path !== "/api/embed" || r.method !== "POST") {
    return new Response("404 page not found", { status: 404 });
  }
  if (r.json.model !== "nomic-embed-text") {
    return jsonResponse({ error: `model "${r.json.model}" not found, try pulling it first` }, 404);
  }
  const input: string[] = typeof r.json.input === "string" ? [r.json.input] : r.json.input;
  return jsonResponse({
    model: r.json.model,
    embeddings: input.map((t) => fakeVector(t, 768)),
    total_duration: 1000,
    load_duration: 10,
    prompt_eval_count: 3,
  });
}

Deno.test("createOllamaEmbedder() posts {model, input} to OLLAMA_BASE_URL/api/embed without a key", async () => {
  const server = startStandIn(ollamaStandIn);
  try {
    const embedder = createOllamaEmbedder({ env: { OLLAMA_BASE_URL: server.url } });
    assertEquals(embedder.model, "nomic-embed-text");
    assertEquals(await embedder.embedBatch(["a", "bb"]), [
      fakeVector("a", 768),
      fakeVector("bb", 768),
    ]);
    const [req] = server.requests;
    assertEquals(req.json, { model: "nomic-embed-text", input: ["a", "bb"] });
    assertEquals(req.headers.get("authorization"), null);
  } finally {
    await server.close();
  }
});

Deno.test("createOllamaEmbedder() passes Ollama's 'not found, try pulling' error through", async () => {
  const server = startStandIn(ollamaStandIn);
  try {
    const embedder = createOllamaEmbedder({ baseUrl: server.url, model: "missing-model" });
    await assertRejects(() => embedder.embed("x"), ServiceError, "try pulling it first");
  } finally {
    await server.close();
  }
});

Deno.test("createOllamaEmbedder() defaults to http://localhost:11434", async () => {
  let seen = "";
  const embedder = createOllamaEmbedder({
    env: {},
    fetch: (input) => {
      seen = String(input);
      return Promise.resolve(jsonResponse({ embeddings: [[1, 0]] }));
    },
  });
  await embedder.embed("x");
  assertEquals(seen, "http://localhost:11434/api/embed");
});

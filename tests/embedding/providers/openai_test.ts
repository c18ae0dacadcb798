import {
  AuthenticationError,
  ConfigurationError,
  RateLimitError,
  ServiceError,
} from "../../../src/core/errors.ts";
import { createOpenAiEmbedder } from "../../../src/embedding/providers/openai.ts";
import { assert, assertEquals, assertMatch, assertRejects, assertThrows } from "../../_assert.ts";
import { fakeVector, jsonResponse, startStandIn } from "../_stand_in.ts";

function openAiAnswer(input: string[], size = 4, reversed = false) {
  const data = input.map((t, index) => ({
    object: "embedding",
    index,
    embedding: fakeVector(t, size),
  }));
  return {
    object: "list",
    model: "m",
    data: reversed ? data.reverse() : data,
    usage: { prompt_tokens: 3, total_tokens: 3 },
  };
}

Deno.test("createOpenAiEmbedder() posts {model, input, encoding_format} with a bearer key to /embeddings", async () => {
  const server = startStandIn((r) => {
    if (r.headers.get("authorization") !== "Bearer sk-test") {
      return jsonResponse({ error: { message: "bad key" } }, 401);
    }
    return jsonResponse(openAiAnswer(r.json.input, 4, true));
  });
  try {
    const embedder = createOpenAiEmbedder({
      baseUrl: `${server.url}/v1`,
      apiKey: "sk-test",
      model: "text-embedding-3-small",
      dimensions: 4,
    });
    const vectors = await embedder.embedBatch(["a", "bbb"]);
    assertEquals(vectors, [fakeVector("a", 4), fakeVector("bbb", 4)]); // reordered by index
    const [req] = server.requests;
    assertEquals(req.method, "POST");
    assertEquals(req.path, "/v1/embeddings");
    assertEquals(req.headers.get("content-type"), "application/json");
    assertEquals(req.json, {
      model: "text-embedding-3-small",
      input: ["a", "bbb"],
      encoding_format: "float",
      dimensions: 4,
    });
    assertEquals(embedder.dimensions, 4);
    assertEquals(await embedder.embed("cc"), fakeVector("cc", 4));
  } finally {
    await server.close();
  }
});

Deno.test("createOpenAiEmbedder() reads COMPAT_BASE_URL and COMPAT_API_KEY when no options are given", async () => {
  const server = startStandIn((r) => jsonResponse(openAiAnswer(r.json.input)));
  try {
    const env = { COMPAT_BASE_URL: `${server.url}/v1`, COMPAT_API_KEY: "sk-env" };
    const embedder = createOpenAiEmbedder({ env, model: "m" });
    await embedder.embed("x");
    assertEquals(server.requests[0].headers.get("authorization"), "Bearer sk-env");
  } finally {
    await server.close();
  }
});

Deno.test("createOpenAiEmbedder() needs no key for a loopback server (our own) and sends none", async () => {
  const server = startStandIn((r) => jsonResponse(openAiAnswer(r.json.input)));
  try {
    const embedder = createOpenAiEmbedder({
      baseUrl: `${server.url}/v1`,
      env: {},
      model: "demo/embed",
    });
    await embedder.embed("x");
    assertEquals(server.requests[0].headers.get("authorization"), null);
  } finally {
    await server.close();
  }
});

Deno.test("createOpenAiEmbedder() without a key for a remote URL is a ConfigurationError naming COMPAT_API_KEY", () => {
  const err = assertThrows(
    () => createOpenAiEmbedder({ env: {}, baseUrl: "https://api.example.com/v1" }),
    ConfigurationError,
    "COMPAT_API_KEY",
  );
  assertEquals(err.param, "COMPAT_API_KEY");
});

Deno.test("createOpenAiEmbedder() splits large batches by maxBatchSize and keeps order", async () => {
  const server = startStandIn((r) => jsonResponse(openAiAnswer(r.json.input)));
  try {
    const embedder = createOpenAiEmbedder({ baseUrl: server.url, apiKey: "k", maxBatchSize: 2 });
    const texts = ["a", "bb", "ccc", "dddd", "eeeee"];
    const vectors = await embedder.embedBatch(texts);
    assertEquals(vectors, texts.map((t) => fakeVector(t, 4)));
    assertEquals(server.requests.map((r) => r.json.input.length), [2, 2, 1]);
  } finally {
    await server.close();
  }
});

Deno.test("createOpenAiEmbedder() maps 401, 429 and 500 to typed errors carrying the provider's message", async () => {
  let status = 401;
  const server = startStandIn(() =>
    jsonResponse({ error: { message: `upstream says ${status}` } }, status, { "retry-after": "7" })
  );
  try {
    const embedder = createOpenAiEmbedder({ baseUrl: server.url, apiKey: "k" });
    await assertRejects(() => embedder.embed("x"), AuthenticationError, "upstream says 401");
    status = 429;
    const limited = await assertRejects(
      () => embedder.embed("x"),
      RateLimitError,
      "upstream says 429",
    );
    assertEquals(limited.retryAfterSeconds, 7);
    status = 500;
    const failed = await assertRejects(
      () => embedder.embed("x"),
      ServiceError,
      "upstream says 500",
    );
    assertMatch(failed.message, /HTTP 500/);
  } finally {
    await server.close();
  }
});

Deno.test("createOpenAiEmbedder() rejects an answer with the wrong number of vectors", async () => {
  const server = startStandIn(() => jsonResponse(openAiAnswer(["only-one"])));
  try {
    const embedder = createOpenAiEmbedder({ baseUrl: server.url, apiKey: "k" });
    await assertRejects(
      () => embedder.embedBatch(["a", "b"]),
      ServiceError,
      "1 embeddings for 2 inputs",
    );
  } finally {
    await server.close();
  }
});

Deno.test("createOpenAiEmbedder() reports an unreachable server as ServiceError naming the URL", async () => {
  // Find a free port, then close it so nothing listens there.
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  const embedder = createOpenAiEmbedder({ baseUrl: `http://127.0.0.1:${port}/v1`, apiKey: "k" });
  const err = await assertRejects(() => embedder.embed("x"), ServiceError);
  assert(err.message.includes(`http://127.0.0.1:${port}/v1/embeddings`), err.message);
  assertEquals(err.code, "upstream_unreachable");
});

Deno.test("createOpenAiEmbedder() gives up after timeoutMs with a ServiceError", async () => {
  let release!: () => void;
  const hold = new Promise<void>((resolve) => release = resolve);
  const server = startStandIn(async () => {
    await hold;
    return jsonResponse(openAiAnswer(["x"]));
  });
  try {
    const embedder = createOpenAiEmbedder({ baseUrl: server.url, apiKey: "k", timeoutMs: 100 });
    const err = await assertRejects(
      () => embedder.embed("x"),
      ServiceError,
      "did not answer within 100 ms",
    );
    assertEquals(err.code, "upstream_timeout");
  } finally {
    release();
    await server.close();
  }
});

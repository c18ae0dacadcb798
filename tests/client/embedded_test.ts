// Embedded mode: the gateway code and demo engines inside the test process, called without
// sockets (the gateway's handler gets Request objects).
import { assert, assertEquals, assertRejects } from "../_assert.ts";
import { CancelledError, ConfigurationError, NotFoundError } from "../../src/core/errors.ts";
import { UnifiedInferenceClient } from "../../src/client/unified_inference_client.ts";
import { demoChatEngine, TEST_MODEL_CACHE } from "../_helpers/demo_engines.ts";
import "./_stand_in.ts"; // quiet logs

Deno.test("embedded mode: chat, stream, abort and embeddings through the in-process gateway", async () => {
  // A ready engine handed in (so its decode loop can be watched) plus one loaded by name.
  const engine = await demoChatEngine();
  const client = await UnifiedInferenceClient.create({
    env: {},
    envFile: null,
    embedded: {
      engines: [engine],
      chatModel: null,
      embeddingModel: "demo/embed",
      cacheDir: TEST_MODEL_CACHE,
      device: "cpu",
    },
  });
  try {
    assertEquals(client.mode, "embedded");
    assertEquals(client.endpoints.chat.model, "demo/chat");
    assertEquals(client.endpoints.embedding.model, "demo/embed");
    assertEquals(client.endpoints.chat.source, "embedded");

    const answer = await client.chat("Hello", { temperature: 0, maxTokens: 8 });
    assertEquals(answer.object, "chat.completion");
    assertEquals(answer.model, "demo/chat");
    let streamed = "";
    for await (const d of client.chatStream("Hello", { temperature: 0, maxTokens: 8 })) {
      streamed += d.content;
    }
    assertEquals(streamed, answer.text);

    const controller = new AbortController();
    let seen = 0;
    await assertRejects(async () => {
      for await (
        const _ of client.chatStream("go on forever", {
          temperature: 0,
          maxTokens: 300,
          signal: controller.signal,
        })
      ) {
        if (++seen === 2) controller.abort();
      }
    }, CancelledError);
    assertEquals(seen, 2);
    const deadline = Date.now() + 3000;
    while (engine.stats().running > 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 10));
    }
    assertEquals(engine.stats().running, 0, "the abort reached the decode loop");
    assert(engine.stats().steps < 100, `decoded ${engine.stats().steps} steps in all`);

    const vectors = await client.embed(["a", "b"]);
    assertEquals(vectors.length, 2);
    assert(vectors[0].length > 0);
    await assertRejects(() => client.embed("a", { model: "nope" }), NotFoundError);

    const status = await client.status();
    assertEquals(status.mode, "embedded");
    assertEquals(status.chat.available, true);
    // Each endpoint lists the models of its kind.
    assertEquals(status.chat.models, ["demo/chat"]);
    assertEquals(status.embedding.models, ["demo/embed"]);
  } finally {
    await client.close();
  }
});

Deno.test("embedded mode with chat only: embeddings are a NotFoundError from the gateway", async () => {
  await using client = await UnifiedInferenceClient.create({
    env: {},
    envFile: null,
    embeddingModel: "demo/embed",
    embedded: {
      chatModel: "demo/chat",
      embeddingModel: null,
      cacheDir: TEST_MODEL_CACHE,
      device: "cpu",
    },
  });
  assertEquals(client.endpoints.chat.model, "demo/chat");
  const text = await client.generate("Hi", { maxTokens: 3, temperature: 0 });
  assertEquals((await client.chat("Hi", { maxTokens: 3, temperature: 0 })).text, text);
  await assertRejects(() => client.embed("x"), NotFoundError);
});

Deno.test("embedded mode with no model at all is a ConfigurationError", async () => {
  await assertRejects(
    () =>
      UnifiedInferenceClient.create({
        env: {},
        envFile: null,
        embedded: { chatModel: null, embeddingModel: null },
      }),
    ConfigurationError,
    "no model",
  );
});

Deno.test("embedded mode: after close() every call fails at once saying the client is closed", async () => {
  const client = await UnifiedInferenceClient.create({
    env: {},
    envFile: null,
    embedded: {
      chatModel: "demo/chat",
      embeddingModel: "demo/embed",
      cacheDir: TEST_MODEL_CACHE,
      device: "cpu",
    },
  });
  assertEquals((await client.status()).chat.available, true);
  await client.close();
  const err = await assertRejects(
    () => client.generate("Hi", { maxTokens: 3 }),
    ConfigurationError,
    "the client is closed",
  );
  assertEquals(err.code, "client_closed");
  await assertRejects(() => client.embed("x"), ConfigurationError, "the client is closed");
  await assertRejects(async () => {
    for await (const _ of client.chatStream("Hi")) { /* nothing comes */ }
  }, ConfigurationError);
  const status = await client.status();
  assertEquals(status.chat.available, false);
  assertEquals(status.chat.detail, "the client is closed");
  assertEquals(status.embedding.available, false);
  await client.close(); // again: nothing happens
});

Deno.test("embedded mode: rerank() ranks with the reranker the embedded plane loads (rerankModel)", async () => {
  await using client = await UnifiedInferenceClient.create({
    env: {},
    envFile: null,
    embedded: {
      chatModel: null,
      embeddingModel: "demo/embed",
      rerankModel: "demo/rerank",
      cacheDir: TEST_MODEL_CACHE,
      device: "cpu",
    },
  });
  const documents = ["Paris is in France", "Berlin is in Germany", "a cat"];
  const ranked = await client.rerank("capital of France", documents);
  assertEquals(ranked.map((r) => r.index).sort(), [0, 1, 2]);
  for (const r of ranked) assertEquals(r.document, documents[r.index]);
  for (let i = 1; i < ranked.length; i++) assert(ranked[i - 1].score >= ranked[i].score);
  assertEquals(await client.rerank("capital of France", documents, { topN: 1 }), [ranked[0]]);
  // Embeddings still go to the embedding model; the reranker is listed beside it.
  assertEquals((await client.embed("x")).length, 1);
  assertEquals((await client.status()).embedding.models, ["demo/embed", "demo/rerank"]);
});

Deno.test("embedded mode without a reranker: rerank() says how to load one in this process", async () => {
  await using client = await UnifiedInferenceClient.create({
    env: {},
    envFile: null,
    embedded: {
      chatModel: null,
      embeddingModel: "demo/embed",
      cacheDir: TEST_MODEL_CACHE,
      device: "cpu",
    },
  });
  const err = await assertRejects(
    () => client.rerank("q", ["a", "b"]),
    ConfigurationError,
    "embedded: { rerankModel:",
  );
  assertEquals(err.code, "no_model");
  // No server is involved in embedded mode: serving one with the CLI would not help.
  assert(!err.message.includes("svc llm serve"), err.message);
});

// The engine server end to end: real demo models (random weights), a real socket, and the
// official `openai` package as the client.
import OpenAI from "openai";
import { assert, assertEquals, assertMatch, assertRejects } from "../_assert.ts";
import { startEngineServer } from "../../src/server/engine_server.ts";
import { TEST_MODEL_CACHE } from "../_helpers/demo_engines.ts";
import { demoEngineServer } from "../_helpers/demo_server.ts";
import { setupLogger } from "../../src/core/logging.ts";

setupLogger("error");

Deno.test("engine server: chat, streaming with usage and legacy completions through the openai SDK", async () => {
  const server = await demoEngineServer("demo/chat");
  const client = new OpenAI({ baseURL: server.baseUrl, apiKey: "unused", maxRetries: 0 });
  try {
    const messages = [
      { role: "system" as const, content: "Be brief." },
      { role: "user" as const, content: "Hello!" },
    ];
    const chat = await client.chat.completions.create({
      model: "demo/chat",
      messages,
      max_tokens: 8,
      temperature: 0,
    });
    assertEquals(chat.object, "chat.completion");
    assertEquals(chat.choices[0].message.role, "assistant");
    assert(["stop", "length"].includes(chat.choices[0].finish_reason));
    assert(chat.usage!.prompt_tokens > 5);
    assertEquals(
      chat.usage!.total_tokens,
      chat.usage!.prompt_tokens + chat.usage!.completion_tokens,
    );

    const stream = await client.chat.completions.create({
      model: "demo/chat",
      messages,
      max_tokens: 8,
      temperature: 0,
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = "";
    let usage: OpenAI.CompletionUsage | undefined | null;
    let finish: string | null = null;
    for await (const chunk of stream) {
      if (chunk.usage) usage = chunk.usage;
      for (const choice of chunk.choices) {
        text += choice.delta.content ?? "";
        finish = choice.finish_reason ?? finish;
      }
    }
    assertEquals(text, chat.choices[0].message.content, "streamed text equals the JSON answer");
    assertEquals(finish, chat.choices[0].finish_reason);
    assertEquals(usage?.completion_tokens, chat.usage!.completion_tokens);

    const completion = await client.completions.create({
      model: "demo/chat",
      prompt: ["Once upon", "a time"],
      max_tokens: 4,
      temperature: 0,
    });
    assertEquals(completion.choices.length, 2);
    assertEquals(completion.object, "text_completion");

    const models = await client.models.list();
    assertEquals(models.data.map((m) => m.id), ["demo/chat"]);
  } finally {
    await server.stop();
  }
});

Deno.test("engine server: embeddings as floats and as the SDK's default base64", async () => {
  const server = await demoEngineServer("demo/embed");
  const client = new OpenAI({ baseURL: server.baseUrl, apiKey: "unused", maxRetries: 0 });
  try {
    const input = ["first text", "second, longer text with more words"];
    const floats = await client.embeddings.create({
      model: "demo/embed",
      input,
      encoding_format: "float",
    });
    const base64 = await client.embeddings.create({ model: "demo/embed", input });
    assertEquals(floats.data.length, 2);
    assertEquals(floats.data[1].index, 1);
    for (const [i, item] of base64.data.entries()) {
      const expected = floats.data[i].embedding;
      assertEquals(item.embedding.length, expected.length);
      item.embedding.forEach((x, j) => assert(Math.abs(x - expected[j]) < 1e-6));
    }
    assert(floats.usage.prompt_tokens > 4);
    const short = await client.embeddings.create({
      model: "demo/embed",
      input: "x",
      dimensions: 8,
    });
    assertEquals(short.data[0].embedding.length, 8);
  } finally {
    await server.stop();
  }
});

Deno.test("engine server: errors reach the SDK as its typed errors with our status and message", async () => {
  const server = await demoEngineServer("demo/chat", "engine-secret");
  const good = new OpenAI({ baseURL: server.baseUrl, apiKey: "engine-secret", maxRetries: 0 });
  const bad = new OpenAI({ baseURL: server.baseUrl, apiKey: "wrong", maxRetries: 0 });
  const messages = [{ role: "user" as const, content: "hi" }];
  try {
    await assertRejects(
      () => bad.chat.completions.create({ model: "demo/chat", messages }),
      OpenAI.AuthenticationError,
    );
    const missing = await assertRejects(
      () => good.chat.completions.create({ model: "no/such-model", messages }),
      OpenAI.NotFoundError,
    );
    assertMatch(missing.message, /no\/such-model/);
    const tooLong = await assertRejects(
      () => good.chat.completions.create({ model: "demo/chat", messages, max_tokens: 100_000 }),
      OpenAI.BadRequestError,
    );
    assertMatch(tooLong.message, /context/);
    await assertRejects(
      () => good.chat.completions.create({ model: "demo/chat", messages, temperature: 7 }),
      OpenAI.BadRequestError,
    );
    await assertRejects(
      () => good.embeddings.create({ model: "demo/chat", input: "x" }),
      OpenAI.BadRequestError,
    );
    const health = await fetch(`${server.served.url}/health`);
    assertEquals(health.status, 200, "health needs no key");
    await health.body?.cancel();
  } finally {
    await server.stop();
  }
});

Deno.test("engine server: answers 503 while loading, then serves the demo stand-in of a default model", async () => {
  const server = await startEngineServer({
    kind: "chat",
    hostname: "127.0.0.1",
    port: 0,
    device: "cpu",
    cacheDir: TEST_MODEL_CACHE,
    hubEndpoint: "http://127.0.0.1:9", // nothing listens: the default model cannot be fetched
  });
  try {
    const early = await fetch(`${server.served.url}/health`);
    assertEquals(early.status, 503);
    await early.body?.cancel();
    await server.ready;
    const ready = await fetch(`${server.served.url}/health`);
    assertEquals(ready.status, 200);
    await ready.body?.cancel();
    const client = new OpenAI({ baseURL: server.baseUrl, apiKey: "unused", maxRetries: 0 });
    assertEquals((await client.models.list()).data.map((m) => m.id), ["demo/chat"]);
  } finally {
    await server.stop();
  }
});

Deno.test("engine server: a client that disconnects mid-stream stops its generation", async () => {
  const server = await demoEngineServer("demo/chat");
  try {
    // Greedy and deterministic: without the disconnect this reply runs long.
    const client = new OpenAI({ baseURL: server.baseUrl, apiKey: "unused", maxRetries: 0 });
    const full = await client.chat.completions.create({
      model: "demo/chat",
      messages: [{ role: "user", content: "never stop" }],
      max_tokens: 300,
      temperature: 0,
    });
    assert(full.usage!.completion_tokens > 100, "the reference reply should be long");
    const controller = new AbortController();
    const res = await fetch(`${server.baseUrl}/chat/completions`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({
        model: "demo/chat",
        messages: [{ role: "user", content: "never stop" }],
        max_tokens: 300,
        temperature: 0,
        stream: true,
      }),
      signal: controller.signal,
    });
    const reader = res.body!.getReader();
    await reader.read(); // the first chunk: generation is running
    const engine = server.engine;
    const steps = () => (engine.stats() as { steps: number }).steps;
    const before = steps();
    controller.abort();
    await reader.cancel().catch(() => {});
    const deadline = Date.now() + 2000;
    while ((engine.stats() as { running: number }).running > 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 10));
    }
    assertEquals((engine.stats() as { running: number }).running, 0);
    // Without the cancel it would decode the rest of the long reply; how many steps run before
    // the disconnect is seen depends on the machine's load (the demo model steps in ~1 ms), so
    // the bound is half that reply, not a latency.
    assert(
      steps() - before < full.usage!.completion_tokens / 2,
      `decoding went on for ${steps() - before} steps after the disconnect`,
    );
  } finally {
    await server.stop();
  }
});

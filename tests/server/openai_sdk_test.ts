// End to end over a real loopback socket with the official `openai` npm client.
import OpenAI from "openai";
import { createEngineApp } from "../../src/server/engine_app.ts";
import type { HttpLogger } from "../../src/http/logger.ts";
import { serveApp, type ServedApp } from "../../src/http/serve.ts";
import { FakeEngine, fakeVector } from "../_helpers/fake_engine.ts";
import { waitFor } from "../_helpers/wait.ts";
import {
  assert,
  assertAlmostEquals,
  assertEquals,
  assertMatch,
  assertRejects,
} from "../_assert.ts";

const QUIET: HttpLogger = { error: () => {}, warn: () => {} };
const KEY = "sk-test-123";

async function withServer(
  fn: (
    ctx: { client: OpenAI; server: ServedApp; chat: FakeEngine; embed: FakeEngine },
  ) => Promise<void>,
  options: { maxBodyBytes?: number; chat?: ConstructorParameters<typeof FakeEngine>[0] } = {},
): Promise<void> {
  const chat = new FakeEngine({ id: "demo/chat", ...options.chat });
  const embed = new FakeEngine({ id: "demo/embed", kind: "embedding", dimensions: 16 });
  const app = createEngineApp({
    engines: [chat, embed],
    apiKey: KEY,
    logger: QUIET,
    maxBodyBytes: options.maxBodyBytes,
  });
  const server = serveApp(app, { hostname: "127.0.0.1", port: 0, logger: QUIET });
  const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: KEY, maxRetries: 0 });
  try {
    await fn({ client, server, chat, embed });
  } finally {
    await server.shutdown();
  }
}

Deno.test("openai SDK: chat completion", async () => {
  await withServer(async ({ client, chat }) => {
    const completion = await client.chat.completions.create({
      model: "demo/chat",
      messages: [{ role: "system", content: "be brief" }, { role: "user", content: "hi" }],
      max_tokens: 5,
      temperature: 0,
      seed: 7,
    });
    assertEquals(completion.object, "chat.completion");
    assertEquals(completion.choices[0].finish_reason, "length");
    assertEquals(
      completion.choices[0].message.content,
      chat.tokensFor(chat.generateCalls[0].input, { seed: 7 }, 5).join(""),
    );
    assertEquals(completion.usage?.completion_tokens, 5);
    assertEquals(chat.generateCalls[0].params, { maxTokens: 5, temperature: 0, seed: 7 });
  });
});

Deno.test("openai SDK: streaming chat with include_usage", async () => {
  await withServer(async ({ client, chat }) => {
    const stream = await client.chat.completions.create({
      model: "demo/chat",
      messages: [{ role: "user", content: "stream please" }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = "";
    let usage;
    let finish;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? "";
      finish ??= chunk.choices[0]?.finish_reason ?? undefined;
      if (chunk.usage) usage = chunk.usage;
    }
    assertEquals(text, chat.tokensFor(chat.generateCalls[0].input, {}, 8).join(""));
    assertEquals(finish, "stop");
    assertEquals(usage, {
      prompt_tokens: 3,
      completion_tokens: 8,
      total_tokens: 11,
      prompt_tokens_details: { cached_tokens: 0 },
    });
  });
});

Deno.test("openai SDK: aborting mid-stream cancels the engine's generation", async () => {
  await withServer(async ({ client, chat }) => {
    const stream = await client.chat.completions.create({
      model: "demo/chat",
      messages: [{ role: "user", content: "long" }],
      stream: true,
    });
    let chunks = 0;
    for await (const _ of stream) {
      if (++chunks === 3) {
        stream.controller.abort();
        break;
      }
    }
    await waitFor(() => chat.aborted === 1, { what: "the generation to be cancelled" });
    await waitFor(() => chat.running === 0);
    assertEquals(chat.completed, 0);
  }, { chat: { tokenDelayMs: 20, eosAfter: 10_000, contextLength: 100_000 } });
});

Deno.test("openai SDK: legacy completions with a prompt list", async () => {
  await withServer(async ({ client }) => {
    const res = await client.completions.create({
      model: "demo/chat",
      prompt: ["one", "two"],
      n: 2,
      max_tokens: 3,
    });
    assertEquals(res.choices.map((c) => c.index), [0, 1, 2, 3]);
    assert(res.choices.every((c) => c.finish_reason === "length" && c.text.length > 0));
    assertEquals(res.usage?.prompt_tokens, 2);
  });
});

Deno.test("openai SDK: embeddings as floats and as the SDK's default base64", async () => {
  await withServer(async ({ client, embed }) => {
    const input = ["first text", "second"];
    const floats = await client.embeddings.create({
      model: "demo/embed",
      input,
      encoding_format: "float",
    });
    // Default: the SDK asks for base64 and decodes it to numbers itself.
    const bodies: string[] = [];
    const spying = new OpenAI({
      baseURL: client.baseURL,
      apiKey: KEY,
      maxRetries: 0,
      fetch: async (url: string | URL | Request, init?: RequestInit) => {
        bodies.push(String(init?.body));
        const res = await fetch(url, init);
        bodies.push(await res.clone().text());
        return res;
      },
    });
    const decoded = await spying.embeddings.create({ model: "demo/embed", input });
    assertEquals(JSON.parse(bodies[0]).encoding_format, "base64");
    assertEquals(typeof JSON.parse(bodies[1]).data[0].embedding, "string");
    assertEquals(embed.embedCalls.length, 2);
    for (const [i, text] of input.entries()) {
      const expected = Array.from(fakeVector(text, 16));
      assertEquals(floats.data[i].embedding, expected);
      assertEquals(decoded.data[i].embedding, expected);
    }
    assertEquals(decoded.usage.prompt_tokens, 3);
    const cut = await client.embeddings.create({ model: "demo/embed", input: "x", dimensions: 4 });
    assertEquals(cut.data[0].embedding.length, 4);
    assertAlmostEquals(Math.hypot(...cut.data[0].embedding), 1, 1e-6);
  });
});

Deno.test("openai SDK: models list and retrieve", async () => {
  await withServer(async ({ client }) => {
    const ids = [];
    for await (const model of client.models.list()) ids.push(model.id);
    assertEquals(ids, ["demo/chat", "demo/embed"]);
    const model = await client.models.retrieve("demo/embed");
    assertEquals(model.id, "demo/embed");
    assertEquals(model.owned_by, "tests");
  });
});

Deno.test("openai SDK: errors arrive as the SDK's typed errors with our status and message", async () => {
  await withServer(async ({ client, server }) => {
    const missing = await assertRejects(
      () =>
        client.chat.completions.create({
          model: "nope",
          messages: [{ role: "user", content: "x" }],
        }),
      OpenAI.NotFoundError,
    );
    assertEquals(missing.status, 404);
    assertEquals(missing.code, "model_not_found");
    assertMatch(missing.message, /The model 'nope' does not exist/);
    const bad = await assertRejects(
      () =>
        client.chat.completions.create({
          model: "demo/chat",
          messages: [{ role: "user", content: "x" }],
          temperature: 5,
        }),
      OpenAI.BadRequestError,
    );
    assertEquals(bad.param, "temperature");
    assertEquals(bad.type, "invalid_request_error");
    const role = await assertRejects(
      () =>
        client.chat.completions.create({
          model: "demo/chat",
          messages: [{
            role: "robot",
            content: "x",
          }] as unknown as OpenAI.ChatCompletionMessageParam[],
        }),
      OpenAI.BadRequestError,
    );
    assertEquals(role.param, "messages.0.role");
    const kind = await assertRejects(
      () => client.embeddings.create({ model: "demo/chat", input: "x" }),
      OpenAI.BadRequestError,
    );
    assertEquals(kind.code, "invalid_model_kind");
    const wrongKey = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: "wrong", maxRetries: 0 });
    const auth = await assertRejects(() => wrongKey.models.list(), OpenAI.AuthenticationError);
    assertEquals(auth.status, 401);
    assertMatch(auth.message, /Incorrect API key/);
  });
});

Deno.test("openai SDK: an error after the stream started is raised while iterating", async () => {
  await withServer(async ({ client, chat }) => {
    chat.options.failAfterTokens = { tokens: 2, error: new Error("boom") };
    const stream = await client.chat.completions.create({
      model: "demo/chat",
      messages: [{ role: "user", content: "x" }],
      stream: true,
    });
    const err = await assertRejects(async () => {
      for await (const _ of stream) { /* drain */ }
    }, OpenAI.APIError);
    assertMatch(err.message, /internal error/);
  });
});

Deno.test("server over a socket: 413, 405, 404, bad JSON and invalid UTF-8", async () => {
  await withServer(async ({ server }) => {
    const auth = { authorization: `Bearer ${KEY}`, "content-type": "application/json" };
    const big = await fetch(`${server.url}/v1/embeddings`, {
      method: "POST",
      headers: auth,
      body: JSON.stringify({ model: "demo/embed", input: "x".repeat(5000) }),
    });
    assertEquals(big.status, 413);
    assertEquals((await big.json()).error.code, "payload_too_large");
    // Chunked upload without Content-Length: refused while streaming.
    const chunks = new ReadableStream<Uint8Array>({
      start(c) {
        for (let i = 0; i < 10; i++) c.enqueue(new TextEncoder().encode(" ".repeat(1000)));
        c.close();
      },
    });
    const streamed = await fetch(`${server.url}/v1/embeddings`, {
      method: "POST",
      headers: auth,
      body: chunks,
    });
    assertEquals(streamed.status, 413);
    await streamed.body?.cancel();
    const method = await fetch(`${server.url}/v1/chat/completions`, { headers: auth });
    assertEquals(method.status, 405);
    assertEquals(method.headers.get("allow"), "POST");
    await method.body?.cancel();
    const unknown = await fetch(`${server.url}/v1/nothing`, { headers: auth });
    assertEquals(unknown.status, 404);
    await unknown.body?.cancel();
    const json = await fetch(`${server.url}/v1/chat/completions`, {
      method: "POST",
      headers: auth,
      body: "{,}",
    });
    assertEquals(json.status, 400);
    assertEquals((await json.json()).error.code, "invalid_json");
    const utf8 = await fetch(`${server.url}/v1/chat/completions`, {
      method: "POST",
      headers: auth,
      body: new Uint8Array([0x7b, 0x22, 0xc3, 0x28, 0x22, 0x3a, 0x31, 0x7d]),
    });
    assertEquals(utf8.status, 400);
    assertEquals((await utf8.json()).error.code, "invalid_encoding");
    const health = await fetch(`${server.url}/health`);
    assertEquals(health.status, 200);
    await health.body?.cancel();
  }, { maxBodyBytes: 4096 });
});

// The client's HTTP behaviour against stand-in servers: bearer keys, retries with back-off and
// Retry-After, typed errors carrying the server's status and message, connection failures.
import { assert, assertEquals, assertMatch, assertRejects, assertThrows } from "../_assert.ts";
import {
  AuthenticationError,
  ConfigurationError,
  ContextLengthError,
  NotFoundError,
  RateLimitError,
  ServiceError,
  ServiceUnavailableError,
  type SvcException,
  ValidationError,
} from "../../src/core/errors.ts";
import { UnifiedInferenceClient } from "../../src/client/unified_inference_client.ts";
import { chatAnswer, closedPort, errorAnswer, NO_LOCAL, standIn } from "./_stand_in.ts";

const FAST = { retryBaseDelayMs: 10, maxRetryDelayMs: 5000 };

function clientFor(baseUrl: string, extra: Record<string, unknown> = {}) {
  return UnifiedInferenceClient.create({
    ...NO_LOCAL,
    ...FAST,
    llmBaseUrl: baseUrl,
    llmModel: "m",
    embeddingBaseUrl: baseUrl,
    embeddingModel: "e",
    ...extra,
  });
}

Deno.test("chat() retries 503 then 429 honouring Retry-After, then succeeds", async () => {
  let calls = 0;
  const server = standIn((req) => {
    if (!req.url.endsWith("/chat/completions")) return new Response("no", { status: 404 });
    calls++;
    if (calls === 1) {
      return errorAnswer(503, "loading", { headers: { "retry-after": "1" } });
    }
    if (calls === 2) return errorAnswer(429, "slow down", { headers: { "retry-after": "0" } });
    return chatAnswer("m", "third time lucky");
  });
  try {
    const client = await clientFor(server.baseUrl, { apiKey: "k-123" });
    const started = Date.now();
    const answer = await client.chat([{ role: "user", content: "hi" }]);
    const elapsed = Date.now() - started;
    assertEquals(answer.text, "third time lucky");
    assertEquals(calls, 3);
    assert(elapsed >= 950, `waited ${elapsed} ms, Retry-After asked for 1 s`);
    assert(server.seen.every((r) => r.authorization === "Bearer k-123"));
  } finally {
    await server.close();
  }
});

Deno.test("chat() gives up at once when Retry-After is longer than maxRetryDelayMs", async () => {
  const server = standIn(() =>
    errorAnswer(429, "quota used up", {
      type: "rate_limit_error",
      code: "quota",
      headers: { "retry-after": "3600" },
    })
  );
  try {
    const client = await clientFor(server.baseUrl);
    const started = Date.now();
    const err = await assertRejects(() => client.generate("hi"), RateLimitError);
    assert(Date.now() - started < 2000);
    assertEquals(server.seen.length, 1);
    assertEquals(err.retryAfterSeconds, 3600);
    assertEquals(err.status, 429);
    assertEquals(err.code, "quota");
    assertMatch(err.message, /quota used up.*HTTP 429/);
  } finally {
    await server.close();
  }
});

Deno.test("chat() stops retrying after maxRetries and raises the last 503", async () => {
  const server = standIn(() => errorAnswer(503, "still loading", { type: "x" }));
  try {
    const client = await clientFor(server.baseUrl, { maxRetries: 2 });
    const err = await assertRejects(() => client.chat("hi"), ServiceUnavailableError);
    assertEquals(server.seen.length, 3);
    assertEquals(err.status, 503);
    assertMatch(err.message, /still loading/);
  } finally {
    await server.close();
  }
});

Deno.test("onRetry hears each retry, and false gives up at once with the error", async () => {
  const server = standIn((req) => {
    if (!req.url.endsWith("/chat/completions")) return new Response("no", { status: 404 });
    return server.seen.length < 3
      ? errorAnswer(503, "loading", { headers: { "retry-after": "0" } })
      : chatAnswer("m", "loaded");
  });
  const port = closedPort();
  try {
    const heard: { error: SvcException; attempt: number; delayMs: number; url: string }[] = [];
    const client = await clientFor(server.baseUrl, {
      onRetry: (r: typeof heard[number]) => void heard.push(r),
    });
    assertEquals((await client.chat("hi")).text, "loaded");
    assertEquals(heard.map((r) => r.attempt), [1, 2]);
    assert(heard.every((r) => r.error instanceof ServiceUnavailableError && r.delayMs === 0));
    assertEquals(heard[0].url, `${server.baseUrl}/chat/completions`);

    // Retry only 503s, say: a connection failure then fails at its first onRetry.
    const asked: number[] = [];
    const down = await clientFor(`http://127.0.0.1:${port}/v1`, {
      onRetry: (r: typeof heard[number]) => {
        asked.push(r.attempt);
        return r.error instanceof ServiceUnavailableError;
      },
    });
    const err = await assertRejects(() => down.chat("hi"), ServiceError);
    assertEquals(err.code, "connection_error");
    assertEquals(asked, [1]);
  } finally {
    await server.close();
  }
});

Deno.test("errors are typed by status and carry the server's status, code and message", async () => {
  // deno-lint-ignore no-explicit-any
  const cases: [number, string | undefined, new (...a: any[]) => SvcException][] = [
    [400, "context_length_exceeded", ContextLengthError],
    [400, "invalid_value", ValidationError],
    [401, "invalid_api_key", AuthenticationError],
    [403, undefined, AuthenticationError],
    [404, "model_not_found", NotFoundError],
    [500, "internal_error", ServiceError],
    [502, undefined, ServiceError],
  ];
  for (const [status, code, type] of cases) {
    const s = standIn(() => errorAnswer(status, `boom ${status}`, { code, param: "messages" }));
    try {
      const client = await clientFor(s.baseUrl);
      const err = await assertRejects(() => client.chat("hi"), type);
      assertEquals(err.status, status);
      if (code !== undefined) assertEquals(err.code, code);
      assertEquals(err.param, "messages");
      assertMatch(err.message, new RegExp(`boom ${status}.*HTTP ${status} from http://127`));
      assertEquals(s.seen.length, 1, "no retry on a non-retryable status");
    } finally {
      await s.close();
    }
  }
});

Deno.test("a closed port is a ServiceError naming the URL, after the retries", async () => {
  const port = closedPort();
  const client = await clientFor(`http://127.0.0.1:${port}/v1`, { maxRetries: 2 });
  const err = await assertRejects(() => client.embed("x"), ServiceError);
  assertEquals(err.code, "connection_error");
  assertMatch(err.message, new RegExp(`cannot reach http://127\\.0\\.0\\.1:${port}/v1/embeddings`));
  assert(!(err instanceof TypeError));
});

Deno.test("a connection error is retried until the server comes up", async () => {
  const port = closedPort();
  const client = await clientFor(`http://127.0.0.1:${port}/v1`, {
    maxRetries: 8,
    retryBaseDelayMs: 50,
    maxRetryDelayMs: 400,
  });
  let server: Deno.HttpServer | undefined;
  const later = setTimeout(() => {
    server = Deno.serve(
      { hostname: "127.0.0.1", port, onListen: () => {} },
      () => Response.json({ object: "list", data: [{ index: 0, embedding: [1, 2] }] }),
    );
  }, 150);
  try {
    assertEquals(await client.embed("x"), [[1, 2]]);
  } finally {
    clearTimeout(later);
    await server?.shutdown();
  }
});

Deno.test("a server slower than timeoutMs is a ServiceError with code timeout", async () => {
  const server = standIn(async () => {
    await new Promise((r) => setTimeout(r, 400));
    return chatAnswer("m", "late");
  });
  try {
    const client = await clientFor(server.baseUrl, { timeoutMs: 100 });
    const err = await assertRejects(() => client.chat("hi"), ServiceError);
    assertEquals(err.code, "timeout");
    assertEquals(server.seen.length, 1, "a timeout is not retried");
  } finally {
    await new Promise((r) => setTimeout(r, 400));
    await server.close();
  }
});

Deno.test("calls without an endpoint raise a ConfigurationError saying what to set", async () => {
  const client = await UnifiedInferenceClient.create({ ...NO_LOCAL });
  assertEquals(client.endpoints.chat.source, "none");
  const err = await assertRejects(() => client.chat("hi"), ConfigurationError);
  assertMatch(err.message, /SVC_CHAT_BASE_URL/);
  await assertRejects(() => client.embed(["a"]), ConfigurationError, "SVC_EMBEDDING_BASE_URL");
});

Deno.test("embed() splits long lists into batches and keeps the order", async () => {
  const server = standIn((_req, seen) => {
    const input = (seen.body as { input: string[] }).input;
    // Answer out of order: the client sorts by index.
    const data = input.map((t, i) => ({ index: i, embedding: [Number(t)] })).reverse();
    return Response.json({ object: "list", data, model: "e" });
  });
  try {
    const client = await clientFor(server.baseUrl, { embedBatchSize: 2 });
    const vectors = await client.embed(["1", "2", "3", "4", "5"]);
    assertEquals(vectors, [[1], [2], [3], [4], [5]]);
    assertEquals(server.seen.length, 3);
    assertEquals((server.seen[0].body as { model: string }).model, "e");
  } finally {
    await server.close();
  }
});

Deno.test("an error event in the middle of a stream is raised as its typed error", async () => {
  const chunk = (content: string) =>
    `data: ${
      JSON.stringify({
        id: "c",
        object: "chat.completion.chunk",
        created: 0,
        model: "m",
        system_fingerprint: null,
        choices: [{ index: 0, delta: { content }, logprobs: null, finish_reason: null }],
      })
    }\n\n`;
  const server = standIn(() =>
    new Response(
      chunk("Hel") + chunk("lo") +
        `data: ${
          JSON.stringify({
            error: {
              message: "the engine stopped",
              type: "service_unavailable_error",
              code: "engine_stopped",
              param: null,
            },
          })
        }\n\n`,
      { headers: { "content-type": "text/event-stream" } },
    )
  );
  try {
    const client = await clientFor(server.baseUrl);
    let text = "";
    const err = await assertRejects(async () => {
      for await (const d of client.chatStream("hi")) text += d.content;
    }, ServiceUnavailableError);
    assertEquals(text, "Hello");
    assertEquals(err.code, "engine_stopped");
    assertMatch(err.message, /the engine stopped/);
    assertEquals((server.seen[0].body as { stream: boolean }).stream, true);
  } finally {
    await server.close();
  }
});

Deno.test("timeouts, retry settings and sampling numbers out of range are refused before any request", async () => {
  const server = standIn(() => chatAnswer("m", "ok"));
  try {
    for (const timeoutMs of [-1, 0, NaN, Infinity, 2 ** 31]) {
      const err = await assertRejects(
        () => clientFor(server.baseUrl, { timeoutMs }),
        ConfigurationError,
      );
      assertMatch(err.message, /^timeoutMs must be a number above 0 and at most 2147483647; got /);
      assertEquals(err.param, "timeoutMs");
    }
    await assertRejects(
      () => clientFor(server.baseUrl, { maxRetries: NaN }),
      ConfigurationError,
      "maxRetries must be an integer of at least 0",
    );
    await assertRejects(
      () => clientFor(server.baseUrl, { streamIdleTimeoutMs: -5 }),
      ConfigurationError,
      "streamIdleTimeoutMs must be",
    );
    await assertRejects(
      () => clientFor(server.baseUrl, { defaultSampling: { temperature: NaN } }),
      ConfigurationError,
      "defaultSampling.temperature must be a finite number; got NaN",
    );
    assertThrows(
      () =>
        UnifiedInferenceClient.createWithControlPlane(server.baseUrl, "m", server.baseUrl, "e", {
          timeoutMs: 0,
        }),
      ConfigurationError,
    );
    const client = await clientFor(server.baseUrl);
    const perCall = await assertRejects(
      () => client.generate("x", { timeoutMs: -5 }),
      ValidationError,
      "timeoutMs must be a number above 0",
    );
    assertEquals(perCall.param, "timeoutMs");
    await assertRejects(
      () => client.generate("x", { temperature: NaN }),
      ValidationError,
      "temperature must be a finite number; got NaN",
    );
    await assertRejects(
      () => client.responses("x", { topP: Infinity }),
      ValidationError,
      "topP must be a finite number; got Infinity",
    );
    assertEquals(server.seen.length, 0, "nothing was sent");
    assertEquals(await client.generate("x", { temperature: 0, timeoutMs: 5000 }), "ok");
  } finally {
    await server.close();
  }
});

Deno.test("a stream that falls silent fails after streamIdleTimeoutMs and the server is told", async () => {
  let cancelled!: () => void;
  const serverSawCancel = new Promise<void>((resolve) => (cancelled = resolve));
  const server = standIn(() => {
    const first = { choices: [{ index: 0, delta: { role: "assistant", content: "hi" } }] };
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(`data: ${JSON.stringify(first)}\n\n`));
        // then nothing more, ever
      },
      cancel() {
        cancelled();
      },
    });
    return new Response(body, { headers: { "content-type": "text/event-stream" } });
  });
  try {
    const client = await clientFor(server.baseUrl, { streamIdleTimeoutMs: 200 });
    const seen: string[] = [];
    const err = await assertRejects(async () => {
      for await (const d of client.chatStream("hi")) seen.push(d.content);
    }, ServiceError);
    assertEquals(seen, ["hi"]);
    assertEquals(err.code, "timeout");
    assertMatch(err.message, /sent nothing for 200 ms mid-stream \(streamIdleTimeoutMs\)/);
    await serverSawCancel;
  } finally {
    await server.close();
  }
});

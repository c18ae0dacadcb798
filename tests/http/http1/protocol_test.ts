import { createEngineApp } from "../../../src/server/engine_app.ts";
import { MetricsRegistry } from "../../../src/http/metrics.ts";
import type { HttpLogger } from "../../../src/http/logger.ts";
import { serveApp, type ServedApp } from "../../../src/http/serve.ts";
import { FakeEngine } from "../../_helpers/fake_engine.ts";
import { waitFor } from "../../_helpers/wait.ts";
import { assert, assertEquals, assertMatch } from "../../_assert.ts";
import { firstJsonBody, RawClient } from "./_raw_client.ts";

const CHAT = JSON.stringify({ model: "fake/chat", messages: [{ role: "user", content: "hi" }] });
const STREAM = CHAT.replace("{", '{"stream":true,');

// A logger that records what the server logs (nothing is expected for client misbehaviour).
function spyLogger(): HttpLogger & { lines: string[] } {
  const lines: string[] = [];
  return {
    lines,
    error: (m, f) => void lines.push(`ERROR ${m} ${JSON.stringify(f)}`),
    warn: (m, f) => void lines.push(`WARN ${m} ${JSON.stringify(f)}`),
  };
}

function serve(engine = new FakeEngine(), metrics?: MetricsRegistry) {
  const logger = spyLogger();
  const server = serveApp(createEngineApp({ engines: [engine], logger, metrics }), { logger });
  return { server, logger };
}

function post(path: string, body: string, extra = ""): string {
  return `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n${extra}` +
    `Content-Length: ${new TextEncoder().encode(body).length}\r\n\r\n${body}`;
}

async function exchange(server: ServedApp, bytes: string): Promise<string> {
  const c = await RawClient.open(server.url);
  try {
    await c.send(bytes);
    assert(await c.untilClosed(), `the server closed the connection; got: ${c.text.slice(0, 300)}`);
    return c.text;
  } finally {
    await c.close();
  }
}

for (
  const [what, request, status, code] of [
    ["a malformed request line", "GARBAGE\r\n\r\n", 400, "invalid_request_line"],
    [
      "the HTTP/2 prior-knowledge preface",
      "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
      505,
      "http_version_not_supported",
    ],
    [
      "Transfer-Encoding with Content-Length",
      "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n" +
      "Content-Length: 5\r\n\r\n0\r\n\r\n",
      400,
      "conflicting_framing",
    ],
  ] as const
) {
  Deno.test(`serveApp() answers ${what} with ${status} and an OpenAI error body, then closes`, async () => {
    const { server, logger } = serve();
    try {
      const text = await exchange(server, request);
      assertMatch(text, new RegExp(`^HTTP/1\\.1 ${status} `));
      assertMatch(text, /\r\nconnection: close\r\n/i);
      const body = firstJsonBody(text);
      assertEquals(body.error.code, code);
      assertEquals(typeof body.error.message, "string");
      assertEquals(body.error.type, "invalid_request_error");
      assertEquals(body.error.param, null);
      assertEquals(logger.lines, []);
    } finally {
      await server.shutdown();
    }
  });
}

Deno.test("serveApp() answers a chunked body with a bad chunk size with 400 invalid_chunk_size", async () => {
  const engine = new FakeEngine();
  const { server, logger } = serve(engine);
  try {
    const text = await exchange(
      server,
      "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" +
        "zz\r\n{}\r\n0\r\n\r\n",
    );
    assertMatch(text, /^HTTP\/1\.1 400 /);
    assertEquals(firstJsonBody(text).error.code, "invalid_chunk_size");
    assertEquals(engine.generateCalls.length, 0);
    assertEquals(logger.lines, []);
  } finally {
    await server.shutdown();
  }
});

Deno.test("serveApp() reads a chunked body with extensions and trailers", async () => {
  const { server } = serve();
  try {
    const half = Math.floor(CHAT.length / 2);
    const chunk = (s: string) => `${s.length.toString(16)};ext=1\r\n${s}\r\n`;
    const text = await exchange(
      server,
      "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" +
        "Transfer-Encoding: chunked\r\n\r\n" + chunk(CHAT.slice(0, half)) +
        chunk(CHAT.slice(half)) + "0\r\nX-Trailer: 1\r\n\r\n",
    );
    assertMatch(text, /^HTTP\/1\.1 200 /);
    assertMatch(text, /"finish_reason":"stop"/);
  } finally {
    await server.shutdown();
  }
});

Deno.test("serveApp() sends 100 Continue before reading a body the client holds back", async () => {
  const { server } = serve();
  const c = await RawClient.open(server.url);
  try {
    const [head, body] = post("/v1/chat/completions", CHAT, "Expect: 100-continue\r\n").split(
      "\r\n\r\n",
    );
    await c.send(head + "\r\n\r\n");
    assert(await c.until((x) => x.text.includes("\r\n\r\n")), "an interim answer");
    assertEquals(c.text, "HTTP/1.1 100 Continue\r\n\r\n");
    await c.send(body);
    assert(await c.until((x) => x.text.includes('"finish_reason"')));
    assertMatch(c.text.slice(c.text.indexOf("\r\n\r\n") + 4), /^HTTP\/1\.1 200 /);
  } finally {
    await c.close();
    await server.shutdown();
  }
});

Deno.test("serveApp() answers pipelined requests in order and honours Connection: close", async () => {
  const { server } = serve();
  try {
    const text = await exchange(
      server,
      post("/v1/chat/completions", CHAT) + "GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n" +
        "GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    );
    const statuses = [...text.matchAll(/HTTP\/1\.1 (\d+) /g)].map((m) => m[1]);
    assertEquals(statuses, ["200", "200", "200"]);
    const chat = text.indexOf("chat.completion");
    const models = text.indexOf('"object":"list"');
    const health = text.indexOf('"status":"ok"');
    assert(chat > 0 && chat < models && models < health, "the answers come in request order");
    assertMatch(text.slice(text.lastIndexOf("HTTP/1.1")), /\r\nconnection: close\r\n/i);
  } finally {
    await server.shutdown();
  }
});

Deno.test("serveApp() answers HTTP/1.0 with a Content-Length and closes; HEAD gets no body", async () => {
  const { server } = serve();
  try {
    const old = await exchange(server, "GET /health HTTP/1.0\r\n\r\n");
    assertMatch(old, /^HTTP\/1\.1 200 /);
    assertMatch(old, /\r\ncontent-length: \d+\r\n/i);
    assert(!/transfer-encoding/i.test(old));
    const head = await exchange(
      server,
      "HEAD /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    );
    assertMatch(head, /^HTTP\/1\.1 200 /);
    assert(head.endsWith("\r\n\r\n"), `no body after the head: ${JSON.stringify(head)}`);
  } finally {
    await server.shutdown();
  }
});

Deno.test("serveApp() streams SSE chunked, each event as soon as it is produced", async () => {
  const engine = new FakeEngine({ tokenDelayMs: 200, eosAfter: 3 });
  const { server } = serve(engine);
  const c = await RawClient.open(server.url);
  try {
    await c.send(post("/v1/chat/completions", STREAM, "Connection: close\r\n"));
    assert(await c.until((x) => x.text.includes('"content":"')), "the first token arrives");
    assertEquals(engine.completed, 0, "before the generation ended");
    assertMatch(c.text, /\r\ntransfer-encoding: chunked\r\n/i);
    assert(await c.untilClosed());
    assert(c.text.endsWith("data: [DONE]\n\n\r\n0\r\n\r\n"), "ends with [DONE] and the last chunk");
  } finally {
    await c.close();
    await server.shutdown();
  }
});

Deno.test("serveApp() counts a client leaving mid-upload as cancelled (499), never as an error", async () => {
  const metrics = new MetricsRegistry();
  const { server, logger } = serve(new FakeEngine(), metrics);
  try {
    const c = await RawClient.open(server.url);
    await c.send(post("/v1/chat/completions", CHAT).slice(0, -10)); // the body is 10 bytes short
    await new Promise((r) => setTimeout(r, 50));
    await c.close();
    await waitFor(() => /code="cancelled"/.test(metrics.render()), { what: "a cancelled count" });
    assertMatch(metrics.render(), /status="499"/);
    assertEquals(logger.lines, []);
  } finally {
    await server.shutdown();
  }
});

Deno.test("serveApp() aborts the request's signal when the client leaves while the handler runs", async () => {
  const engine = new FakeEngine({ tokenDelayMs: 20, eosAfter: 1000, contextLength: 10_000 });
  const { server, logger } = serve(engine);
  try {
    const c = await RawClient.open(server.url);
    await c.send(post("/v1/chat/completions", CHAT));
    await waitFor(() => engine.running === 1);
    await c.close();
    await waitFor(() => engine.aborted === 1, { what: "the generation aborted" });
    assertEquals(logger.lines, []);
  } finally {
    await server.shutdown();
  }
});

Deno.test("serveApp() shutdown closes idle keep-alive connections", async () => {
  const { server } = serve();
  const c = await RawClient.open(server.url);
  try {
    await c.send("GET /health HTTP/1.1\r\nHost: x\r\n\r\n");
    assert(await c.until((x) => x.text.includes('"status":"ok"')));
    await server.shutdown();
    assert(await c.untilClosed(1000), "the idle connection was closed");
  } finally {
    await c.close();
    await server.shutdown();
  }
});

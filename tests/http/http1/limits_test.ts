import { fileURLToPath } from "node:url";
import { createEngineApp } from "../../../src/server/engine_app.ts";
import { createHttpApp } from "../../../src/http/http_app.ts";
import { sseResponse } from "../../../src/http/sse_response.ts";
import type { HttpLimits } from "../../../src/http/http1/limits.ts";
import type { HttpLogger } from "../../../src/http/logger.ts";
import { serveApp, type ServedApp } from "../../../src/http/serve.ts";
import { FakeEngine } from "../../_helpers/fake_engine.ts";
import { waitFor } from "../../_helpers/wait.ts";
import { assert, assertEquals, assertMatch } from "../../_assert.ts";
import { firstJsonBody, RawClient } from "./_raw_client.ts";

const QUIET: HttpLogger = { error: () => {}, warn: () => {} };
const GET_HEALTH = "GET /health HTTP/1.1\r\nHost: x\r\n\r\n";
const CHAT = JSON.stringify({ model: "fake/chat", messages: [{ role: "user", content: "hi" }] });

function serve(limits: Partial<HttpLimits>, engine = new FakeEngine()): ServedApp {
  return serveApp(createEngineApp({ engines: [engine], logger: QUIET }), { logger: QUIET, limits });
}

// Polls with fresh connections until one is answered 200 (the server notices closed sockets
// asynchronously); false when none is within `timeoutMs`.
async function answersWithin(url: string, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const c = await RawClient.open(url);
    await c.send(GET_HEALTH);
    const ok = await c.until((x) => /\r\n\r\n\{/.test(x.text) || x.closed, 2000);
    const text = c.text;
    await c.close();
    if (ok && text.startsWith("HTTP/1.1 200")) return true;
  }
  return false;
}

Deno.test("serveApp() answers a connection over maxConnections with a 503 JSON error and closes it", async () => {
  const server = serve({ maxConnections: 2 });
  const held = [await RawClient.open(server.url), await RawClient.open(server.url)];
  try {
    for (const c of held) {
      await c.send(GET_HEALTH);
      assert(await c.until((x) => x.text.includes('"status":"ok"')), "a held connection is served");
    }
    const over = await RawClient.open(server.url);
    assert(await over.untilClosed(), "the connection over the cap is closed");
    assertMatch(over.text, /^HTTP\/1\.1 503 /);
    assertMatch(over.text, /\r\nconnection: close\r\n/i);
    assertMatch(over.text, /\r\nretry-after: 1\r\n/i);
    const body = firstJsonBody(over.text);
    assertEquals(body.error.code, "too_many_connections");
    assertEquals(body.error.type, "service_unavailable_error");
    await over.close();
    for (const c of held) await c.close();
    assert(await answersWithin(server.url, 5000), "served again once the held ones closed");
  } finally {
    for (const c of held) await c.close();
    await server.shutdown();
  }
});

Deno.test("serveApp() answers 408 and closes when the headers do not arrive within headerTimeoutMs", async () => {
  const server = serve({ headerTimeoutMs: 300 });
  const c = await RawClient.open(server.url);
  try {
    await c.send("GET /v1/models HTTP/1.1\r\nHost: x\r\nX-Slow: ");
    assert(await c.untilClosed(), "the half-sent connection is closed");
    assertMatch(c.text, /^HTTP\/1\.1 408 /);
    const body = firstJsonBody(c.text);
    assertEquals(body.error.code, "header_timeout");
    assertEquals(body.error.type, "invalid_request_error");
  } finally {
    await c.close();
    await server.shutdown();
  }
});

Deno.test("serveApp() answers 408 when the body does not arrive within bodyTimeoutMs", async () => {
  const chat = new FakeEngine();
  const server = serve({ bodyTimeoutMs: 300 }, chat);
  const c = await RawClient.open(server.url);
  try {
    await c.send(
      "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" +
        "Content-Length: 100\r\n\r\n" + CHAT.slice(0, 10),
    );
    assert(await c.untilClosed(), "the connection with the unfinished body is closed");
    assertMatch(c.text, /^HTTP\/1\.1 408 /);
    assertEquals(firstJsonBody(c.text).error.code, "body_timeout");
    assertEquals(chat.generateCalls.length, 0);
  } finally {
    await c.close();
    await server.shutdown();
  }
});

Deno.test("serveApp() closes a keep-alive connection idle for keepAliveTimeoutMs", async () => {
  const server = serve({ keepAliveTimeoutMs: 300 });
  const c = await RawClient.open(server.url);
  try {
    await c.send(GET_HEALTH);
    assert(await c.until((x) => x.text.includes('"status":"ok"')));
    assert(await c.untilClosed(), "the idle connection is closed");
    assertEquals(c.text.match(/HTTP\/1\.1 /g)?.length, 1, "nothing is sent at the idle close");
  } finally {
    await c.close();
    await server.shutdown();
  }
});

Deno.test("serveApp() answers 431 when the request head exceeds maxHeaderBytes", async () => {
  const server = serve({ maxHeaderBytes: 1024 });
  const c = await RawClient.open(server.url);
  try {
    await c.send(`GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(2000)}\r\n\r\n`);
    assert(await c.untilClosed());
    assertMatch(c.text, /^HTTP\/1\.1 431 /);
    assertEquals(firstJsonBody(c.text).error.code, "request_header_fields_too_large");
  } finally {
    await c.close();
    await server.shutdown();
  }
});

Deno.test("serveApp() closes the connection of a client that stopped reading after writeStallTimeoutMs and cancels its stream", async () => {
  // An endless stream of large events: the socket buffers fill within milliseconds.
  const stream = new AbortController();
  let produced = 0;
  async function* events() {
    const big = "x".repeat(64 * 1024);
    while (true) {
      produced++;
      yield { big };
    }
  }
  const app = createHttpApp([{
    method: "GET",
    path: "/stream",
    handler: () => sseResponse(events(), { abort: stream }),
  }], { logger: QUIET });
  const server = serveApp(app, { logger: QUIET, limits: { writeStallTimeoutMs: 300 } });
  const stalled = await RawClient.open(server.url, { read: false });
  try {
    await stalled.send("GET /stream HTTP/1.1\r\nHost: x\r\n\r\n");
    await waitFor(() => stream.signal.aborted, { timeoutMs: 20_000, what: "the stream cancelled" });
    // Pulled only as fast as the socket took it: a few MiB of kernel buffers, not an endless queue.
    assert(produced < 1000, `${produced} events were produced for a client that read nothing`);
  } finally {
    await stalled.close();
    await server.shutdown();
  }
});

const FD_LIMITED_SERVER = fileURLToPath(new URL("./_fd_limited_server.ts", import.meta.url));
const CONFIG = fileURLToPath(new URL("../../../deno.json", import.meta.url));

Deno.test("serveApp() survives running out of file descriptors and serves again once they free up", async () => {
  // The server in a process of its own with 64 descriptors, flooded with half-sent requests.
  const child = new Deno.Command("bash", {
    args: [
      "-c",
      `ulimit -n 64 && exec "${Deno.execPath()}" run --quiet --no-prompt --config="${CONFIG}" ` +
      `--allow-net=127.0.0.1 --allow-env --allow-read "${FD_LIMITED_SERVER}"`,
    ],
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const stdout = child.stdout.getReader();
  const flood: RawClient[] = [];
  try {
    const first = new TextDecoder().decode((await stdout.read()).value);
    const url = /http:\S+/.exec(first)![0];
    for (let i = 0; i < 120; i++) {
      const c = await RawClient.open(url);
      await c.send("GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: ");
      flood.push(c);
    }
    for (const c of flood) await c.close();
    assert(await answersWithin(url, 10_000), "served again after the flood");
  } finally {
    for (const c of flood) await c.close();
    try {
      child.kill("SIGTERM");
    } catch {
      // It exited on its own: the assertions below say so, with its stderr.
    }
    const status = await child.status;
    await stdout.cancel();
    const stderr = new TextDecoder().decode(await new Response(child.stderr).bytes());
    assert(!/Uncaught|Too many open files \(os error 24\)\n.*at /s.test(stderr), stderr);
    assertEquals(status.code, 143, `the server exited on its own: ${stderr}`);
  }
});

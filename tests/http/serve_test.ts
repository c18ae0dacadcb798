import { createEngineApp } from "../../src/server/engine_app.ts";
import type { HttpLogger } from "../../src/http/logger.ts";
import { serveApp } from "../../src/http/serve.ts";
import { readSseData } from "../../src/protocol/sse.ts";
import { FakeEngine } from "../_helpers/fake_engine.ts";
import { waitFor } from "../_helpers/wait.ts";
import { assert, assertEquals, assertMatch, assertRejects } from "../_assert.ts";

const QUIET: HttpLogger = { error: () => {}, warn: () => {} };
const CHAT = { model: "fake/chat", messages: [{ role: "user", content: "hi" }] };

Deno.test("serveApp() listens on a free loopback port and reports it", async () => {
  let listened: Deno.NetAddr | undefined;
  const server = serveApp(createEngineApp({ engines: [new FakeEngine()], logger: QUIET }), {
    onListen: (addr) => (listened = addr),
    logger: QUIET,
  });
  try {
    assertEquals(server.addr.hostname, "127.0.0.1");
    assert(server.addr.port > 0);
    assertEquals(server.url, `http://127.0.0.1:${server.addr.port}`);
    assertEquals(listened?.port, server.addr.port);
    const res = await fetch(`${server.url}/health`);
    assertEquals(await res.json(), { status: "ok", models: [{ id: "fake/chat", state: "ready" }] });
  } finally {
    await server.shutdown();
  }
});

Deno.test("serveApp() shutdown lets in-flight requests finish and refuses new ones", async () => {
  const chat = new FakeEngine({ tokenDelayMs: 15, eosAfter: 8 });
  const server = serveApp(createEngineApp({ engines: [chat], logger: QUIET }), { logger: QUIET });
  const pending = fetch(`${server.url}/v1/chat/completions`, {
    method: "POST",
    body: JSON.stringify(CHAT),
  });
  await waitFor(() => chat.running === 1);
  const stopped = server.shutdown();
  const res = await pending;
  assertEquals(res.status, 200);
  assertEquals((await res.json()).choices[0].finish_reason, "stop");
  await stopped;
  await server.finished;
  assertEquals(chat.aborted, 0);
  await assertRejects(() => fetch(`${server.url}/health`), TypeError);
});

Deno.test("serveApp() aborts streams still running after the shutdown timeout", async () => {
  const chat = new FakeEngine({ tokenDelayMs: 10, eosAfter: 100_000, contextLength: 1_000_000 });
  const controller = new AbortController();
  const server = serveApp(createEngineApp({ engines: [chat], logger: QUIET }), {
    signal: controller.signal,
    shutdownTimeoutMs: 100,
    logger: QUIET,
  });
  const res = await fetch(`${server.url}/v1/chat/completions`, {
    method: "POST",
    body: JSON.stringify({ ...CHAT, stream: true }),
  });
  const events: string[] = [];
  const reading = (async () => {
    for await (const data of readSseData(res.body!)) events.push(data);
  })();
  await waitFor(() => events.length > 3);
  const started = Date.now();
  controller.abort(); // the signal starts the graceful shutdown
  await server.finished;
  await reading;
  assert(Date.now() - started < 2000, "shutdown waited too long");
  const last = JSON.parse(events.at(-1)!);
  assertEquals(last.error.code, "server_shutting_down");
  assertMatch(last.error.message, /shutting down/);
  assertEquals(chat.aborted, 1);
  await server.shutdown(); // idempotent
});

import { assert, assertEquals, assertMatch, assertRejects } from "../_assert.ts";
import {
  CancelledError,
  NotFoundError,
  RateLimitError,
  ServiceError,
  ServiceUnavailableError,
} from "../../src/core/errors.ts";
import { Dispatcher, type DispatcherOptions } from "../../src/gateway/dispatcher.ts";
import { HandlerTransport } from "../../src/gateway/transport.ts";
import {
  chat,
  FakeEngine,
  readEvents,
  SILENT,
  sleep,
  startClosingServer,
  tags,
  until,
} from "./_fake_backend.ts";

// Round-robin from the first instance added, so tests know which instance is tried first.
function dispatcher(options: DispatcherOptions = {}): Dispatcher {
  return new Dispatcher({ policy: "fifo", routing: "round_robin", logger: SILENT, ...options });
}

function remote(id: string, baseUrl: string, extra: Record<string, unknown> = {}) {
  return { id, baseUrl, kind: "llm" as const, models: ["m"], ...extra };
}

Deno.test("dispatch() fails over to another instance when one answers 500", async () => {
  const bad = new FakeEngine("bad", { status: 500 });
  const good = new FakeEngine("good");
  const d = dispatcher();
  d.addBackend(remote("bad", bad.serve()));
  d.addBackend(remote("good", good.serve()));
  try {
    const res = await d.dispatch({ kind: "chat", model: "m", body: chat("x") });
    assertEquals(res.status, 200);
    assertEquals(res.headers.get("x-svc-backend"), "good");
    assertEquals((await res.json()).choices[0].message.content, "from good");
    assertEquals([bad.seen.length, good.seen.length], [1, 1]);
    const snap = d.snapshot();
    assertEquals(snap.retries, 1);
    const byId = Object.fromEntries(snap.backends.map((b) => [b.id, b]));
    assertEquals([byId.bad.errors, byId.good.retries, byId.good.successes], [1, 1, 1]);
    assertEquals(byId.bad.inFlight + byId.good.inFlight, 0);
  } finally {
    await bad.close();
    await good.close();
  }
});

Deno.test("dispatch() fails over when an instance closes the connection", async () => {
  const crashed = startClosingServer();
  const good = new FakeEngine("good");
  const d = dispatcher();
  d.addBackend(remote("crashed", crashed.url));
  d.addBackend(remote("good", good.serve()));
  try {
    const res = await d.dispatch({ kind: "chat", model: "m", body: chat("x") });
    assertEquals(res.headers.get("x-svc-backend"), "good");
    await res.body?.cancel();
    assert(crashed.accepted() >= 1);
    assertEquals(d.backend("crashed")!.snapshot().errors, 1);
  } finally {
    await crashed.close();
    await good.close();
  }
});

Deno.test("dispatch() fails over on a per-backend timeout and cancels the slow request", async () => {
  const slow = new FakeEngine("slow", { delayMs: 5000 });
  const good = new FakeEngine("good");
  const d = dispatcher();
  d.addBackend(slow.backend({ timeoutMs: 50 }));
  d.addBackend(good.backend());
  const started = performance.now();
  const res = await d.dispatch({ kind: "chat", model: "m", body: chat("x") });
  assertEquals(res.headers.get("x-svc-backend"), "good");
  await res.body?.cancel();
  assert(performance.now() - started < 2000);
  await until(() => slow.aborted === 1);
});

Deno.test("dispatch() gives up after maxRetries failovers with the last error", async () => {
  const fakes = ["a", "b", "c", "d"].map((n) => new FakeEngine(n, { status: 502 }));
  const d = dispatcher({ maxRetries: 2 });
  for (const f of fakes) d.addBackend(f.backend());
  const err = await assertRejects(
    () => d.dispatch({ kind: "chat", model: "m", body: chat("x") }),
    ServiceError,
    "answered HTTP 502: fake c failed",
  );
  assertEquals(err.code, "backend_error");
  assertEquals(fakes.map((f) => f.seen.length), [1, 1, 1, 0]);
  assertEquals(d.snapshot().failed, 1);
});

Deno.test("dispatch() passes a client error (4xx) through without retrying", async () => {
  const a = new FakeEngine("a", { status: 400 });
  const b = new FakeEngine("b");
  const d = dispatcher();
  d.addBackend(a.backend());
  d.addBackend(b.backend());
  const res = await d.dispatch({ kind: "chat", model: "m", body: chat("x") });
  assertEquals(res.status, 400);
  assertEquals((await res.json()).error.message, "fake a failed");
  assertEquals([a.seen.length, b.seen.length], [1, 0]);
  assertEquals(d.backend("a")!.circuit.consecutiveFailures, 0);
});

Deno.test("dispatch() streams through and never retries once the stream has started", async () => {
  const broken = new FakeEngine("broken", { chunks: 5, breakAfter: 2 });
  const good = new FakeEngine("good");
  const d = dispatcher();
  d.addBackend(remote("broken", broken.serve()));
  d.addBackend(remote("good", good.serve()));
  try {
    const res = await d.dispatch({ kind: "chat", model: "m", body: chat("x", { stream: true }) });
    assertEquals(res.status, 200);
    assertMatch(res.headers.get("content-type")!, /text\/event-stream/);
    const events = await readEvents(res);
    assertEquals(events.length, 3, events.join(" | "));
    assertMatch(events[0], /broken-0/);
    assertMatch(events[1], /broken-1/);
    const last = JSON.parse(events[2]);
    assertEquals(last.error.code, "stream_broken");
    assertMatch(last.error.message, /broke mid-way/);
    assertEquals(good.seen.length, 0, "not retried after the first byte");
    await until(() => d.backend("broken")!.inFlight === 0);
    assertEquals(d.backend("broken")!.snapshot().errors, 1);
  } finally {
    await broken.close();
    await good.close();
  }
});

Deno.test("dispatch() ends a stream that stops without [DONE] with an error event", async () => {
  const cut = new FakeEngine("cut", { chunks: 2, omitDone: true });
  const d = dispatcher();
  d.addBackend(cut.backend());
  const events = await readEvents(
    await d.dispatch({ kind: "chat", model: "m", body: chat("x", { stream: true }) }),
  );
  assertEquals(events.length, 3);
  assertEquals(JSON.parse(events[2]).error.code, "stream_truncated");
});

Deno.test("dispatch() relays a complete stream and fails over before its first byte", async () => {
  const down = new FakeEngine("down", { status: 503 });
  const good = new FakeEngine("good", { chunks: 3 });
  const d = dispatcher();
  d.addBackend(down.backend());
  d.addBackend(good.backend());
  const res = await d.dispatch({ kind: "chat", model: "m", body: chat("x", { stream: true }) });
  const events = await readEvents(res);
  assertEquals(events.at(-1), "[DONE]");
  assertEquals(events.length, 4);
  await until(() => d.backend("good")!.inFlight === 0);
  assertEquals(d.backend("good")!.latencySamples, 1);
});

Deno.test("dispatch() cancels the upstream request when the client aborts", async () => {
  const slow = new FakeEngine("slow", { delayMs: 10_000 });
  const d = dispatcher();
  d.addBackend(remote("slow", slow.serve()));
  try {
    const ctrl = new AbortController();
    const pending = d.dispatch({ kind: "chat", model: "m", body: chat("x"), signal: ctrl.signal });
    await until(() => slow.seen.length === 1);
    ctrl.abort();
    await assertRejects(() => pending, CancelledError);
    await until(() => slow.aborted === 1);
    await until(() => d.backend("slow")!.inFlight === 0);
    assertEquals(d.snapshot().cancelled, 1);
    assertEquals(d.backend("slow")!.snapshot().errors, 0);
  } finally {
    await slow.close();
  }
});

Deno.test("dispatch() stops the upstream stream when the client cancels the body", async () => {
  const streamer = new FakeEngine("s", { chunks: 1000, chunkDelayMs: 5 });
  const d = dispatcher();
  d.addBackend(remote("s", streamer.serve()));
  try {
    const res = await d.dispatch({ kind: "chat", model: "m", body: chat("x", { stream: true }) });
    const reader = res.body!.getReader();
    await reader.read();
    await reader.read();
    await reader.cancel();
    await until(() => streamer.aborted === 1);
    await until(() => d.backend("s")!.inFlight === 0);
    assertEquals(d.backend("s")!.snapshot().errors, 0);
  } finally {
    await streamer.close();
  }
});

Deno.test("dispatch() refuses with RateLimitError when the queue is full", async () => {
  const a = new FakeEngine("a");
  const d = dispatcher({ maxQueue: 2 });
  d.addBackend(a.backend({ maxConcurrency: 1 }));
  const release = a.hold();
  const accepted = [0, 1, 2].map((i) =>
    d.dispatch({ kind: "chat", model: "m", body: chat(`r${i}`) })
  );
  await until(() => a.seen.length === 1);
  const err = await assertRejects(
    () => d.dispatch({ kind: "chat", model: "m", body: chat("over") }),
    RateLimitError,
    "queue is full",
  );
  assert(err.retryAfterSeconds >= 1);
  release();
  for (const r of accepted) assertEquals((await r).status, 200);
  for (const r of accepted) await (await r).body?.cancel();
  assertEquals(tags(a), ["r0", "r1", "r2"]);
});

Deno.test("dispatch() removes a waiting request when its client aborts", async () => {
  const a = new FakeEngine("a");
  const d = dispatcher();
  d.addBackend(a.backend({ maxConcurrency: 1 }));
  const release = a.hold();
  const first = d.dispatch({ kind: "chat", model: "m", body: chat("first") });
  await until(() => a.seen.length === 1);
  const ctrl = new AbortController();
  const waiting = d.dispatch({ kind: "chat", model: "m", body: chat("gone"), signal: ctrl.signal });
  ctrl.abort();
  await assertRejects(() => waiting, CancelledError);
  assertEquals(d.snapshot().pools[0].queueLength, 0);
  release();
  await (await first).body?.cancel();
  assertEquals(tags(a), ["first"]);
});

Deno.test("dispatch() answers 404 for an unknown model and 503 with no healthy instance", async () => {
  const a = new FakeEngine("a");
  const d = dispatcher();
  const backend = d.addBackend(a.backend({ aliases: { alias: "m" } }));
  const nf = await assertRejects(
    () => d.dispatch({ kind: "chat", model: "nope", body: chat("x") }),
    NotFoundError,
    "Models available: m, alias",
  );
  assertEquals(nf.code, "model_not_found");
  backend.setHealth("unhealthy", "down");
  const su = await assertRejects(
    () => d.dispatch({ kind: "chat", model: "m", body: chat("x") }),
    ServiceUnavailableError,
    "a: unhealthy",
  );
  assertEquals(su.code, "no_backend_available");
  backend.setHealth("healthy");
  const res = await d.dispatch({ kind: "chat", model: "alias", body: chat("x") });
  await res.body?.cancel();
  assertEquals(a.seen[0].body.model, "m", "the alias is sent upstream as the real model");
});

Deno.test("dispatch() sends the backend's key, never the client's, and never leaks it", async () => {
  const keyed = new FakeEngine("keyed");
  const rejecting = new FakeEngine("rejecting", { status: 401 });
  const d = dispatcher({ maxRetries: 0 });
  d.addBackend(keyed.backend({ apiKey: "backend-key-123", headers: { "x-extra": "1" } }));
  const res = await d.dispatch({
    kind: "chat",
    model: "m",
    body: chat("x"),
    headers: new Headers({ authorization: "Bearer client-key" }),
    requestId: "req-1",
  });
  await res.body?.cancel();
  const seen = keyed.seen[0].headers;
  assertEquals(seen.get("authorization"), "Bearer backend-key-123");
  assertEquals(seen.get("x-extra"), "1");
  assertEquals(seen.get("x-request-id"), "req-1");
  d.removeBackend("keyed");
  d.addBackend(rejecting.backend({ apiKey: "other-key-456" }));
  const err = await assertRejects(
    () => d.dispatch({ kind: "chat", model: "m", body: chat("x") }),
    ServiceError,
    "credentials",
  );
  assert(!err.message.includes("other-key-456"));
  assert(!JSON.stringify(d.snapshot()).includes("key-"));
});

Deno.test("dispatch() opens a failing instance's circuit, then probes it after the cool-down", async () => {
  const flaky = new FakeEngine("flaky", { status: 500 });
  const good = new FakeEngine("good");
  const d = dispatcher({ circuit: { failureThreshold: 2, cooldownMs: 80 } });
  d.addBackend(remote("flaky", "http://127.0.0.1:9/v1"), {
    transport: new HandlerTransport(flaky.handler),
  });
  d.addBackend(good.backend());
  const send = async () =>
    await (await d.dispatch({ kind: "chat", model: "m", body: chat("x") })).text();
  for (let i = 0; i < 6; i++) await send();
  assertEquals(flaky.seen.length, 2, "no more requests once open");
  assertEquals(d.backend("flaky")!.circuit.state, "open");
  await sleep(100);
  flaky.behavior = {};
  await send();
  await send();
  assertEquals(d.backend("flaky")!.circuit.state, "closed");
  assert(flaky.seen.length >= 3, "the half-open probe went to it and closed it");
});

Deno.test("dispatch() rejects waiting work when every instance serving it goes down", async () => {
  const a = new FakeEngine("a");
  const d = dispatcher();
  const backend = d.addBackend(a.backend({ maxConcurrency: 1 }));
  const release = a.hold();
  const first = d.dispatch({ kind: "chat", model: "m", body: chat("first") });
  await until(() => a.seen.length === 1);
  const waiting = d.dispatch({ kind: "chat", model: "m", body: chat("waiting") });
  backend.setHealth("unhealthy");
  await assertRejects(() => waiting, ServiceUnavailableError, "No healthy backend");
  release();
  await (await first).body?.cancel();
});

Deno.test("Dispatcher lists models of live instances and closes cleanly", async () => {
  const a = new FakeEngine("a");
  const e = new FakeEngine("e");
  const d = dispatcher();
  d.addBackend(a.backend({ aliases: { alias: "m" } }));
  d.addBackend(e.backend({ kind: "embedding", models: ["emb"] }));
  assertEquals(d.models(), [
    { id: "m", kind: "llm", backends: ["a"] },
    { id: "alias", kind: "llm", backends: ["a"] },
    { id: "emb", kind: "embedding", backends: ["e"] },
  ]);
  assertEquals(d.isReady(), false);
  d.backend("a")!.setHealth("healthy");
  assertEquals(d.isReady(), true);
  const release = a.hold();
  const running = d.dispatch({ kind: "chat", model: "m", body: chat("x") });
  await until(() => a.seen.length === 1);
  d.close();
  await assertRejects(() => running, ServiceUnavailableError, "shutting down");
  release();
  await until(() => a.inFlight === 0);
  await assertRejects(
    () => d.dispatch({ kind: "chat", model: "m", body: chat("y") }),
    ServiceUnavailableError,
    "shutting down",
  );
});

Deno.test("dispatch() ends a live stream when the client's signal aborts, and on shutdown", async () => {
  const streamer = new FakeEngine("s", { chunks: 1000, chunkDelayMs: 5 });
  const d = dispatcher();
  d.addBackend(streamer.backend());
  const ctrl = new AbortController();
  const res = await d.dispatch({
    kind: "chat",
    model: "m",
    body: chat("x", { stream: true }),
    signal: ctrl.signal,
  });
  const reader = res.body!.getReader();
  await reader.read();
  ctrl.abort();
  await assertRejects(async () => {
    while (!(await reader.read()).done) { /* drain */ }
  }, CancelledError);
  await until(() => streamer.aborted === 1 && d.backend("s")!.inFlight === 0);

  const live = await d.dispatch({ kind: "chat", model: "m", body: chat("y", { stream: true }) });
  const liveReader = live.body!.getReader();
  await liveReader.read();
  d.close();
  const rest: string[] = [];
  const decoder = new TextDecoder();
  for (let r = await liveReader.read(); !r.done; r = await liveReader.read()) {
    rest.push(decoder.decode(r.value));
  }
  const last = rest.join("").trim().split("\n\n").at(-1)!;
  assertEquals(JSON.parse(last.slice(5)).error.code, "shutting_down");
  await until(() => streamer.aborted === 2 && d.backend("s")!.inFlight === 0);
});

Deno.test("dispatch() loses no request when one of two instances dies under load", async () => {
  const a = new FakeEngine("a", { delayMs: 2 });
  const b = new FakeEngine("b", { delayMs: 2 });
  const d = new Dispatcher({
    logger: SILENT,
    circuit: { failureThreshold: 3, cooldownMs: 60_000 },
  });
  d.addBackend(remote("a", a.serve(), { maxConcurrency: 16 }));
  d.addBackend(remote("b", b.serve(), { maxConcurrency: 16 }));
  let sent = 0;
  const statuses: number[] = [];
  const worker = async () => {
    while (sent < 300) {
      sent++;
      if (sent === 100) a.close(); // dies while requests are in flight and queued
      const res = await d.dispatch({ kind: "chat", model: "m", body: chat("x") });
      statuses.push(res.status);
      await res.body?.cancel();
    }
  };
  try {
    await Promise.all(Array.from({ length: 24 }, worker));
    assertEquals(statuses.length, 300);
    assert(statuses.every((s) => s === 200));
    assert(a.seen.length > 20 && b.seen.length > 150, `${a.seen.length} / ${b.seen.length}`);
  } finally {
    await a.close();
    await b.close();
  }
});

Deno.test("dispatch() waits out a busy backend's Retry-After when no other can take the request", async () => {
  const a = new FakeEngine("a", { status: 429, retryAfterSeconds: 1 });
  const d = dispatcher();
  d.addBackend(a.backend());
  // Busy for its first answer, then free (the engine's queue drained).
  const freed = setTimeout(() => (a.behavior = {}), 300);
  const started = performance.now();
  const res = await d.dispatch({ kind: "chat", model: "m", body: chat("x") });
  assertEquals(res.status, 200);
  await res.body?.cancel();
  assertEquals(a.seen.length, 2);
  // The second try came one Retry-After after the first.
  const waited = a.seen[1].at - a.seen[0].at;
  assert(waited >= 950 && performance.now() - started < 5_000, `waited ${waited} ms`);
  // A client that leaves while it waits is let go at once.
  a.behavior = { status: 429, retryAfterSeconds: 1 };
  const leaving = new AbortController();
  const pending = d.dispatch({ kind: "chat", model: "m", body: chat("x"), signal: leaving.signal });
  setTimeout(() => leaving.abort(), 100);
  await assertRejects(() => pending, CancelledError);
  assertEquals(d.backend("a")!.inFlight, 0);
  clearTimeout(freed);
});

Deno.test("dispatch() never opens a circuit on client errors or busy answers (4xx)", async () => {
  const a = new FakeEngine("a");
  const d = dispatcher({ circuit: { failureThreshold: 2, cooldownMs: 60_000 } });
  d.addBackend(a.backend());
  for (const status of [400, 404, 408, 413, 422, 429]) {
    a.behavior = { status };
    for (let i = 0; i < 5; i++) {
      // Busy answers that do not say when to come back, with nowhere else to go, end as a 503
      // error; the others are passed through.
      const res = await d.dispatch({ kind: "chat", model: "m", body: chat("x") }).catch(() => null);
      await res?.body?.cancel();
    }
  }
  assertEquals(d.backend("a")!.circuit.state, "closed");
  assertEquals(d.backend("a")!.circuit.consecutiveFailures, 0);
  a.behavior = {};
  assertEquals((await d.dispatch({ kind: "chat", model: "m", body: chat("x") })).status, 200);
});

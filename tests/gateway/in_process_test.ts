// The in-process transport over the real engine server app (with a fake InferenceEngine).
import { assert, assertEquals } from "../_assert.ts";
import { ServiceError } from "../../src/core/errors.ts";
import { Dispatcher } from "../../src/gateway/dispatcher.ts";
import { HealthChecker } from "../../src/gateway/health_checker.ts";
import { HandlerTransport } from "../../src/gateway/transport.ts";
import { createEngineApp } from "../../src/server/engine_app.ts";
import { FakeEngine } from "../_helpers/fake_engine.ts";
import { readEvents, SILENT, until } from "./_fake_backend.ts";

function setup(engine: FakeEngine, kind: "llm" | "embedding" = "llm") {
  const app = createEngineApp({ engines: [engine], apiKey: "engine-key" });
  const d = new Dispatcher({ logger: SILENT });
  const backend = d.addBackend({
    id: "inproc",
    baseUrl: "http://in-process/v1",
    kind,
    models: [engine.info.id],
    aliases: { short: engine.info.id },
    apiKey: "engine-key",
  }, { transport: new HandlerTransport(app) });
  return { d, backend };
}

Deno.test("in-process backend: chat, stream and health through the engine app", async () => {
  const engine = new FakeEngine({ eosAfter: 4 });
  const { d, backend } = setup(engine);
  const body = { model: "short", messages: [{ role: "user", content: "hi there" }] };
  const res = await d.dispatch({ kind: "chat", model: "short", body });
  assertEquals(res.status, 200);
  const json = await res.json();
  assertEquals(json.object, "chat.completion");
  assertEquals(json.model, "fake/chat");
  const stream = await d.dispatch({
    kind: "chat",
    model: "short",
    body: { ...body, stream: true },
  });
  const events = await readEvents(stream);
  assertEquals(events.at(-1), "[DONE]");
  assert(events.length >= 3);
  await new HealthChecker(() => [backend]).check(backend);
  assertEquals(backend.health, "healthy");
  await until(() => backend.inFlight === 0);
  assertEquals(backend.snapshot().successes, 2);
});

Deno.test("in-process backend: an engine error mid-stream reaches the client once", async () => {
  const engine = new FakeEngine({
    eosAfter: 10,
    failAfterTokens: { tokens: 2, error: new ServiceError("decode failed") },
  });
  const { d, backend } = setup(engine);
  const body = { model: "fake/chat", messages: [{ role: "user", content: "hi" }], stream: true };
  const events = await readEvents(await d.dispatch({ kind: "chat", model: "fake/chat", body }));
  const errors = events.filter((e) => e.startsWith('{"error"'));
  assertEquals(errors.length, 1, events.join(" | "));
  await until(() => backend.inFlight === 0);
  assertEquals(backend.snapshot().errors, 1);
});

Deno.test("in-process backend: the engine's 400 is passed through", async () => {
  const engine = new FakeEngine({ contextLength: 4 });
  const { d } = setup(engine);
  const body = {
    model: "fake/chat",
    messages: [{ role: "user", content: "one two three four five six" }],
  };
  const res = await d.dispatch({ kind: "chat", model: "fake/chat", body });
  assertEquals(res.status, 400);
  assertEquals((await res.json()).error.code, "context_length_exceeded");
});

Deno.test("in-process backend: embeddings", async () => {
  const engine = new FakeEngine({ kind: "embedding", dimensions: 4 });
  const { d } = setup(engine, "embedding");
  const res = await d.dispatch({
    kind: "embedding",
    model: "fake/embed",
    body: { model: "fake/embed", input: ["a", "b"] },
  });
  const json = await res.json();
  assertEquals(json.data.length, 2);
  assertEquals(json.data[1].embedding.length, 4);
});

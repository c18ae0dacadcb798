// DeferredEngine: the stand-in for an engine of a known kind while it loads.
import { assertEquals, assertMatch, assertRejects } from "../_assert.ts";
import { ServiceUnavailableError, ValidationError } from "../../src/core/errors.ts";
import type { EmbedEngine, GenerationEngine } from "../../src/core/inference_types.ts";
import { DeferredEngine } from "../../src/engine/deferred_engine.ts";
import { scorePrompts } from "../../src/engine/score_prompts.ts";
import { FakeEngine } from "../_helpers/fake_engine.ts";

Deno.test("DeferredEngine answers loading until the engine is ready, then forwards to it", async () => {
  const { promise, resolve } = Promise.withResolvers<EmbedEngine>();
  const deferred = new DeferredEngine("fake/embed", "embedding", promise);
  assertEquals(deferred.health(), { state: "loading" });
  assertEquals(deferred.info.kind, "embedding");
  const loading = await assertRejects(() => deferred.embed(["x"]), ServiceUnavailableError);
  assertEquals(loading.code, "model_loading");
  const engine = new FakeEngine({ kind: "embedding", dimensions: 4 });
  resolve(engine);
  assertEquals(await deferred.ready, engine);
  assertEquals(deferred.health(), { state: "ready" });
  assertEquals((await deferred.embed(["x", "y"])).vectors.length, 2);
  assertEquals(engine.embedCalls.length, 1);
  await deferred.dispose();
  assertEquals(engine.disposed, true);
});

Deno.test("DeferredEngine refuses the work of another kind with invalid_model_kind, loaded or not", async () => {
  const { promise, resolve } = Promise.withResolvers<EmbedEngine>();
  const deferred = new DeferredEngine("fake/embed", "embedding", promise);
  const check = async (call: () => Promise<unknown>, wanted: RegExp) => {
    const err = await assertRejects(call, ValidationError);
    assertEquals([err.code, err.param], ["invalid_model_kind", "model"]);
    assertMatch(err.message, /The model 'fake\/embed' is an embedding model/);
    assertMatch(err.message, wanted);
  };
  const wrongKinds = async () => {
    await check(() => deferred.generate({ prompt: "x" }, {}), /pick a chat model/);
    await check(() => deferred.generateAll([{ input: { prompt: "x" }, params: {} }]), /chat/);
    await check(() => deferred.rerank("q", ["d"]), /pick a reranker/);
  };
  await wrongKinds();
  const engine = new FakeEngine({ kind: "embedding" });
  resolve(engine);
  await deferred.ready;
  await wrongKinds();
  assertEquals(engine.generateCalls.length, 0);
  await deferred.dispose();
});

Deno.test("DeferredEngine reports a failed load through health() and ready", async () => {
  const deferred = new DeferredEngine(
    "fake/rerank",
    "rerank",
    Promise.reject(new Error("no ONNX")),
  );
  await assertRejects(() => deferred.ready, Error, "no ONNX");
  assertEquals(deferred.health(), { state: "error", message: "no ONNX" });
  await deferred.dispose();
});

Deno.test("DeferredEngine refuses a prompt's log-probabilities of an engine without them with the route's 400 naming echo", async () => {
  const engine = new FakeEngine({ kind: "chat" });
  const deferred = new DeferredEngine("fake/chat", "chat", Promise.resolve(engine));
  await deferred.ready;
  const call = (on: GenerationEngine) => () =>
    scorePrompts(on, [{ prompt: "x" }], { topLogprobs: 1 });
  const direct = await assertRejects(call(engine), ValidationError);
  const forwarded = await assertRejects(call(deferred), ValidationError);
  assertEquals([direct.param, direct.message], ["echo", forwarded.message]);
  assertEquals(forwarded.param, "echo");
  assertMatch(direct.message, /model 'fake\/chat' cannot compute a prompt's log-probabilities/);
});

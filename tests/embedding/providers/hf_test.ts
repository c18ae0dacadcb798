// Tests of the `hf` provider (local hub models on our engine).
import { ServiceError } from "../../../src/core/errors.ts";
import { createHfEmbedder } from "../../../src/embedding/providers/hf.ts";
import type { HfEngineFactory, HfEngineOptions } from "../../../src/embedding/types.ts";
import { createEngine } from "../../../src/engine/create_engine.ts";
import { assert, assertAlmostEquals, assertEquals, assertRejects } from "../../_assert.ts";
import { FakeEngine } from "../../_helpers/fake_engine.ts";

// The hf provider loads createEngine by a specifier the type checker cannot follow: check here
// that it still fits the factory type the provider calls it as.
createEngine satisfies HfEngineFactory;

Deno.test("hf provider: createHfEmbedder() loads the engine once, lazily, with kind embedding and the cache", async () => {
  const calls: { model: string; options: HfEngineOptions }[] = [];
  let engine: FakeEngine | null = null;
  const embedder = createHfEmbedder({
    model: "org/some-model",
    cacheDir: "/tmp/svc-test-cache",
    env: {
      HUB_ENDPOINT: "http://127.0.0.1:9/hub",
      HUB_TOKEN: "hf_token_value",
      SVC_OFFLINE: "true",
    },
    engineFactory: (model, options) => {
      calls.push({ model, options });
      engine = new FakeEngine({ kind: "embedding", dimensions: 8 });
      return Promise.resolve(engine);
    },
  });
  assertEquals(calls.length, 0); // nothing loads before the first call
  const [a, b] = await embedder.embedBatch(["one", "two"]);
  await embedder.embed("three");
  assertEquals(calls.length, 1);
  assertEquals(calls[0].model, "org/some-model");
  assertEquals(calls[0].options.kind, "embedding");
  assertEquals(calls[0].options.cacheDir, "/tmp/svc-test-cache");
  assertEquals(calls[0].options.hubEndpoint, "http://127.0.0.1:9/hub");
  assertEquals(calls[0].options.hubToken, "hf_token_value");
  assertEquals(calls[0].options.offline, true);
  assertEquals([a.length, b.length], [8, 8]);
  assert(Array.isArray(a) && typeof a[0] === "number");
  assertEquals(embedder.dimensions, 8);
  await embedder.dispose();
  assertEquals(engine!.disposed, true);
});

Deno.test("hf provider: a failed load is reported and retried on the next call", async () => {
  let attempts = 0;
  const embedder = createHfEmbedder({
    model: "org/m",
    cacheDir: "/tmp/x",
    env: {},
    engineFactory: () => {
      attempts++;
      return attempts === 1
        ? Promise.reject(new ServiceError("hub unreachable"))
        : Promise.resolve(new FakeEngine({ kind: "embedding", dimensions: 4 }));
    },
  });
  await assertRejects(() => embedder.embed("x"), ServiceError, "hub unreachable");
  assertEquals((await embedder.embed("x")).length, 4);
  assertEquals(attempts, 2);
  await embedder.dispose();
});

Deno.test("hf provider: demo/embed runs on the real engine and gives deterministic unit vectors", async () => {
  const cacheDir = await Deno.makeTempDir({ prefix: "svc-hf-embed-" });
  const embedder = createHfEmbedder({ model: "demo/embed", cacheDir, device: "cpu", env: {} });
  try {
    const [a, b, a2] = await embedder.embedBatch(["hello world", "something else", "hello world"]);
    assertEquals(a.length, embedder.dimensions);
    assertEquals(a.length, 64);
    assertEquals(a, a2);
    assert(a.some((x, i) => x !== b[i]));
    assertAlmostEquals(Math.hypot(...a), 1, 1e-4);
  } finally {
    await embedder.dispose();
    await Deno.remove(cacheDir, { recursive: true });
  }
});

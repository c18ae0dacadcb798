import { assert, assertEquals, assertRejects } from "../_assert.ts";
import { startHubStandIn } from "../_helpers/hub_stand_in.ts";
import { demoFolder } from "../_helpers/demo_engines.ts";
import { createEngine, createEngineOrDemo, detectKindOf } from "../../src/engine/create_engine.ts";
import { setupLogger } from "../../src/core/logging.ts";
import { AuthenticationError, NotFoundError, ValidationError } from "../../src/core/errors.ts";

/** A log sink that keeps the lines, to check warnings. */
function captureLog(): string[] {
  const lines: string[] = [];
  setupLogger({ level: "warn", stderr: false, sink: (line: string) => lines.push(line) });
  return lines;
}

Deno.test("createEngine() downloads a hub model through the endpoint and then works offline", async () => {
  const hub = startHubStandIn({
    repos: { "acme/tiny-embed": await demoFolder("demo/embed") },
    token: "hf_secret",
  });
  const cacheDir = await Deno.makeTempDir();
  try {
    await assertRejects(
      () => createEngine("acme/tiny-embed", { cacheDir, device: "cpu", hubEndpoint: hub.endpoint }),
      AuthenticationError,
      "HUB_TOKEN",
    );
    const options = {
      cacheDir,
      device: "cpu" as const,
      hubEndpoint: hub.endpoint,
      hubToken: "hf_secret",
    };
    const engine = await createEngine("acme/tiny-embed", options);
    assertEquals(engine.info.kind, "embedding");
    assertEquals(engine.info.id, "acme/tiny-embed");
    assertEquals((await engine.embed(["hello"])).vectors.length, 1);
    await engine.dispose();
    await hub.close();
    const offline = await createEngine("acme/tiny-embed", { ...options, offline: true });
    assertEquals(offline.info.dimensions, engine.info.dimensions);
    await offline.dispose();
  } finally {
    await hub.close();
    await Deno.remove(cacheDir, { recursive: true });
  }
});

Deno.test("createEngine() never falls back when the named model is missing", async () => {
  const hub = startHubStandIn({ repos: {} });
  const cacheDir = await Deno.makeTempDir();
  try {
    await assertRejects(
      () =>
        createEngineOrDemo("acme/missing", "chat", {
          cacheDir,
          device: "cpu",
          hubEndpoint: hub.endpoint,
        }),
      NotFoundError,
    );
    await assertRejects(
      () => createEngine("not a model!", { cacheDir, device: "cpu" }),
      ValidationError,
    );
  } finally {
    await hub.close();
    await Deno.remove(cacheDir, { recursive: true });
  }
});

Deno.test("createEngineOrDemo() serves the demo model with a loud warning when the default cannot load", async () => {
  const log = captureLog();
  const cacheDir = await Deno.makeTempDir();
  try {
    // Port 9 on loopback: nothing listens, so the default model's download fails at once.
    const engine = await createEngineOrDemo(undefined, "chat", {
      cacheDir,
      device: "cpu",
      hubEndpoint: "http://127.0.0.1:9",
    });
    assertEquals(engine.info.id, "demo/chat");
    assert(engine.info.randomWeights);
    const warning = log.find((l) => l.includes("RANDOM weights") && l.includes("--model"));
    assert(warning, `expected a warning naming the fallback, got:\n${log.join("\n")}`);
    await engine.dispose();
  } finally {
    setupLogger("error");
    await Deno.remove(cacheDir, { recursive: true });
  }
});

Deno.test("detectKindOf() knows demo ids, folders and common embedding names", async () => {
  assertEquals(await detectKindOf("demo/embed-bench"), "embedding");
  assertEquals(await detectKindOf("demo/chat"), "chat");
  assertEquals(await detectKindOf(await demoFolder("demo/embed")), "embedding");
  assertEquals(await detectKindOf("BAAI/bge-small-en-v1.5"), "embedding");
  assertEquals(await detectKindOf("HuggingFaceTB/SmolLM2-135M-Instruct"), "chat");
});

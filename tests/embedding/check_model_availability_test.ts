import { join } from "node:path";
import { checkModelAvailability } from "../../src/embedding/check_model_availability.ts";
import { assert, assertEquals, assertMatch } from "../_assert.ts";

Deno.test("checkModelAvailability() says available for hash and mockembedder", async () => {
  assertEquals((await checkModelAvailability("hash")).status, "available");
  const mock = await checkModelAvailability("mock", "anything");
  assertEquals([mock.method, mock.model, mock.status], ["mockembedder", "anything", "available"]);
});

Deno.test("checkModelAvailability() says needs_key naming the variable when a key is missing", async () => {
  const jina = await checkModelAvailability("jina", undefined, { env: {} });
  assertEquals([jina.status, jina.model], ["needs_key", "jina-embeddings-v3"]);
  assertMatch(jina.reason, /JINA_API_KEY/);
  const bedrock = await checkModelAvailability("bedrock", undefined, { env: {} });
  assertMatch(bedrock.reason, /AWS_ACCESS_KEY_ID/);
  const withKey = await checkModelAvailability("cohere", "embed-english-v3.0", {
    env: { COHERE_API_KEY: "co-123" },
  });
  assertEquals(withKey.status, "available");
});

Deno.test("checkModelAvailability() notes model names outside the known list", async () => {
  const result = await checkModelAvailability("zhipu", "embedding-99", { apiKey: "k", env: {} });
  assertEquals(result.status, "available");
  assertMatch(result.reason, /not in the known model list/);
});

Deno.test("checkModelAvailability() treats our own loopback server as available without a key", async () => {
  const result = await checkModelAvailability("openai", "demo/embed", {
    env: { COMPAT_BASE_URL: "http://127.0.0.1:8090/v1" },
  });
  assertEquals(result.status, "available");
});

Deno.test("checkModelAvailability() says unavailable for an unknown method, listing the known ones", async () => {
  const result = await checkModelAvailability("fasttext", "x");
  assertEquals(result.status, "unavailable");
  assertMatch(result.reason, /hf, openai, jina/);
});

Deno.test("checkModelAvailability() for hf distinguishes cached, needs_download, offline and demo models", async () => {
  const cacheDir = await Deno.makeTempDir({ prefix: "svc-avail-" });
  try {
    const env = {};
    const missing = await checkModelAvailability("hf", "Xenova/all-MiniLM-L6-v2", {
      cacheDir,
      env,
    });
    assertEquals(missing.status, "needs_download");
    const offline = await checkModelAvailability("hf", "Xenova/all-MiniLM-L6-v2", {
      cacheDir,
      env: { SVC_OFFLINE: "true" },
    });
    assertEquals(offline.status, "unavailable");
    assertMatch(offline.reason, /svc llm model download Xenova\/all-MiniLM-L6-v2/);

    // Lay out a cached snapshot the way the hub downloader does.
    const repo = join(cacheDir, "models--Xenova--all-MiniLM-L6-v2");
    await Deno.mkdir(join(repo, "refs"), { recursive: true });
    await Deno.mkdir(join(repo, "snapshots", "abc123"), { recursive: true });
    await Deno.writeTextFile(join(repo, "refs", "main"), "abc123");
    await Deno.writeTextFile(join(repo, "snapshots", "abc123", "config.json"), "{}");
    const cached = await checkModelAvailability("hf", "Xenova/all-MiniLM-L6-v2", { cacheDir, env });
    assertEquals(cached.status, "cached");

    const demo = await checkModelAvailability("hf", "demo/embed", { cacheDir, env });
    assertEquals(demo.status, "available");
    assertMatch(demo.reason, /RANDOM weights/);

    const folder = join(cacheDir, "my-model");
    await Deno.mkdir(folder);
    await Deno.writeTextFile(join(folder, "config.json"), "{}");
    assertEquals(
      (await checkModelAvailability("hf", folder, { cacheDir, env })).status,
      "available",
    );

    const bad = await checkModelAvailability("hf", "a/b/c/d", { cacheDir, env });
    assertEquals(bad.status, "unavailable");
    assert(bad.reason.length > 0);
  } finally {
    await Deno.remove(cacheDir, { recursive: true });
  }
});

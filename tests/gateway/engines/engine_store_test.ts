// The engine state file: round trip, owner-only mode, atomic replacement, clear errors.
import { join } from "node:path";
import { assertEquals, assertMatch, assertRejects } from "../../_assert.ts";
import { ConfigurationError } from "../../../src/core/errors.ts";
import { EngineStore, type StoredEngine } from "../../../src/gateway/engines/engine_store.ts";

const ENTRY: StoredEngine = {
  id: "remote-1",
  origin: "remote",
  kind: "llm",
  baseUrl: "http://10.0.0.5:8000/v1",
  models: ["m"],
  apiKey: "k",
  createdAt: 1,
};

Deno.test("EngineStore saves and loads engines; a missing file is empty; the file is 0600", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const store = new EngineStore(join(dir, "sub", "engines.json"));
    assertEquals(await store.load(), []);
    await Promise.all([store.save([ENTRY]), store.save([ENTRY, { ...ENTRY, id: "remote-2" }])]);
    assertEquals((await store.load()).map((e) => e.id), ["remote-1", "remote-2"], "last wins");
    if (Deno.build.os !== "windows") {
      assertEquals((await Deno.stat(store.path)).mode! & 0o777, 0o600);
    }
    const leftovers = [...Deno.readDirSync(join(dir, "sub"))].map((e) => e.name);
    assertEquals(leftovers, ["engines.json"], "no temporary file left behind");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("EngineStore.load() names the file when it is corrupt or of another version", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = join(dir, "engines.json");
    const store = new EngineStore(path);
    await Deno.writeTextFile(path, "{not json");
    const bad = await assertRejects(() => store.load(), ConfigurationError);
    assertMatch(bad.message, /engines\.json is not valid JSON/);
    await Deno.writeTextFile(path, JSON.stringify({ version: 7, engines: [] }));
    await assertRejects(() => store.load(), ConfigurationError);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

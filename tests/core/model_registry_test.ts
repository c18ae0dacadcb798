import { assert, assertEquals, assertRejects, assertThrows } from "../_assert.ts";
import {
  ConfigurationError,
  ConflictError,
  NotFoundError,
  ValidationError,
} from "../../src/core/errors.ts";
import {
  getDefaultRegistry,
  getModel,
  listModels,
  ModelRegistry,
  registerModel,
  removeModel,
  setDefaultRegistryPath,
  touchModel,
} from "../../src/core/model_registry.ts";

async function withTempDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "svc-registry-" });
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

async function listDir(dir: string): Promise<string[]> {
  const names: string[] = [];
  for await (const entry of Deno.readDir(dir)) names.push(entry.name);
  return names.sort();
}

const writer = new URL("./_registry_writer.ts", import.meta.url).pathname;

function spawnWriter(args: string[]): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", "--allow-read", "--allow-write", writer, ...args],
    stdout: "piped",
    stderr: "piped",
  }).spawn();
}

Deno.test("getDefaultRegistry() raises ConfigurationError before setDefaultRegistryPath()", async () => {
  assertThrows(() => getDefaultRegistry(), ConfigurationError, "setDefaultRegistryPath");
  await assertRejects(() => getModel("x"), ConfigurationError);
});

Deno.test("ModelRegistry registers, gets, lists, touches and removes models", async () => {
  await withTempDir(async (dir) => {
    const registry = new ModelRegistry(`${dir}/models/registry.json`);
    assertEquals(await registry.get("a"), null);
    assertEquals(await registry.list(), []);
    const before = Date.now();
    const entry = await registry.register({
      id: "org/chat",
      path: `${dir}/models/chat`,
      source: "hub",
      revision: "main",
      sizeBytes: 1234,
    });
    assertEquals(entry.id, "org/chat");
    assertEquals(entry.lastUsed, null);
    assert(entry.addedAt >= before && entry.addedAt <= Date.now());
    await registry.register({ id: "demo/embed", path: "/m/embed", source: "demo" });
    await registry.register({ id: "local/x", path: "/m/x" });
    assertEquals(await registry.get("org/chat"), entry);
    assertEquals((await registry.list()).map((m) => m.id), ["demo/embed", "local/x", "org/chat"]);
    assertEquals((await registry.list({ source: "demo" })).map((m) => m.id), ["demo/embed"]);
    const local = (await registry.get("local/x"))!;
    assertEquals([local.source, local.revision, local.sizeBytes], ["local", null, 0]);

    const touched = await registry.touch("org/chat", 1_700_000_000_000);
    assertEquals(touched.lastUsed, 1_700_000_000_000);
    assertEquals((await registry.get("org/chat"))!.lastUsed, 1_700_000_000_000);

    assertEquals(await registry.remove("local/x"), true);
    assertEquals(await registry.remove("local/x"), false);
    assertEquals(await registry.get("local/x"), null);

    // The manifest on disk is readable JSON with our format marker; no temp or lock files remain.
    const onDisk = JSON.parse(await Deno.readTextFile(registry.manifestPath));
    assertEquals(onDisk.format, "svc-model-registry");
    assertEquals(onDisk.models.map((m: { id: string }) => m.id), ["demo/embed", "org/chat"]);
    assertEquals(await listDir(`${dir}/models`), ["registry.json", "registry.json.bak"]);
  });
});

Deno.test("register() replaces an entry of the same id but keeps addedAt and lastUsed", async () => {
  await withTempDir(async (dir) => {
    const registry = new ModelRegistry(`${dir}/r.json`);
    const first = await registry.register({ id: "m", path: "/old", lastUsed: 5 });
    await new Promise((resolve) => setTimeout(resolve, 5));
    const second = await registry.register({ id: "m", path: "/new", revision: "v2" });
    assertEquals(second.addedAt, first.addedAt);
    assertEquals(second.lastUsed, 5);
    assertEquals((await registry.get("m"))!.path, "/new");
    assertEquals((await registry.list()).length, 1);
  });
});

Deno.test("register() rejects invalid entries naming the field, writing nothing", async () => {
  await withTempDir(async (dir) => {
    const registry = new ModelRegistry(`${dir}/r.json`);
    const bad: [object, string][] = [
      [{ id: "", path: "/p" }, "id"],
      [{ id: " padded ", path: "/p" }, "id"],
      [{ id: "a\nb", path: "/p" }, "id"],
      [{ id: "m", path: "" }, "path"],
      [{ id: "m", path: "/p", source: "web" }, "source"],
      [{ id: "m", path: "/p", revision: 3 }, "revision"],
      [{ id: "m", path: "/p", sizeBytes: -1 }, "sizeBytes"],
      [{ id: "m", path: "/p", lastUsed: "yesterday" }, "lastUsed"],
    ];
    for (const [init, field] of bad) {
      const err = await assertRejects(
        // deno-lint-ignore no-explicit-any
        () => registry.register(init as any),
        ValidationError,
        `model.${field}`,
      );
      assertEquals(err.param, field);
    }
    assertEquals(await listDir(dir), []);
    assertThrows(() => new ModelRegistry(""), ConfigurationError);
  });
});

Deno.test("touch() raises NotFoundError for an unknown model", async () => {
  await withTempDir(async (dir) => {
    const registry = new ModelRegistry(`${dir}/r.json`);
    await registry.register({ id: "known", path: "/p" });
    await assertRejects(() => registry.touch("unknown"), NotFoundError, "'unknown'");
  });
});

Deno.test("each write keeps the previous good manifest as .bak", async () => {
  await withTempDir(async (dir) => {
    const registry = new ModelRegistry(`${dir}/r.json`);
    await registry.register({ id: "one", path: "/1" });
    const afterOne = await Deno.readTextFile(registry.manifestPath);
    await registry.register({ id: "two", path: "/2" });
    assertEquals(await Deno.readTextFile(registry.backupPath), afterOne);
  });
});

Deno.test("a corrupted manifest gives a clear error and the .bak is never overwritten", async () => {
  await withTempDir(async (dir) => {
    const registry = new ModelRegistry(`${dir}/r.json`);
    await registry.register({ id: "one", path: "/1" });
    await registry.register({ id: "two", path: "/2" });
    const goodBackup = await Deno.readTextFile(registry.backupPath);
    const garbage = '{"format":"svc-model-registry","version":1,"models":[{"id":"one",';
    await Deno.writeTextFile(registry.manifestPath, garbage);

    for (const call of [() => registry.get("one"), () => registry.list()]) {
      const err = await assertRejects(call, ConfigurationError, registry.manifestPath);
      assert(err.message.includes("is corrupted: not valid JSON"), err.message);
      assert(err.message.includes(`cp '${registry.backupPath}' '${registry.manifestPath}'`));
      assertEquals(err.code, "registry_corrupted");
    }
    await assertRejects(() => registry.register({ id: "three", path: "/3" }), ConfigurationError);
    await assertRejects(() => registry.remove("one"), ConfigurationError);
    await assertRejects(() => registry.touch("one"), ConfigurationError);
    // Neither the corrupted manifest nor the backup was replaced, and no lock was left behind.
    assertEquals(await Deno.readTextFile(registry.manifestPath), garbage);
    assertEquals(await Deno.readTextFile(registry.backupPath), goodBackup);
    assertEquals(await listDir(dir), ["r.json", "r.json.bak"]);

    const result = await registry.recover();
    assertEquals(result.action, "restored");
    assertEquals(await Deno.readTextFile(result.corruptCopy!), garbage);
    assertEquals((await registry.list()).map((m) => m.id), ["one"]);
    await registry.register({ id: "three", path: "/3" });
    assertEquals((await registry.list()).map((m) => m.id), ["one", "three"]);
    assertEquals((await registry.recover()).action, "none");
  });
});

Deno.test("a corrupted manifest without a backup says so; recover() starts empty", async () => {
  await withTempDir(async (dir) => {
    const registry = new ModelRegistry(`${dir}/r.json`);
    await Deno.writeTextFile(registry.manifestPath, "");
    await assertRejects(() => registry.list(), ConfigurationError, "No valid backup exists");
    const result = await registry.recover();
    assertEquals(result.action, "reset");
    assertEquals(await registry.list(), []);
    assertEquals((await new ModelRegistry(`${dir}/absent.json`).recover()).action, "none");
  });
});

Deno.test("a manifest with invalid entries is reported as corrupted, naming the entry", async () => {
  await withTempDir(async (dir) => {
    const registry = new ModelRegistry(`${dir}/r.json`);
    const entry = {
      id: "m",
      path: "/p",
      source: "hub",
      revision: null,
      sizeBytes: 1,
      lastUsed: null,
      addedAt: 1,
    };
    const cases: [unknown, string][] = [
      [
        { format: "svc-model-registry", version: 1, models: [{ ...entry, sizeBytes: -1 }] },
        "models[0].sizeBytes",
      ],
      [{ format: "svc-model-registry", version: 1, models: [entry, entry] }, "duplicate id 'm'"],
      [{ format: "svc-model-registry", version: 2, models: [] }, "unsupported version 2"],
      [{ format: "other", version: 1, models: [] }, '"format"'],
      [{ format: "svc-model-registry", version: 1, models: {} }, '"models" is not an array'],
      [[1, 2], "top level is not an object"],
    ];
    for (const [doc, message] of cases) {
      await Deno.writeTextFile(registry.manifestPath, JSON.stringify(doc));
      await assertRejects(() => registry.get("m"), ConfigurationError, message);
    }
  });
});

Deno.test("concurrent writes in one process lose no update", async () => {
  await withTempDir(async (dir) => {
    const a = new ModelRegistry(`${dir}/r.json`);
    const b = new ModelRegistry(`${dir}/r.json`);
    await Promise.all(
      Array.from(
        { length: 30 },
        (_, i) => (i % 2 ? a : b).register({ id: `m${i}`, path: `/${i}` }),
      ),
    );
    assertEquals((await a.list()).length, 30);
  });
});

Deno.test("readers never see a partial manifest while writes happen", async () => {
  await withTempDir(async (dir) => {
    const registry = new ModelRegistry(`${dir}/r.json`);
    await registry.register({ id: "seed", path: "/s" });
    let writing = true;
    const writes = (async () => {
      for (let i = 0; i < 25; i++) await registry.register({ id: `m${i}`, path: "/p".repeat(200) });
      writing = false;
    })();
    let reads = 0;
    while (writing) {
      assert((await registry.list()).length >= 1);
      reads++;
    }
    await writes;
    assert(reads > 0);
    assertEquals((await registry.list()).length, 26);
  });
});

Deno.test("two writer processes registering 20 models each lose no update", async () => {
  await withTempDir(async (dir) => {
    const manifest = `${dir}/r.json`;
    const go = `${dir}/go`;
    const children = [
      spawnWriter([manifest, "alpha", "20", go]),
      spawnWriter([manifest, "beta", "20", go]),
    ];
    await Deno.writeTextFile(go, "");
    const outputs = await Promise.all(children.map((child) => child.output()));
    for (const out of outputs) {
      assert(out.success, new TextDecoder().decode(out.stderr));
      assertEquals(new TextDecoder().decode(out.stdout).trim(), "done");
    }
    const models = await new ModelRegistry(manifest).list();
    assertEquals(models.length, 40);
    for (const prefix of ["alpha", "beta"]) {
      for (let i = 0; i < 20; i++) {
        const entry = models.find((m) => m.id === `${prefix}/model-${i}`);
        assertEquals(entry?.sizeBytes, i);
      }
    }
    assertEquals(await listDir(dir), ["go", "r.json", "r.json.bak"]);
  });
});

Deno.test("a lock left by a crashed writer is taken over", async () => {
  await withTempDir(async (dir) => {
    const manifest = `${dir}/r.json`;
    await Deno.writeTextFile(`${dir}/go`, "");
    const out = await spawnWriter([manifest, "x", "0", `${dir}/go`, "hold"]).output();
    assertEquals(new TextDecoder().decode(out.stdout).trim(), "holding");
    assert((await listDir(dir)).includes("r.json.lock"), "the crashed writer left its lock");
    const registry = new ModelRegistry(manifest, { timeoutMs: 10_000 });
    const start = Date.now();
    await registry.register({ id: "after-crash", path: "/p" });
    assert(Date.now() - start < 8_000);
    assertEquals((await registry.list()).map((m) => m.id), ["after-crash"]);
    assert(!(await listDir(dir)).includes("r.json.lock"));
  });
});

Deno.test("a lock older than staleMs is taken over", async () => {
  await withTempDir(async (dir) => {
    const registry = new ModelRegistry(`${dir}/r.json`, { staleMs: 5_000, timeoutMs: 3_000 });
    const old = { pid: 999_999_999, token: "old", time: Date.now() - 60_000 };
    await Deno.writeTextFile(`${dir}/r.json.lock`, JSON.stringify(old));
    await registry.register({ id: "m", path: "/p" });
    assertEquals((await registry.list()).length, 1);
    assertEquals(await listDir(dir), ["r.json"]);
  });
});

Deno.test("a lock held by a live writer makes others wait, then raise ConflictError", async () => {
  await withTempDir(async (dir) => {
    const lockPath = `${dir}/r.json.lock`;
    const lock = await Deno.open(lockPath, { createNew: true, write: true });
    try {
      await lock.lock(true);
      await lock.write(
        new TextEncoder().encode(
          JSON.stringify({ pid: Deno.pid, token: "live", time: Date.now() }),
        ),
      );
      const registry = new ModelRegistry(`${dir}/r.json`, { timeoutMs: 300 });
      const start = Date.now();
      const err = await assertRejects(
        () => registry.register({ id: "m", path: "/p" }),
        ConflictError,
        `held by process ${Deno.pid}`,
      );
      assert(err.message.includes(lockPath));
      assert(Date.now() - start >= 290);
      // Reading does not need the lock.
      assertEquals(await registry.list(), []);
    } finally {
      lock.close();
    }
  });
});

Deno.test("registerModel()/getModel()/listModels()/touchModel()/removeModel() use the default registry", async () => {
  await withTempDir(async (dir) => {
    setDefaultRegistryPath(`${dir}/store/`);
    assertEquals(getDefaultRegistry().manifestPath, `${dir}/store/registry.json`);
    await registerModel({ id: "d/one", path: "/1", source: "fine-tune" });
    assertEquals((await getModel("d/one"))?.source, "fine-tune");
    assertEquals((await listModels()).length, 1);
    assertEquals((await listModels({ source: "hub" })).length, 0);
    assert((await touchModel("d/one")).lastUsed !== null);
    assertEquals(await removeModel("d/one"), true);
    assertEquals(await getModel("d/one"), null);
    setDefaultRegistryPath(`${dir}/custom.json`);
    assertEquals(getDefaultRegistry().manifestPath, `${dir}/custom.json`);
  });
});

Deno.test("ModelRegistry raises ConfigurationError naming the flags without file permissions", async () => {
  await withTempDir(async (dir) => {
    const script = `${dir}/probe.ts`;
    const module = new URL("../../src/core/model_registry.ts", import.meta.url).href;
    await Deno.writeTextFile(
      script,
      `import { ModelRegistry } from ${JSON.stringify(module)};
       const registry = new ModelRegistry(${JSON.stringify(`${dir}/m/r.json`)});
       for (const fn of [() => registry.list(), () => registry.register({ id: "a", path: "/a" })]) {
         try { await fn(); console.log("no error"); }
         catch (err) { console.log(err.name + ": " + err.message); }
       }`,
    );
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--no-prompt", "--quiet", `--allow-read=${script}`, script],
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert(out.success, new TextDecoder().decode(out.stderr));
    const lines = new TextDecoder().decode(out.stdout).trimEnd().split("\n");
    assertEquals(lines.length, 2);
    for (const line of lines) {
      assert(line.startsWith("ConfigurationError: "), line);
      assert(line.includes(`--allow-write=${dir}/m`), line);
    }
    assertEquals(await listDir(dir), ["probe.ts"]);
  });
});

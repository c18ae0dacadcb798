import { join } from "node:path";
import {
  ensureOutputDir,
  getOutputDir,
  OUTPUT_DIR_NAMES,
  OutputPaths,
  resolveOutputBase,
} from "../../src/config/output_paths.ts";
import { ConfigurationError, ValidationError } from "../../src/core/errors.ts";
import { assert, assertEquals, assertRejects, assertThrows } from "../_assert.ts";

async function inTempDir(fn: (dir: string) => Promise<void> | void): Promise<void> {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "svc_paths_test_" }));
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("resolveOutputBase() uses SVC_HOME first, resolving ~ and relative paths", async () => {
  await inTempDir(async (dir) => {
    await Deno.writeTextFile(join(dir, "deno.json"), "{}");
    const base = { envFile: null, cwd: dir, home: "/home/someone" };
    assertEquals(resolveOutputBase({ ...base, env: { SVC_HOME: "/data/svc" } }), "/data/svc");
    assertEquals(resolveOutputBase({ ...base, env: { SVC_HOME: "out" } }), join(dir, "out"));
    assertEquals(
      resolveOutputBase({ ...base, env: { SVC_HOME: "~/svc-data" } }),
      "/home/someone/svc-data",
    );
    assertEquals(resolveOutputBase({ ...base, env: { SVC_HOME: "~" } }), "/home/someone");
  });
});

Deno.test("resolveOutputBase() uses ./.svc in a writable project folder", async () => {
  await inTempDir(async (dir) => {
    const options = { env: {}, envFile: null, cwd: dir, home: "/home/someone" };
    // Not a project: no deno.json, no .svc.
    assertEquals(resolveOutputBase(options), "/home/someone/.svc");
    await Deno.writeTextFile(join(dir, "deno.json"), "{}");
    assertEquals(resolveOutputBase(options), join(dir, ".svc"));
  });
});

Deno.test("resolveOutputBase() reuses an existing ./.svc folder", async () => {
  await inTempDir(async (dir) => {
    await Deno.mkdir(join(dir, ".svc"));
    assertEquals(
      resolveOutputBase({ env: {}, envFile: null, cwd: dir, home: "/h" }),
      join(dir, ".svc"),
    );
  });
});

Deno.test({
  name: "resolveOutputBase() falls back to the home folder when the project is read-only",
  // root writes anywhere, and Windows has no chmod: the check cannot be staged there.
  ignore: Deno.build.os === "windows" || Deno.uid() === 0,
}, async () => {
  await inTempDir(async (dir) => {
    await Deno.writeTextFile(join(dir, "deno.json"), "{}");
    await Deno.chmod(dir, 0o555);
    try {
      assertEquals(
        resolveOutputBase({ env: {}, envFile: null, cwd: dir, home: "/h" }),
        "/h/.svc",
      );
    } finally {
      await Deno.chmod(dir, 0o755);
    }
  });
});

Deno.test("resolveOutputBase() takes HOME, then USERPROFILE, and fails without either", async () => {
  await inTempDir((dir) => {
    const options = { envFile: null, cwd: dir };
    assertEquals(resolveOutputBase({ ...options, env: { HOME: "/home/a" } }), "/home/a/.svc");
    assertEquals(
      resolveOutputBase({ ...options, env: { USERPROFILE: "/users/b" } }),
      "/users/b/.svc",
    );
    assertThrows(() => resolveOutputBase({ ...options, env: {} }), ConfigurationError, "SVC_HOME");
  });
});

Deno.test("OutputPaths names every sub-folder under the base", () => {
  const paths = new OutputPaths("/base");
  assertEquals(paths.base, "/base");
  assertEquals(paths.logs, "/base/logs");
  assertEquals(paths.cache, "/base/cache");
  assertEquals(paths.models, "/base/models");
  assertEquals(paths.hub, "/base/hub");
  assertEquals(paths.engines, "/base/engines");
  assertEquals(paths.benchmarks, "/base/benchmarks");
  assertEquals(paths.fineTune, "/base/fine_tune");
  for (const name of OUTPUT_DIR_NAMES) assertEquals(paths.dir(name), `/base/${name}`);
  assertEquals(paths.dir("engines/llm-8001"), "/base/engines/llm-8001");
  assertEquals(paths.dir("custom"), "/base/custom");
});

Deno.test("OutputPaths.dir() rejects unsafe names with ValidationError", () => {
  const paths = new OutputPaths("/base");
  for (
    const name of [
      "",
      "  ",
      "..",
      "../etc",
      "logs/../../x",
      "/etc",
      "\\\\server\\share",
      "C:\\x",
      "a/./b",
      "a\0b",
    ]
  ) {
    assertThrows(() => paths.dir(name), ValidationError, "output folder name");
  }
});

Deno.test("getOutputDir() returns the path without creating it", async () => {
  await inTempDir(async (dir) => {
    const path = getOutputDir("logs", { env: { SVC_HOME: dir }, envFile: null });
    assertEquals(path, join(dir, "logs"));
    await assertRejects(() => Deno.stat(path), Deno.errors.NotFound);
    assertThrows(
      () => getOutputDir("../escape", { env: { SVC_HOME: dir }, envFile: null }),
      ValidationError,
    );
  });
});

Deno.test("ensureOutputDir() creates nested folders and is idempotent", async () => {
  await inTempDir(async (dir) => {
    const options = { env: { SVC_HOME: join(dir, "svc-home") }, envFile: null };
    const path = await ensureOutputDir("engines/llm", options);
    assertEquals(path, join(dir, "svc-home", "engines", "llm"));
    assert((await Deno.stat(path)).isDirectory);
    assertEquals(await ensureOutputDir("engines/llm", options), path);
    await assertRejects(() => ensureOutputDir("/abs", options), ValidationError);
  });
});

Deno.test("ensureOutputDir() raises ConfigurationError when the base is not a folder", async () => {
  await inTempDir(async (dir) => {
    const file = join(dir, "a-file");
    await Deno.writeTextFile(file, "x");
    await assertRejects(
      () => ensureOutputDir("logs", { env: { SVC_HOME: file }, envFile: null }),
      ConfigurationError,
      "SVC_HOME",
    );
  });
});

Deno.test({
  name: "ensureOutputDir() names --allow-write when write permission is missing",
  permissions: { read: true, write: false, env: true },
  fn: async () => {
    await assertRejects(
      () => ensureOutputDir("logs", { env: { SVC_HOME: "/tmp/svc_no_write" }, envFile: null }),
      ConfigurationError,
      "--allow-write",
    );
  },
});

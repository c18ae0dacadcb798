import { assert, assertEquals, assertMatch, assertRejects } from "../_assert.ts";
import { startHubStandIn } from "../_helpers/hub_stand_in.ts";
import { demoFolder, TEST_MODEL_CACHE } from "../_helpers/demo_engines.ts";
import {
  createEngine,
  createEngineOrDemo,
  detectKindOf,
  resolveModelFolder,
} from "../../src/engine/create_engine.ts";
import { setupLogger } from "../../src/core/logging.ts";
import { AuthenticationError, NotFoundError, ValidationError } from "../../src/core/errors.ts";
import { engineOfKind } from "../../src/core/model_kind.ts";
import { writeTinyDecoder } from "./_tiny_decoder.ts";

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
    assertEquals((await engineOfKind(engine, "embedding").embed(["hello"])).vectors.length, 1);
    // No dtype named: the listing decides (q8 on cpu), and only that ONNX file is fetched.
    assertEquals(engine.info.dtype, "q8");
    const fetched = hub.requests.map((r) => r.path).filter((p) => p.includes("/onnx/"));
    assert(fetched.every((p) => p.endsWith("/onnx/model_quantized.onnx")), fetched.join(", "));
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
      NotFoundError,
      "model folder 'not a model!' was not found",
    );
  } finally {
    await hub.close();
    await Deno.remove(cacheDir, { recursive: true });
  }
});

Deno.test("resolveModelFolder() says a path-looking model that does not exist is a folder not found", async () => {
  const cacheDir = await Deno.makeTempDir();
  try {
    for (
      const model of ["./no-such-folder", "../no-such", "/no/such/folder", "~/models/x", "a/b/c"]
    ) {
      const err = await assertRejects(
        () => resolveModelFolder(model, { cacheDir, offline: true }),
        NotFoundError,
        `model folder '${model}' was not found`,
      );
      assertEquals(err.param, "model");
      assert(!err.message.includes("hub id:"), err.message);
    }
    // A hub id is still looked up on the hub (here: offline, not in the cache).
    await assertRejects(
      () => resolveModelFolder("acme/not-cached", { cacheDir, offline: true }),
      Error,
      "acme/not-cached",
    );
  } finally {
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
    // The engine names no flag: `run` says --model, `serve` --model or --embedding-model.
    const warning = log.find((l) =>
      l.includes("RANDOM weights") && l.includes("Name a real model")
    );
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

/** A copy of demo/chat's folder with only the ONNX files named (renamed from model*.onnx). */
async function chatFolderWith(onnx: Record<string, "model.onnx" | "model_quantized.onnx">) {
  const from = await demoFolder("demo/chat");
  const dir = await Deno.makeTempDir({ prefix: "svc-dtype-" });
  await Deno.mkdir(`${dir}/onnx`);
  for await (const e of Deno.readDir(from)) {
    if (e.isFile) await Deno.copyFile(`${from}/${e.name}`, `${dir}/${e.name}`);
  }
  for (const [name, source] of Object.entries(onnx)) {
    await Deno.copyFile(`${from}/onnx/${source}`, `${dir}/onnx/${name}`);
  }
  return dir;
}

Deno.test("resolveModelFolder() picks the device's best dtype among the folder's files", async () => {
  const both = await demoFolder("demo/chat");
  const fp32Only = await chatFolderWith({ "model.onnx": "model.onnx" });
  const merged = await chatFolderWith({
    "decoder_model_merged.onnx": "model.onnx",
    "decoder_model_merged_q4f16.onnx": "model.onnx",
  });
  try {
    const cacheDir = TEST_MODEL_CACHE;
    const pick = async (folder: string, options: Record<string, unknown> = {}) => {
      const r = await resolveModelFolder(folder, { cacheDir, ...options });
      return [r.dtype, r.modelFileName, r.fallback ?? null];
    };
    assertEquals(await pick(both), ["q8", "model", null]);
    assertEquals(await pick(both, { device: "webgpu" }), ["fp32", "model", null]);
    assertEquals(await pick(both, { dtype: "fp32" }), ["fp32", "model", null]);
    assertEquals(await pick(fp32Only), ["fp32", "model", null]);
    assertEquals(await pick(merged), ["fp32", "decoder_model_merged", null]);
    assertEquals(await pick(merged, { device: "webgpu" }), ["q4f16", "decoder_model_merged", null]);
    // A named dtype the folder lacks is an error naming what it has, unless fallback is allowed.
    const err = await assertRejects(
      () => resolveModelFolder(fp32Only, { cacheDir, dtype: "q4f16" }),
      ValidationError,
      "onnx/model_q4f16.onnx",
    );
    assertMatch(err.message, /it has fp32/);
    const [dtype, , fallback] = await pick(fp32Only, { dtype: "q4", allowDtypeFallback: true });
    assertEquals(dtype, "fp32");
    assertMatch(String(fallback), /no q4 weights; loading fp32 instead/);
    await assertRejects(
      () => resolveModelFolder(`${fp32Only}/onnx`, { cacheDir }),
      ValidationError,
      "no ONNX weights",
    );
  } finally {
    await Deno.remove(fp32Only, { recursive: true });
    await Deno.remove(merged, { recursive: true });
  }
});

Deno.test("resolveModelFolder() puts q4 before q8 on cpu only when its MatMulNBits compute in int8", async () => {
  const int8Compute = await chatFolderWith({ "model_quantized.onnx": "model_quantized.onnx" });
  const floatCompute = await chatFolderWith({ "model_quantized.onnx": "model_quantized.onnx" });
  const lines: string[] = [];
  setupLogger({ level: "info", stderr: false, sink: (line: string) => lines.push(line) });
  try {
    await writeTinyDecoder(`${int8Compute}/onnx/model_q4.onnx`, "q4", {
      bits: 4,
      accuracyLevel: 4,
    });
    await writeTinyDecoder(`${floatCompute}/onnx/model_q4.onnx`, "q4", {
      bits: 4,
      accuracyLevel: 0,
    });
    const pick = async (folder: string, options: Record<string, unknown> = {}) =>
      (await resolveModelFolder(folder, { cacheDir: TEST_MODEL_CACHE, ...options })).dtype;
    assertEquals(await pick(int8Compute), "q4");
    assert(
      lines.some((l) => /model_q4\.onnx computes in int8.*q4 goes before q8/.test(l)),
      lines.join("\n"),
    );
    assertEquals(await pick(floatCompute), "q8");
    assert(lines.some((l) => /accuracy_level 0 .*q8 stays first/.test(l)), lines.join("\n"));
    // A named dtype wins; other devices keep their own order.
    assertEquals(await pick(int8Compute, { dtype: "q8" }), "q8");
    assertEquals(await pick(int8Compute, { device: "wasm" }), "q8");
  } finally {
    setupLogger("error");
    await Deno.remove(int8Compute, { recursive: true });
    await Deno.remove(floatCompute, { recursive: true });
  }
});

Deno.test("createEngine() loads the folder's dtype and shows it in the engine info", async () => {
  const fp32Only = await chatFolderWith({ "model.onnx": "model.onnx" });
  try {
    const engine = await createEngine(fp32Only, { cacheDir: TEST_MODEL_CACHE, device: "cpu" });
    assertEquals(engine.info.dtype, "fp32");
    await engine.dispose();
    await assertRejects(
      () => createEngine(fp32Only, { cacheDir: TEST_MODEL_CACHE, device: "cpu", dtype: "q8" }),
      ValidationError,
      "it has fp32",
    );
    const demo = await createEngine("demo/embed", { cacheDir: TEST_MODEL_CACHE, device: "cpu" });
    assertEquals(demo.info.dtype, "q8");
    await demo.dispose();
  } finally {
    await Deno.remove(fp32Only, { recursive: true });
  }
});

Deno.test("createEngineOrDemo() lets the default model fall back to another dtype", async () => {
  const log = captureLog();
  const cacheDir = await Deno.makeTempDir();
  try {
    const engine = await createEngineOrDemo(undefined, "embedding", {
      cacheDir,
      device: "cpu",
      dtype: "q4f16",
      hubEndpoint: "http://127.0.0.1:9",
    });
    assertEquals([engine.info.id, engine.info.dtype], ["demo/embed", "q8"]);
    assert(log.some((l) => l.includes("no q4f16 weights; loading q8 instead")), log.join("\n"));
    await engine.dispose();
  } finally {
    setupLogger("error");
    await Deno.remove(cacheDir, { recursive: true });
  }
});

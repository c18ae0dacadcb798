import { totalmem } from "node:os";
import { assert, assertEquals, assertMatch } from "../_assert.ts";
import { probeGpu } from "../_helpers/gpu_adapter.ts";
import {
  type AdapterLike,
  checkGpuAvailable,
  getCpuCount,
  getGpuInfo,
  getMemoryInfo,
  type GpuLike,
} from "../../src/core/system.ts";

function fakeGpu(adapter: AdapterLike | null | (() => Promise<AdapterLike | null>)): GpuLike {
  return {
    requestAdapter: () => typeof adapter === "function" ? adapter() : Promise.resolve(adapter),
  };
}

Deno.test("getCpuCount() returns the number of logical CPUs", () => {
  const count = getCpuCount();
  assert(Number.isInteger(count) && count >= 1);
  assertEquals(count, navigator.hardwareConcurrency);
});

Deno.test("getMemoryInfo() returns total, free and available bytes", () => {
  const info = getMemoryInfo();
  assertEquals(Object.keys(info).sort(), ["available", "free", "total"]);
  assert(info.total > 64 * 2 ** 20, `total ${info.total}`);
  assert(info.free > 0 && info.free <= info.total);
  assert(info.available > 0 && info.available <= info.total);
  // node:os reads the same kernel figures through a different path.
  assertEquals(info.total, totalmem());
});

Deno.test("getMemoryInfo() raises ConfigurationError naming --allow-sys without permission", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const script = `${dir}/probe.ts`;
    const module = new URL("../../src/core/system.ts", import.meta.url).href;
    await Deno.writeTextFile(
      script,
      `import { getMemoryInfo } from ${JSON.stringify(module)};
       try { getMemoryInfo(); console.log("no error"); }
       catch (err) { console.log(err.name + ": " + err.message); }`,
    );
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--no-prompt", "--quiet", script],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stdout = new TextDecoder().decode(out.stdout);
    assert(out.success, new TextDecoder().decode(out.stderr));
    assertMatch(stdout, /^ConfigurationError: .*--allow-sys/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("checkGpuAvailable() is true for a hardware adapter and reports its details", async () => {
  const gpu = fakeGpu({
    info: {
      vendor: "nvidia",
      architecture: "hopper",
      device: "0x2330",
      description: "NVIDIA H100",
    },
  });
  assertEquals(await checkGpuAvailable({ gpu }), true);
  assertEquals(await getGpuInfo({ gpu }), {
    vendor: "nvidia",
    architecture: "hopper",
    device: "0x2330",
    description: "NVIDIA H100",
    isFallback: false,
  });
});

Deno.test("checkGpuAvailable() is false for fallback and software adapters", async () => {
  const adapters: AdapterLike[] = [
    { info: { vendor: "x", description: "some gpu", isFallbackAdapter: true } },
    { isFallbackAdapter: true, info: { description: "legacy flag" } },
    { info: { vendor: "65541", description: "llvmpipe (LLVM 15.0.6, 256 bits)" } },
    { info: { description: "lavapipe" } },
    { info: { vendor: "Google", architecture: "SwiftShader" } },
  ];
  for (const adapter of adapters) {
    assertEquals(
      await checkGpuAvailable({ gpu: fakeGpu(adapter) }),
      false,
      JSON.stringify(adapter),
    );
    assertEquals((await getGpuInfo({ gpu: fakeGpu(adapter) }))?.isFallback, true);
  }
});

Deno.test("checkGpuAvailable() is false with no WebGPU, no adapter, or a failing request", async () => {
  assertEquals(await checkGpuAvailable({ gpu: null }), false);
  assertEquals(await getGpuInfo({ gpu: null }), null);
  assertEquals(await checkGpuAvailable({ gpu: fakeGpu(null) }), false);
  const failing = fakeGpu(() => Promise.reject(new Error("driver crashed")));
  assertEquals(await checkGpuAvailable({ gpu: failing }), false);
  assertEquals(await getGpuInfo({ gpu: failing }), null);
});

Deno.test("checkGpuAvailable() gives up on an adapter request that never answers", async () => {
  const hanging = fakeGpu(() => new Promise<AdapterLike | null>(() => {}));
  const start = performance.now();
  assertEquals(await checkGpuAvailable({ gpu: hanging, timeoutMs: 50 }), false);
  const elapsed = performance.now() - start;
  assert(elapsed >= 45 && elapsed < 2000, `took ${elapsed} ms`);
});

Deno.test("checkGpuAvailable() agrees with getGpuInfo() on this machine's WebGPU", async () => {
  const { info, available } = await probeGpu();
  assertEquals(available, info !== null && !info.isFallback);
  if (info !== null && /llvmpipe|lavapipe|swiftshader/i.test(info.description)) {
    assertEquals(available, false);
  }
});

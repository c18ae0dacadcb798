// The oracle for every decoder export family: our engine's greedy output over HTTP equals
// transformers.js' own generate() on the same folder, token for token, alone and batched with
// prompts of other lengths, on native cpu (every dtype) and wasm (one or two dtypes per family).
import { join } from "node:path";
import { runProbe } from "../../_helpers/run_probe.ts";
import { assert, assertEquals } from "../../_assert.ts";
import {
  DECODER_CASES,
  writeDecoderCase,
} from "../../../fixtures/generated_models/conformance_decoders.ts";
import type { OracleResult } from "./_decoder_oracle_probe.ts";
import { probeGpu } from "../../_helpers/gpu_adapter.ts";

interface ProbeCase {
  name: string;
  folder: string;
  dtype: string;
}

let written: Promise<string> | undefined;

/** Writes every case once per test file into a temp folder (removed by the last test). */
function caseRoot(): Promise<string> {
  written ??= (async () => {
    const root = await Deno.makeTempDir({ prefix: "svc-decoder-oracle-" });
    for (const name of Object.keys(DECODER_CASES)) await writeDecoderCase(join(root, name), name);
    return root;
  })();
  return written;
}

async function probe(
  device: "cpu" | "wasm" | "webgpu",
  cases: ProbeCase[],
): Promise<OracleResult[]> {
  const script = new URL("./_decoder_oracle_probe.ts", import.meta.url);
  return await runProbe<OracleResult>(script, [device, JSON.stringify(cases)]);
}

function check(results: OracleResult[], expected: ProbeCase[]): void {
  assertEquals(results.length, expected.length, "one result per case");
  for (const r of results) {
    const what = `${r.name} ${r.dtype}`;
    assertEquals(r.error, undefined, `${what}: ${r.error}`);
    assert(r.oracle.some((t) => t.length > 0), `${what}: the oracle generated text`);
    assertEquals(r.alone, r.oracle, `${what}: our engine, one request at a time`);
    assertEquals(r.batched, r.oracle, `${what}: our engine, prompts of other lengths batched`);
    assertEquals(
      r.prefixed,
      r.prefixOracle,
      `${what}: our engine, prompts that hit the prefix cache`,
    );
    assertEquals(r.prefixedBatched, r.prefixOracle.slice(1), `${what}: prefix cache hits batched`);
    assertEquals(r.cachedTokens[0], 0, `${what}: the first prompt found nothing cached`);
    for (const [i, cached] of r.cachedTokens.slice(1).entries()) {
      if (!r.prefixCache) assertEquals(cached, 0, `${what}: no prefix cache, nothing reused`);
      else assert(cached >= 32, `${what}: prompt ${i + 1} reused the shared prefix (${cached})`);
    }
    // Only files with one activation scale per call (DynamicQuantizeLinear) go without.
    if (["fp32", "fp16", "q4", "q4f16"].includes(r.dtype)) assert(r.prefixCache, what);
  }
}

const names = Object.keys(DECODER_CASES);

Deno.test("every decoder family and dtype on cpu generates what transformers.js generates", async () => {
  const root = await caseRoot();
  const cases = names.flatMap((name) =>
    DECODER_CASES[name].dtypes.map((dtype) => ({ name, folder: join(root, name), dtype }))
  );
  check(await probe("cpu", cases), cases);
});

// Any adapter will do for correctness, the software one (llvmpipe) included; it is ~70x slower
// than native cpu, so one small case.
const adapter = (await probeGpu()).info;

Deno.test({
  name: "a decoder on webgpu generates what transformers.js generates",
  ignore: adapter === null,
  fn: async () => {
    const root = await caseRoot();
    const cases = [{ name: "optimum-qwen3", folder: join(root, "optimum-qwen3"), dtype: "fp32" }];
    check(await probe("webgpu", cases), cases);
  },
});

Deno.test("every decoder family on wasm generates what transformers.js generates", async () => {
  const root = await caseRoot();
  // Sessions are slow to create on wasm: each family's first dtype, and the float16 formats
  // (q4f16 is the web format) where a family has them.
  const cases = names.flatMap((name) => {
    const dtypes = DECODER_CASES[name].dtypes;
    const picked = new Set([dtypes[0], ...dtypes.filter((d) => d === "q4f16")]);
    return [...picked].map((dtype) => ({ name, folder: join(root, name), dtype }));
  });
  try {
    check(await probe("wasm", cases), cases);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

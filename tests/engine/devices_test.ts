import { assert, assertEquals } from "../_assert.ts";
import { runProbe } from "../_helpers/run_probe.ts";
import { probeGpu } from "../_helpers/gpu_adapter.ts";

interface ProbeResult {
  vectors: number[][];
  text: string;
}

async function probe(device: string): Promise<ProbeResult> {
  const [result] = await runProbe<ProbeResult>(new URL("./_device_probe.ts", import.meta.url), [
    device,
  ]);
  return result;
}

function assertClose(a: ProbeResult, b: ProbeResult, tolerance: number): void {
  a.vectors.forEach((v, i) => {
    const diff = Math.max(...v.map((x, j) => Math.abs(x - b.vectors[i][j])));
    assert(diff < tolerance, `vector ${i} differs by ${diff}`);
  });
  assertEquals(a.text, b.text);
}

const cpu = probe("cpu");

Deno.test("the wasm runtime (onnxruntime-web) gives the same results as native cpu", async () => {
  assertClose(await probe("wasm"), await cpu, 1e-4);
});

// Any adapter will do for correctness, the software one (llvmpipe/lavapipe) included.
const adapter = (await probeGpu()).info;
Deno.test({
  name: "the webgpu runtime gives the same results as native cpu",
  ignore: adapter === null,
  fn: async () => {
    assertClose(await probe("webgpu"), await cpu, 1e-3);
  },
});

// The embedding engine on the wasm runtime (onnxruntime-web, in a child process) gives the same
// vectors as on native cpu for the encoder conformance cases, alone and in a mixed-length batch.
import { assert } from "../../_assert.ts";
import { cosine } from "../../_helpers/vectors.ts";
import { runProbe } from "../../_helpers/run_probe.ts";
import { join } from "node:path";
import {
  type EncoderCaseName,
  writeEncoderCase,
} from "../../../fixtures/generated_models/conformance_encoders.ts";
import type { ProbeVectors } from "./_conformance_probe.ts";

const CASES: [EncoderCaseName, string][] = [
  ["bert_mean", "q8"],
  ["bert_cls", "fp32"],
  ["xlmr_mean", "fp32"],
  ["pooled_only", "fp32"],
  ["gemma_dense", "fp32"],
  ["dense_tanh", "fp32"],
  ["nomic", "fp32"],
  ["fp16_output", "fp16"],
];

async function probe(device: string, root: string): Promise<Record<string, ProbeVectors>> {
  const cases = CASES.map(([name, dtype]) => `${name}:${dtype}`);
  const script = new URL("./_conformance_probe.ts", import.meta.url);
  const [vectors] = await runProbe<Record<string, ProbeVectors>>(script, [device, root, ...cases]);
  return vectors;
}

Deno.test("EmbeddingEngine on wasm equals native cpu on the encoder conformance cases", async () => {
  const root = await Deno.makeTempDir({ prefix: "svc-conformance-wasm-" });
  try {
    for (const [name] of CASES) await writeEncoderCase(join(root, name), name);
    const [cpu, wasm] = await Promise.all([probe("cpu", root), probe("wasm", root)]);
    for (const [name, dtype] of CASES) {
      const key = `${name}:${dtype}`;
      for (const kind of ["single", "batch"] as const) {
        cpu[key][kind].forEach((v, i) => {
          const c = cosine(v, wasm[key][kind][i]);
          assert(c >= 0.9999, `${key} ${kind} text ${i}: cosine ${c}`);
          assert(cosine(v, cpu[key].single[i]) >= 0.9999, `${key}: batch changed text ${i}`);
        });
      }
    }
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

// Embeds TEXTS with the embedding engine on every conformance case named on the command line, on
// the device of the first argument, and prints the vectors as JSON (alone and in one batch). A
// separate process per device: one process holds either the native or the web ONNX Runtime.
// Usage: _conformance_probe.ts <device> <root folder with one sub-folder per case> <case:dtype>...
import { setupLogger } from "../../../src/core/logging.ts";
import { EmbeddingEngine } from "../../../src/engine/embedding/embedding_engine.ts";
import { type Dtype, loadModel } from "../../../src/engine/load_model.ts";
import type { ResolvedDevice } from "../../../src/engine/runtime.ts";

export const PROBE_TEXTS = [
  "a",
  "The quick brown fox jumps over the lazy dog, then runs far away.",
  "ü漢字 and ASCII",
];

/** Vectors of one case: each text alone, and all texts in one batch. */
export interface ProbeVectors {
  single: number[][];
  batch: number[][];
}

if (import.meta.main) {
  setupLogger("error");
  const [device, root, ...cases] = Deno.args;
  const out: Record<string, ProbeVectors> = {};
  for (const spec of cases) {
    const [name, dtype] = spec.split(":");
    const model = await loadModel(`${root}/${name}`, "embedding", {
      device: device as ResolvedDevice,
      dtype: dtype as Dtype,
      // In this thread: a worker per case would compile onnxruntime-web's wasm again each time.
      inWorker: false,
    });
    const engine = await EmbeddingEngine.create(model, { id: name });
    const single: number[][] = [];
    for (const text of PROBE_TEXTS) single.push([...(await engine.embed([text])).vectors[0]]);
    const batch = (await engine.embed(PROBE_TEXTS)).vectors.map((v) => [...v]);
    out[spec] = { single, batch };
    await engine.dispose();
  }
  console.log(JSON.stringify(out));
}

// Subprocess of conformance_decoders_wasm_test.ts: one process runs one ONNX Runtime flavour, so
// the web one (onnxruntime-web, WASM provider) runs here. Writes every decoder conformance case,
// runs the same checks as the native test and prints one JSON line per (case, dtype).
import { errorMessage } from "../../../src/core/errors.ts";
import { loadRuntime } from "../../../src/engine/runtime.ts";
import {
  DECODER_CASES,
  writeDecoderCase,
} from "../../../fixtures/generated_models/conformance_decoders.ts";
import { checkCase } from "./_conformance.ts";

const { transformers } = await loadRuntime("wasm");
transformers.env.allowRemoteModels = false;
transformers.env.allowLocalModels = true;
const only = Deno.args;
for (const [name, c] of Object.entries(DECODER_CASES)) {
  if (only.length > 0 && !only.includes(name)) continue;
  const folder = await Deno.makeTempDir({ prefix: `svc-conf-wasm-${name}-` });
  try {
    await writeDecoderCase(folder, name);
    for (const dtype of c.dtypes) {
      try {
        const report = await checkCase(transformers, folder, name, dtype, true, 3);
        console.log(JSON.stringify({ name, dtype, ok: true, generated: report.generated }));
      } catch (e) {
        const error = errorMessage(e);
        console.log(JSON.stringify({ name, dtype, ok: false, error }));
      }
    }
    if (c.externalData) {
      // Without session_options.externalData: our web runtime (src/engine/runtime.ts) reads the
      // data file itself; transformers.js' node build alone hands onnxruntime-web only a path.
      const dtype = c.externalData.dtypes[0];
      try {
        await (await transformers.AutoModelForCausalLM.from_pretrained(folder, {
          dtype,
          device: "auto",
          local_files_only: true,
          session_options: { executionProviders: ["wasm"] },
        })).dispose();
        console.log(JSON.stringify({ name, dtype, withoutExternalData: true, ok: true }));
      } catch (e) {
        const error = errorMessage(e);
        console.log(JSON.stringify({ name, dtype, withoutExternalData: true, ok: false, error }));
      }
    }
  } finally {
    await Deno.remove(folder, { recursive: true });
  }
}

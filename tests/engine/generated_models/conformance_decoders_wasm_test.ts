import { assert } from "../../_assert.ts";
import { DECODER_CASES } from "../../../fixtures/generated_models/conformance_decoders.ts";
import { runProbe } from "../../_helpers/run_probe.ts";

interface Line {
  name: string;
  dtype: string;
  ok: boolean;
  withoutExternalData?: boolean;
  error?: string;
}

// One process runs one ONNX Runtime flavour: the web one runs in a subprocess.
async function probe(): Promise<Line[]> {
  return await runProbe<Line>(new URL("./_conformance_wasm_probe.ts", import.meta.url), []);
}

Deno.test("decoder conformance on onnxruntime-web (wasm): every case and dtype runs", async (t) => {
  const lines = await probe();
  for (const [name, c] of Object.entries(DECODER_CASES)) {
    for (const dtype of c.dtypes) {
      await t.step(`${name} ${dtype}`, () => {
        const line = lines.find((l) =>
          l.name === name && l.dtype === dtype && !l.withoutExternalData
        );
        assert(line, "no result");
        assert(line.ok, line.error);
      });
    }
    if (c.externalData) {
      await t.step(`${name}: our web runtime finds the data file without externalData`, () => {
        const line = lines.find((l) => l.name === name && l.withoutExternalData);
        assert(line, "no result");
        assert(line.ok, line.error);
      });
    }
  }
});

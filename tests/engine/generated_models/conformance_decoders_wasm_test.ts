import { assert, assertEquals } from "../../_assert.ts";
import { DECODER_CASES } from "../../../src/engine/generated_models/conformance_decoders.ts";

interface Line {
  name: string;
  dtype: string;
  ok: boolean;
  withoutExternalData?: boolean;
  error?: string;
}

// One process runs one ONNX Runtime flavour: the web one runs in a subprocess.
async function probe(): Promise<Line[]> {
  const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-read",
      "--allow-write",
      "--allow-env",
      "--allow-ffi",
      "--allow-sys",
      new URL("./_conformance_wasm_probe.ts", import.meta.url).pathname,
    ],
    env: { XDG_RUNTIME_DIR: "/tmp" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  assertEquals(code, 0, `wasm probe failed:\n${new TextDecoder().decode(stderr)}`);
  return new TextDecoder().decode(stdout).trim().split("\n").filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l));
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

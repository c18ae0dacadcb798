// Runs conformance decoder folders on one device, twice: through transformers.js' own
// `generate()` (the oracle) and through our engine server over HTTP, alone and batched with
// prompts of other lengths. Prints one JSON line per case. A process of its own per device,
// because one process holds either the native or the web ONNX Runtime (src/engine/runtime.ts).
//
// Usage: deno run -A _decoder_oracle_probe.ts <device> '<[{"name","folder","dtype"}]>'
import { setupLogger } from "../../../src/core/logging.ts";
import { loadRuntime, type ResolvedDevice } from "../../../src/engine/runtime.ts";
import type { Dtype } from "../../../src/engine/dtype.ts";
import { onnxBaseNameIn } from "../../../src/engine/onnx_file.ts";
import { startEngineServer } from "../../../src/server/engine_server.ts";

/** Prompts of different lengths, so batched rows are padded differently. */
export const ORACLE_PROMPTS = [
  "Hi",
  "The quick brown fox jumps over the lazy dog, then",
  "Once upon a time there was",
];
/** Tokens generated per prompt. */
export const ORACLE_TOKENS = 12;

/** What the probe prints for one case. */
export interface OracleResult {
  name: string;
  dtype: string;
  /** transformers.js generate(), one prompt at a time. */
  oracle: string[];
  /** Our engine over HTTP, one request at a time. */
  alone: string[];
  /** Our engine over HTTP, all prompts at once (one batch). */
  batched: string[];
  error?: string;
}

if (import.meta.main) {
  setupLogger("error");
  const device = Deno.args[0] as ResolvedDevice;
  const cases = JSON.parse(Deno.args[1]) as { name: string; folder: string; dtype: Dtype }[];
  const runtime = await loadRuntime(device);
  const t = runtime.transformers;
  t.env.allowRemoteModels = false;
  for (const c of cases) {
    const result: OracleResult = {
      name: c.name,
      dtype: c.dtype,
      oracle: [],
      alone: [],
      batched: [],
    };
    try {
      result.oracle = await oracleTexts(t, c.folder, c.dtype, device);
      const server = await startEngineServer({
        model: c.folder,
        kind: "chat",
        device,
        dtype: c.dtype,
        // Correctness only: a software WebGPU adapter (llvmpipe) is fine here.
        allowFallbackAdapter: true,
        hostname: "127.0.0.1",
        port: 0,
        id: "m",
        cacheDir: await Deno.makeTempDir(),
      });
      try {
        await server.ready;
        for (const prompt of ORACLE_PROMPTS) {
          result.alone.push(await complete(server.baseUrl, prompt));
        }
        result.batched = await Promise.all(ORACLE_PROMPTS.map((p) => complete(server.baseUrl, p)));
      } finally {
        await server.stop();
      }
    } catch (err) {
      result.error = err instanceof Error ? err.message : String(err);
    }
    console.log(JSON.stringify(result));
  }
}

async function oracleTexts(
  t: Awaited<ReturnType<typeof loadRuntime>>["transformers"],
  folder: string,
  dtype: Dtype,
  device: ResolvedDevice,
): Promise<string[]> {
  const runtime = await loadRuntime(device);
  const tokenizer = await t.AutoTokenizer.from_pretrained(folder, { local_files_only: true });
  const model = await t.AutoModelForCausalLM.from_pretrained(folder, {
    local_files_only: true,
    dtype,
    device: runtime.deviceOption(device),
    model_file_name: await onnxBaseNameIn(folder, dtype),
    session_options: runtime.sessionOptions(device),
  } as never);
  const texts: string[] = [];
  for (const prompt of ORACLE_PROMPTS) {
    const inputs = tokenizer(prompt);
    const out = await model.generate({
      ...inputs,
      max_new_tokens: ORACLE_TOKENS,
      do_sample: false,
    } as never) as { tolist(): bigint[][] };
    const ids = out.tolist()[0].slice(inputs.input_ids.dims[1]).map(Number);
    texts.push(tokenizer.decode(ids, { skip_special_tokens: true }));
  }
  await model.dispose();
  return texts;
}

async function complete(baseUrl: string, prompt: string): Promise<string> {
  const res = await fetch(`${baseUrl}/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "m", prompt, max_tokens: ORACLE_TOKENS, temperature: 0 }),
  });
  const body = await res.json();
  if (!res.ok) throw new Error(`HTTP ${res.status}: ${JSON.stringify(body)}`);
  return body.choices[0].text;
}

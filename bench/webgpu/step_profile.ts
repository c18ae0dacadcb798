/**
 * Where a WebGPU decode step's time goes, on raw onnxruntime-web sessions of the chat benchmark
 * model (fp32, one row): one step with the cache fed from the GPU or uploaded from the CPU, at
 * one shape and at growing cache lengths (twice, to see whether new shapes cost a compile), and
 * prefills of several lengths. `EP_OPTS` (JSON) adds WebGPU provider options, e.g.
 * `{"validationMode":"disabled"}`; `QUICK=1` stops after the fixed-shape steps.
 *
 * Usage: deno run -A bench/webgpu/step_profile.ts [model id, default demo/chat-bench]
 *
 * @module
 */

import { loadRuntime } from "../../src/engine/runtime.ts";
import { DEMO_MODEL_SPECS } from "../../src/engine/generated_models/demo_models.ts";
import { writeDecoderFolder } from "../../src/engine/generated_models/model_folder.ts";
import { median } from "../_stats.ts";

type OrtTensor = {
  dims: number[];
  getData(release?: boolean): Promise<Float32Array>;
  dispose(): void;
};
type Outputs = Record<string, OrtTensor>;

const id = (Deno.args[0] ?? "demo/chat-bench") as keyof typeof DEMO_MODEL_SPECS;
const provider = { name: "webgpu", ...JSON.parse(Deno.env.get("EP_OPTS") ?? "{}") };
const quick = Deno.env.get("QUICK") === "1";
const ms = (x: number) => Math.round(x * 10) / 10;

const { transformers } = await loadRuntime("webgpu");
// deno-lint-ignore no-explicit-any
const ort = (globalThis as any)[Symbol.for("onnxruntime")];
const demo = DEMO_MODEL_SPECS[id];
if (demo.kind !== "chat") throw new Error(`${id} is not a chat model`);
const folder = await Deno.makeTempDir({ prefix: "svc-step-profile-" });
await writeDecoderFolder(folder, demo.spec, { id, formats: ["fp32"] });
const t0 = performance.now();
// deno-lint-ignore no-explicit-any
const model: any = await transformers.AutoModelForCausalLM.from_pretrained(folder, {
  local_files_only: true,
  device: "auto",
  dtype: "fp32",
  session_options: { executionProviders: [provider], preferredOutputLocation: "gpu-buffer" },
} as never);
console.log(id, "session created in", ms(performance.now() - t0), "ms");
const session = model.sessions.model;
const config = model.config;
const kvHeads = config.num_key_value_heads;
const headDim = config.head_dim ?? config.hidden_size / config.num_attention_heads;
const pastNames: string[] = session.inputNames.filter((n: string) => n.startsWith("past_"));
const presentOf = (past: string) => past.replace("past_key_values", "present");

const int64 = (values: bigint[], dims: number[]) => new ort.Tensor("int64", values, dims);
/** Feeds of `n` new tokens after `past` cached ones, the cache from `cacheOf`. */
function feeds(n: number, past: number, cacheOf: (name: string) => unknown) {
  const f: Record<string, unknown> = {
    input_ids: int64(Array.from({ length: n }, (_, i) => BigInt(100 + i)), [1, n]),
    attention_mask: int64(Array(past + n).fill(1n), [1, past + n]),
  };
  if (session.inputNames.includes("position_ids")) {
    f.position_ids = int64(Array.from({ length: n }, (_, i) => BigInt(past + i)), [1, n]);
  }
  if (session.inputNames.includes("num_logits_to_keep")) f.num_logits_to_keep = int64([1n], []);
  for (const name of pastNames) f[name] = cacheOf(name);
  return f;
}
const empty = () => new ort.Tensor("float32", new Float32Array(0), [1, kvHeads, 0, headDim]);
const freeCache = (out: Outputs) => pastNames.forEach((n) => out[presentOf(n)].dispose());

/** One run: its time, and the time to read its logits back. */
async function step(
  f: Record<string, unknown>,
): Promise<{ run: number; read: number; out: Outputs }> {
  const start = performance.now();
  const out: Outputs = await session.run(f);
  const ran = performance.now();
  await out.logits.getData(true);
  return { run: ran - start, read: performance.now() - ran, out };
}

const P = 16;
const prefill = await step(feeds(P, 0, empty));
console.log(
  `prefill of ${P} tokens (first run): ${ms(prefill.run)} ms, logits read ${ms(prefill.read)} ms`,
);
const base = prefill.out;

const onGpu: number[] = [];
const reads: number[] = [];
for (let i = 0; i < 20; i++) {
  const s = await step(feeds(1, P, (n) => base[presentOf(n)]));
  onGpu.push(s.run);
  reads.push(s.read);
  freeCache(s.out);
}
console.log(
  `one step, cache on the GPU: first ${ms(onGpu[0])} ms, then median ${
    ms(median(onGpu.slice(1)))
  }` +
    ` ms; logits read median ${ms(median(reads))} ms`,
);
const cpuCache: Record<string, unknown> = {};
for (const n of pastNames) {
  const t = base[presentOf(n)];
  cpuCache[n] = new ort.Tensor("float32", await t.getData(), t.dims);
}
const uploaded: number[] = [];
for (let i = 0; i < 10; i++) {
  const s = await step(feeds(1, P, (n) => cpuCache[n]));
  uploaded.push(s.run);
  freeCache(s.out);
}
console.log(`one step, cache uploaded from the CPU: median ${ms(median(uploaded))} ms`);

if (!quick) {
  for (const pass of [1, 2]) {
    const times: number[] = [];
    let previous = base;
    for (let i = 0; i < 32; i++) {
      const s = await step(feeds(1, P + i, (n) => previous[presentOf(n)]));
      times.push(s.run);
      if (previous !== base) freeCache(previous);
      previous = s.out;
    }
    freeCache(previous);
    console.log(
      `steps at cache lengths ${P}..${P + 31}, pass ${pass}: median ${ms(median(times))} ms,` +
        ` first ${times.slice(0, 4).map(ms)}`,
    );
  }
  for (const pass of [1, 2]) {
    const times: number[] = [];
    for (const n of [20, 24, 28, 32, 36]) {
      const s = await step(feeds(n, 0, empty));
      times.push(s.run);
      freeCache(s.out);
    }
    console.log(`prefills of 20..36 tokens, pass ${pass}: ${times.map(ms).join(", ")} ms`);
  }
}
await Deno.remove(folder, { recursive: true });
Deno.exit(0); // onnxruntime-web keeps the event loop alive

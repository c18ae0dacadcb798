// On webgpu: whether a decoder's cache, once read back, goes into the next run from the GPU, and
// whether that run computes what it computes from an upload of the same values. Prints one JSON
// line. A process of its own: it holds the web ONNX Runtime (src/engine/runtime.ts).
import { loadRuntime } from "../../src/engine/runtime.ts";
import { setupLogger } from "../../src/core/logging.ts";
import type { PlainTensor } from "../../src/engine/onnx_session.ts";
import { decoderFeeds } from "../../src/engine/families/decoder_family.ts";
import { planFor } from "../../src/engine/families/decoder_families.ts";
import { startPrefill, toCache } from "../../src/engine/chat/prefill.ts";
import type { CacheTensor } from "../../src/engine/chat/kv_cache.ts";

setupLogger("error");
await loadRuntime("webgpu");
// Each run's cache inputs by where their data was: on the GPU or uploaded from memory.
const runs: { gpu: number; uploaded: number }[] = [];
// deno-lint-ignore no-explicit-any
const ort = (globalThis as any)[Symbol.for("onnxruntime")];
const run = ort.InferenceSession.prototype.run;
ort.InferenceSession.prototype.run = function (feeds: Record<string, { location: string }>) {
  const past = Object.entries(feeds).filter(([name]) => name.startsWith("past_key_values."));
  runs.push({
    gpu: past.filter(([, t]) => t.location === "gpu-buffer").length,
    uploaded: past.filter(([, t]) => t.location === "cpu").length,
  });
  return run.apply(this, arguments);
};

const { loadModel } = await import("../../src/engine/load_model.ts");
const { demoFolder } = await import("../_helpers/demo_engines.ts");
const { ChatEngine, collect } = await import("../../src/engine/chat/chat_engine.ts");

const model = await loadModel(await demoFolder("demo/chat"), "chat", {
  device: "webgpu",
  dtype: "fp32",
});
const plan = planFor({
  inputs: model.session.inputs,
  outputNames: model.session.outputNames,
  config: model.config,
  opTypes: new Set(),
}, "demo/chat");
const session = model.session;
const prompt = [5, 9, 14, 20, 27, 35, 44];
const empty = startPrefill(plan, [{ promptIds: prompt }], prompt.length).cache;
const step = (ids: number[], past: CacheTensor[]) =>
  session.run(decoderFeeds(plan, {
    ids: BigInt64Array.from(ids, BigInt),
    mask: new BigInt64Array(past[0].dims[2] + ids.length).fill(1n),
    positions: BigInt64Array.from(ids, (_, i) => BigInt(past[0].dims[2] + i)),
    batch: 1,
    length: ids.length,
    pastLength: past[0].dims[2],
    past,
  }));
const cacheOf = (out: Record<string, PlainTensor>) =>
  plan.cache.presentNames.map((n) => toCache(out[n]));
const logits = (out: Record<string, PlainTensor>) => [...(out.logits.data as Float32Array)];

const prefill = await step(prompt, empty);
const cache = cacheOf(prefill);
const copies = cache.map((t) => ({ data: t.data.slice(), dims: t.dims }));
const fromGpu = logits(await step([50], cache)); // the very arrays read back: from the GPU
const uploaded = logits(await step([50], copies)); // equal values, other arrays: uploaded
const againLater = logits(await step([50], cache)); // a run later: no longer on the GPU
const direct = { runs: runs.splice(0), fromGpu, uploaded, againLater };

// Through the engine: a prefill, then a decode loop whose first step takes the prefill's cache.
const engine = await ChatEngine.create(model, { id: "demo/chat", randomWeights: true });
const reply = await collect(
  await engine.generate({ tokenIds: prompt }, { temperature: 0, maxTokens: 6 }),
);
await engine.dispose();
console.log(JSON.stringify({ direct, engine: { runs, text: reply.text } }));

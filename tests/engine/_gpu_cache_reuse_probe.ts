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
const engineRuns = runs.splice(0);

// The prefix cache on the GPU: each prompt answered by an engine without the cache, then by one
// with it, over the same session. A hit's prefill (its first run) should take every cache input
// from the GPU, put together there from the cache's blocks (64 tokens each).
const off = await ChatEngine.create(model, {
  id: "demo/chat",
  randomWeights: true,
  scheduler: { prefixCacheBytes: 0 },
});
const on = await ChatEngine.create(model, {
  id: "demo/chat",
  randomWeights: true,
  scheduler: { prefixCacheBytes: 64 * 1024 * 1024 },
});
const long = Array.from({ length: 150 }, (_, i) => 3 + (i * 37) % 200);
const prompts = [
  long, // nothing cached
  long, // all but its last token cached: two whole blocks and a part of the third
  [...long.slice(0, 100), 7, 8, 9], // one whole block and 36 tokens of the next
  [...long, 11, 12, 13, 14], // the first prompt and its answer's tokens not fed yet
];
/** The greedy answer's tokens and their log-probabilities. */
async function answer(e: typeof on, tokenIds: number[]) {
  const params = { temperature: 0, maxTokens: 5, logprobs: true };
  const tokens: { token: string; logprob: number }[] = [];
  for await (const event of await e.generate({ tokenIds }, params)) {
    if (event.type === "delta") tokens.push(...event.logprobs!);
  }
  return tokens.map(({ token, logprob }) => ({ token, logprob }));
}
// All answers without the cache first: runs of another engine on the session would end what
// `on` still holds on the GPU between its requests, which one engine alone keeps.
const offAnswers = [];
for (const tokenIds of prompts) offAnswers.push(await answer(off, tokenIds));
const prefix = [];
for (const [i, tokenIds] of prompts.entries()) {
  runs.length = 0;
  prefix.push({ off: offAnswers[i], on: await answer(on, tokenIds), firstRun: runs[0] });
}
const stats = on.stats().prefixCache;
await engine.dispose();
console.log(
  JSON.stringify({ direct, engine: { runs: engineRuns, text: reply.text }, prefix, stats }),
);

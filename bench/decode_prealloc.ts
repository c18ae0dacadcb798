/**
 * Does handing onnxruntime-node preallocated `present` outputs (`run(feeds, fetches)` with tensors)
 * make the raw decode step of the benchmark chat model cheaper than letting it allocate them? Both
 * ways interleaved on one session, medians, at one sequence and at 16 with growing caches.
 *
 * Run: deno run --allow-all bench/decode_prealloc.ts [--dtype q8] [--rounds 12]
 *
 * @module
 */

import { parseArgs } from "node:util";
import * as ort from "onnxruntime-node";
import { parseDtype } from "../src/engine/dtype.ts";
import { llamaHeadDim } from "../src/engine/generated_models/llama_decoder.ts";
import { median } from "./_stats.ts";
import {
  benchChatFile,
  benchChatSpec,
  cacheNames,
  decoderSpec,
  decodeStepFeeds,
  engineSessionOptions,
} from "./_decode_feeds.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    dtype: { type: "string", default: "q8" },
    rounds: { type: "string", default: "12" },
  },
});
const rounds = Number(values.rounds);
const spec = decoderSpec(benchChatSpec());
const session = await ort.InferenceSession.create(
  await benchChatFile(parseDtype(values.dtype)),
  engineSessionOptions(),
);

function preallocated(batch: number, past: number): Record<string, ort.Tensor | null> {
  const shape = [batch, spec.numKvHeads, past + 1, llamaHeadDim(spec)];
  const out: Record<string, ort.Tensor | null> = { logits: null };
  for (const name of cacheNames(spec)) {
    out[`present.${name}`] = new ort.Tensor(
      "float32",
      new Float32Array(shape.reduce((a, b) => a * b)),
      shape,
    );
  }
  return out;
}

console.log(`| batch | cached tokens | allocated by onnxruntime ms | preallocated presents ms |`);
console.log(`| ---: | ---: | ---: | ---: |`);
for (const [batch, past] of [[1, 64], [16, 32], [16, 128], [16, 256]]) {
  const f = decodeStepFeeds(spec, batch, past);
  const fetches = preallocated(batch, past);
  await session.run(f);
  await session.run(f, fetches);
  const written = (fetches["present.0.key"]!.data as Float32Array).some((v) => v !== 0);
  if (!written) throw new Error("onnxruntime did not write into the preallocated outputs");
  const times = { plain: [] as number[], preallocated: [] as number[] };
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 ? ["plain", "preallocated"] as const : ["preallocated", "plain"] as const;
    for (const mode of order) {
      const start = performance.now();
      await (mode === "plain" ? session.run(f) : session.run(f, fetches));
      times[mode].push(performance.now() - start);
    }
  }
  console.log(
    `| ${batch} | ${past} | ${median(times.plain).toFixed(1)} | ${
      median(times.preallocated).toFixed(1)
    } |`,
  );
}
await session.release();

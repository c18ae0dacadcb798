/**
 * Where the raw decode step of the benchmark chat model spends its time, by ONNX operator type:
 * onnxruntime-node's own profiler (`enableProfiling`) over a run of single-token steps at one
 * batch size, in this process (no engine, no worker, no HTTP). The profiler adds a little to every
 * node, so the step is timed first on a session without it; the table gives each operator type's
 * kernel time per step, its node count and its share of all kernel time.
 *
 * With `--tokens N` the call is a prefill of N new tokens per row over `past` cached ones (a
 * prompt chunk, or a conversation's new turn after a prefix cache hit).
 *
 * Run: deno run --allow-all bench/decode_op_profile.ts [--dtype q4] [--batch 1] [--past 64]
 *        [--tokens 1] [--steps 30] [--spinning]
 *
 * @module
 */

import { parseArgs } from "node:util";
import { join } from "node:path";
import * as ort from "onnxruntime-node";
import { parseDtype } from "../src/engine/dtype.ts";
import { CHAT_MODEL } from "./_models.ts";
import { median } from "./_stats.ts";
import {
  benchChatFile,
  benchChatSpec,
  decoderSpec,
  decodeStepFeeds,
  engineSessionOptions,
} from "./_decode_feeds.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    dtype: { type: "string", default: "q4" },
    batch: { type: "string", default: "1" },
    past: { type: "string", default: "64" },
    tokens: { type: "string", default: "1" },
    steps: { type: "string", default: "30" },
    spinning: { type: "boolean", default: false },
  },
});
const dtype = parseDtype(values.dtype);
const batch = Number(values.batch);
const past = Number(values.past);
const steps = Number(values.steps);
const tokens = Number(values.tokens);

const spec = decoderSpec(benchChatSpec());
const file = await benchChatFile(dtype);
const profileDir = await Deno.makeTempDir({ prefix: "svc_op_profile_" });

// The engine's setting (runtime.ts) unless --spinning.
const options = engineSessionOptions(values.spinning);

/** Median step time of `steps` runs after one warm-up. */
async function stepMs(session: ort.InferenceSession, f: Record<string, ort.Tensor>) {
  await session.run(f);
  const times: number[] = [];
  for (let s = 0; s < steps; s++) {
    const start = performance.now();
    await session.run(f);
    times.push(performance.now() - start);
  }
  return median(times);
}

const f = decodeStepFeeds(spec, batch, past, tokens);
const plain = await ort.InferenceSession.create(file, options);
const plainMs = await stepMs(plain, f);
await plain.release();

const profiled = await ort.InferenceSession.create(file, {
  ...options,
  enableProfiling: true,
  profileFilePrefix: join(profileDir, "step"),
});
const profiledMs = await stepMs(profiled, f);
// endProfiling() writes the trace; onnxruntime-node has it on the session, not in its typings.
(profiled as unknown as { endProfiling(): void }).endProfiling();
await profiled.release();

interface TraceEvent {
  cat: string;
  name: string;
  dur: number;
  args?: { op_name?: string };
}
const traceFile = [...Deno.readDirSync(profileDir)].find((e) => e.name.endsWith(".json"));
if (!traceFile) throw new Error(`onnxruntime wrote no profile under ${profileDir}`);
const events: TraceEvent[] = JSON.parse(Deno.readTextFileSync(join(profileDir, traceFile.name)));
await Deno.remove(profileDir, { recursive: true });

const runs = events.filter((e) => e.cat === "Session" && e.name === "model_run").length;
const byOp = new Map<string, { us: number; nodes: number }>();
for (const e of events) {
  if (e.cat !== "Node" || !e.name.endsWith("_kernel_time")) continue;
  const op = e.args?.op_name ?? "?";
  const row = byOp.get(op) ?? { us: 0, nodes: 0 };
  row.us += e.dur;
  row.nodes += 1;
  byOp.set(op, row);
}
const totalUs = [...byOp.values()].reduce((a, r) => a + r.us, 0) / runs;
const nodes = [...byOp.values()].reduce((a, r) => a + r.nodes, 0) / runs;

console.log(
  `\n${CHAT_MODEL} ${dtype}, batch ${batch}, ${past} cached tokens, spinning ${
    values.spinning ? "on" : "off"
  }, ${tokens} new token(s) per row: step ${plainMs.toFixed(2)} ms (${
    (batch * tokens / plainMs * 1000).toFixed(0)
  } tokens/s; ${profiledMs.toFixed(2)} ms profiled), ${nodes} nodes, ` +
    `kernels ${(totalUs / 1000).toFixed(2)} ms per profiled step\n`,
);
console.log("| operator | µs per step | nodes | µs per node | share of kernel time |");
console.log("| --- | ---: | ---: | ---: | ---: |");
for (const [op, r] of [...byOp].sort((a, b) => b[1].us - a[1].us)) {
  const us = r.us / runs;
  if (us < totalUs * 0.005) continue;
  console.log(
    `| ${op} | ${us.toFixed(0)} | ${r.nodes / runs} | ${(r.us / r.nodes).toFixed(1)} | ${
      (100 * us / totalUs).toFixed(1)
    }% |`,
  );
}

/**
 * A long prompt joining while another stream decodes: the running stream's inter-token latency
 * (ITL) around the join and the newcomer's time to first token (TTFT), with the prefill chunked
 * (`prefillChunk`, the engine's default 128) and whole (unset), the two engines interleaved round
 * by round. `demo/chat-bench` (SmolLM2-135M shape, random weights) through `ChatEngine` in this
 * process, no HTTP.
 *
 * Run: deno run --allow-all bench/prefill_join.ts [--rounds 3] [--prompt 1024] [--dtype q8]
 *
 * @module
 */

import { parseArgs } from "node:util";
import { setupLogger } from "../src/core/logging.ts";
import { OutputPaths } from "../src/config/output_paths.ts";
import { materializeDemoModel } from "../src/engine/generated_models/demo_models.ts";
import { loadModel } from "../src/engine/load_model.ts";
import { ChatEngine, collect, DEFAULT_SCHEDULER } from "../src/engine/chat/chat_engine.ts";
import { parseDtype } from "../src/engine/dtype.ts";
import { median } from "./_stats.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    rounds: { type: "string", default: "3" },
    prompt: { type: "string", default: "1024" },
    dtype: { type: "string", default: "q8" },
  },
});
const ROUNDS = Number(values.rounds);
const PROMPT = Number(values.prompt);
/** Tokens the running stream decodes; the long prompt arrives after its 8th. */
const TOKENS = 64;
const JOIN_AFTER = 8;

setupLogger("error");
const dtype = parseDtype(values.dtype!);
const folder = await materializeDemoModel("demo/chat-bench", OutputPaths.resolve().cache);
const variants = [
  { name: `chunked (${DEFAULT_SCHEDULER.prefillChunk})`, chunk: DEFAULT_SCHEDULER.prefillChunk },
  { name: "whole", chunk: undefined },
];
const engines = [];
for (const v of variants) {
  const model = await loadModel(folder, "chat", { device: "cpu", dtype });
  engines.push(
    await ChatEngine.create(model, { id: v.name, scheduler: { prefillChunk: v.chunk } }),
  );
}

interface Sample {
  /** The running stream's ITL p50 before the join, and its longest ITL after. */
  itlP50: number;
  itlMax: number;
  /** Its ITLs longer than twice the p50 (the stalls). */
  stalls: number;
  ttft: number;
}

async function once(engine: ChatEngine, round: number): Promise<Sample> {
  const params = { temperature: 0, maxTokens: TOKENS };
  const running = await engine.generate({ tokenIds: [20 + round, 23, 26, 29, 32] }, params);
  const itl: number[] = [];
  let last = 0;
  let joined: Promise<number> | undefined;
  for await (const event of running) {
    if (event.type !== "delta") continue;
    const now = performance.now();
    if (last > 0) itl.push(now - last);
    last = now;
    if (itl.length === JOIN_AFTER) {
      const ids = Array.from({ length: PROMPT }, (_, i) => 100 + ((i * 7 + round) % 4000));
      const start = performance.now();
      joined = engine.generate({ tokenIds: ids }, { temperature: 0, maxTokens: 1 })
        .then(collect).then(() => performance.now() - start);
    }
  }
  const ttft = await joined!;
  const p50 = median(itl.slice(0, JOIN_AFTER));
  const after = itl.slice(JOIN_AFTER);
  return {
    itlP50: p50,
    itlMax: Math.max(...after),
    stalls: after.filter((x) => x > 2 * p50).length,
    ttft,
  };
}

const load = () => Deno.loadavg().map((x) => x.toFixed(2)).join(", ");
console.error(`load average at start: ${load()}`);
await once(engines[0], 99); // warm-up
await once(engines[1], 99);
const samples: Sample[][] = variants.map(() => []);
for (let r = 0; r < ROUNDS; r++) {
  for (const i of r % 2 === 0 ? [0, 1] : [1, 0]) {
    const s = await once(engines[i], r);
    samples[i].push(s);
    console.error(
      `round ${r + 1}, ${variants[i].name}: ITL p50 ${s.itlP50.toFixed(1)} ms, longest after ` +
        `the join ${s.itlMax.toFixed(1)} ms, ${s.stalls} stalls, TTFT ${s.ttft.toFixed(0)} ms ` +
        `(load ${load()})`,
    );
  }
}
console.log(
  `\nA ${PROMPT}-token prompt joins a stream decoding ${TOKENS} tokens (demo/chat-bench, ${dtype}), ` +
    `medians of ${ROUNDS} interleaved rounds; load average at end ${load()}\n`,
);
console.log(
  "| prefill | running ITL p50 ms | running longest ITL ms | ITLs > 2x p50 | newcomer TTFT ms |",
);
console.log("| --- | ---: | ---: | ---: | ---: |");
variants.forEach((v, i) => {
  const m = (f: (s: Sample) => number) => median(samples[i].map(f));
  console.log(
    `| ${v.name} | ${m((s) => s.itlP50).toFixed(1)} | ${m((s) => s.itlMax).toFixed(1)} | ` +
      `${m((s) => s.stalls)} | ${m((s) => s.ttft).toFixed(0)} |`,
  );
});
for (const engine of engines) await engine.dispose();

/**
 * A small request while big ones run: how long a short chat takes alone and while several
 * requests score long prompts (legacy completions' `echo` + `logprobs`, each answer megabytes of
 * JSON), and how long the server's thread was held meanwhile. Interleaved: every round measures
 * the chat alone, then under load; medians over rounds. The server is a subprocess
 * (`_server_process.ts`), so the client's reading of the big answers is not the server's work.
 *
 * Run: deno run -A bench/fairness.ts [--rounds 3] [--heavy 3] [--prompts 4] [--words 700]
 *
 * @module
 */

import { parseArgs } from "node:util";
import { median } from "./_stats.ts";
import { CHAT_MODEL } from "./_models.ts";
import { ServerProcess } from "./_server_process.ts";
import { OutputPaths } from "../src/config/output_paths.ts";
import { describeMachine } from "./_machine.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    rounds: { type: "string", default: "3" },
    heavy: { type: "string", default: "3" },
    prompts: { type: "string", default: "4" },
    words: { type: "string", default: "700" },
    model: { type: "string", default: CHAT_MODEL },
  },
});
const rounds = Number(values.rounds);
const heavyCount = Number(values.heavy);
const model = values.model;

const server = await ServerProcess.start({
  target: "engine",
  model,
  kind: "chat",
  cacheDir: OutputPaths.resolve().cache,
  device: "cpu",
  dtype: "q8",
});
const base = server.baseUrl.replace(/\/v1$/, "");

async function post(path: string, body: unknown): Promise<number> {
  const res = await fetch(`${base}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const bytes = (await res.arrayBuffer()).byteLength;
  if (!res.ok) throw new Error(`${path}: ${res.status}`);
  return bytes;
}

// The short request: a 4-token chat, its latency in ms.
async function smallChat(): Promise<number> {
  const start = performance.now();
  await post("/v1/chat/completions", {
    model,
    messages: [{ role: "user", content: "Say hello." }],
    max_tokens: 4,
  });
  return performance.now() - start;
}

const text = Array.from({ length: Number(values.words) }, (_, i) => `word${i % 97}`).join(" ");
const heavyBody = {
  model,
  prompt: Array(Number(values.prompts)).fill(text),
  echo: true,
  logprobs: 20,
  max_tokens: 0,
};

const alone: number[] = [];
const loaded: number[] = [];
const stalls: number[] = [];
const peaks: number[] = [];
const loads: number[] = [];
let answerMiB = 0;
await smallChat(); // warm-up
for (let round = 0; round < rounds; round++) {
  for (let i = 0; i < 3; i++) {
    const ms = await smallChat();
    alone.push(ms);
  }
  // The load's numbers only: a new peak and stall record.
  await server.reset();
  let running = true;
  const started = performance.now();
  const heavy = Promise.all(
    Array.from({ length: heavyCount }, () => post("/v1/completions", heavyBody)),
  ).finally(() => {
    running = false;
    loads.push(performance.now() - started);
  });
  await new Promise((resolve) => setTimeout(resolve, 1000));
  while (running) {
    const ms = await smallChat();
    if (running) loaded.push(ms);
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
  const sizes = await heavy;
  answerMiB = sizes[0] / 2 ** 20;
  const report = await server.report();
  stalls.push(report.loopLag.max);
  peaks.push(report.peakRssMiB);
  console.error(
    `round ${round + 1}: chat alone ${median(alone).toFixed(0)} ms, under load ` +
      `${median(loaded).toFixed(0)} ms (${loaded.length}), longest stall ` +
      `${report.loopLag.max.toFixed(0)} ms`,
  );
}
await server.stop();

const fmt = (ms: number) => `${ms.toFixed(0)} ms`;
const machine = await describeMachine("cpu (onnxruntime-node)");
console.log(
  `fairness on ${machine.cpuModel} (${machine.cores} cores), ${model} q8 cpu, ${rounds} rounds`,
);
console.log(
  `load: ${heavyCount} concurrent /v1/completions, each ${heavyBody.prompt.length} prompts of ` +
    `${values.words} words, echo + logprobs 20, max_tokens 0 (answer ${answerMiB.toFixed(1)} MiB)`,
);
console.log(`| | median | max |\n|---|---:|---:|`);
console.log(`| 4-token chat alone | ${fmt(median(alone))} | ${fmt(Math.max(...alone))} |`);
console.log(`| 4-token chat under load | ${fmt(median(loaded))} | ${fmt(Math.max(...loaded))} |`);
console.log(
  `| longest event-loop stall per round | ${fmt(median(stalls))} | ${fmt(Math.max(...stalls))} |`,
);
console.log(
  `| server peak RSS per round | ${median(peaks).toFixed(0)} MiB | ${
    Math.max(...peaks).toFixed(0)
  } MiB |`,
);
console.log(
  `| the scoring load, start to end | ${fmt(median(loads))} | ${fmt(Math.max(...loads))} |`,
);

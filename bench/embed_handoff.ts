/**
 * One client's embedding, in process (no HTTP): where the model worker's hand-off costs time and
 * what running small calls in the calling thread gives back. Variants, interleaved round by round
 * (order rotating), medians after warm-up, on `demo/embed-bench` (all-MiniLM-L6-v2 shape, random
 * weights, q8, cpu):
 *
 * - `worker`: every run in the model worker (`inlineMaxTokens: 0`, the engine before issue 26's fix);
 * - `engine`: the engine's default (small runs in this thread while the worker is idle);
 * - `inline`: the session only in this thread (`inWorker: false`), the reference;
 * - `naive`: a transformers.js `feature-extraction` pipeline call (onnxruntime's defaults: its
 *   threads spin after each run, so it goes last in every round and a pause follows it).
 *
 * The worker variant's legs are timestamped on both threads (epoch ms, `_handoff_worker.ts`), and an
 * empty worker's ping-pong shows what waking a thread costs here, hot and after 5 ms asleep.
 *
 * Run: deno run -A bench/embed_handoff.ts [--rounds 300] [--gap 2]
 *
 * @module
 */

import { parseArgs } from "node:util";
import { median } from "./_stats.ts";
import { makeTexts } from "./_texts.ts";
import { setupLogger } from "../src/core/logging.ts";
import type { WorkerSession as WorkerSessionType } from "../src/engine/worker_session.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: { rounds: { type: "string", default: "300" }, gap: { type: "string", default: "2" } },
});
const ROUNDS = Number(values.rounds);
const WARMUP = Math.min(30, Math.floor(ROUNDS / 5));
/** Milliseconds between two requests (a client's turn-around). */
const GAP = Number(values.gap);
setupLogger("error");

/** Slots of the array `_handoff_worker.ts` writes (the same table is there). */
const LEG = { received: 0, ortCalled: 1, nativeStart: 2, nativeEnd: 3, posted: 4 } as const;

const now = () => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// The engine's model worker, timestamped inside: replace the Worker class before
// worker_session.ts takes it.
const stamps = new Float64Array(new SharedArrayBuffer(8 * 8));
const mainStamps = { run: 0, received: 0 };
const OriginalWorker = globalThis.Worker;
class ProbedWorker extends OriginalWorker {
  constructor(url: string | URL, options?: WorkerOptions) {
    const engine = String(url).endsWith("/src/engine/session_worker.ts");
    super(engine ? new URL("./_handoff_worker.ts", import.meta.url) : url, options);
    if (!engine) return;
    this.postMessage({ type: "handoff-probe", stamps: stamps.buffer });
    this.addEventListener("message", () => mainStamps.received = now());
  }
}
globalThis.Worker = ProbedWorker;

const { resolveModelFolder } = await import("../src/engine/create_engine.ts");
const { loadModel } = await import("../src/engine/load_model.ts");
const { WorkerSession } = await import("../src/engine/worker_session.ts");
const { EmbeddingEngine } = await import("../src/engine/embedding/embedding_engine.ts");
const workerRun = WorkerSession.prototype.run;
WorkerSession.prototype.run = function (this: WorkerSessionType, feeds) {
  mainStamps.run = now();
  return workerRun.call(this, feeds);
};

const resolved = await resolveModelFolder("demo/embed-bench", {
  device: "cpu",
  dtype: "q8",
  cacheDir: ".svc/cache",
} as never);
const sessions: Record<string, unknown> = {};
const engineOf = async (
  name: string,
  options: { inWorker?: boolean; inlineMaxTokens?: number },
) => {
  const model = await loadModel(resolved.folder, "embedding", {
    device: "cpu",
    dtype: "q8",
    modelFileName: resolved.modelFileName,
    ...options,
  });
  sessions[name] = model.session;
  return EmbeddingEngine.create(model, { id: "bench" });
};
const engines = {
  worker: await engineOf("worker", { inlineMaxTokens: 0 }),
  engine: await engineOf("engine", {}),
  inline: await engineOf("inline", { inWorker: false }),
};
const { pipeline, env } = await import("@huggingface/transformers");
env.allowRemoteModels = false;
env.allowLocalModels = true;
const naive = await pipeline("feature-extraction", resolved.folder, {
  device: "cpu",
  dtype: "q8",
  local_files_only: true,
});

// Waking a thread: an empty worker answering at once.
const pong = new OriginalWorker(
  URL.createObjectURL(
    new Blob([
      "self.onmessage = () => self.postMessage(performance.timeOrigin + performance.now());",
    ], { type: "text/javascript" }),
  ),
  { type: "module" },
);
const ping = () =>
  new Promise<[number, number, number]>((resolve) => {
    const t0 = now();
    pong.onmessage = (e) => resolve([t0, e.data, now()]);
    pong.postMessage(0);
  });

const texts = makeTexts(64, 8, 11);
const ms: Record<string, number[]> = {};
const add = (name: string, v: number) => (ms[name] ??= []).push(v);
const names = Object.keys(engines) as (keyof typeof engines)[];
for (let round = 0; round < ROUNDS; round++) {
  const text = texts[round % texts.length];
  const keep = round >= WARMUP;
  for (let j = 0; j < names.length; j++) {
    const name = names[(round + j) % names.length];
    stamps.fill(0);
    const t0 = now();
    await engines[name].embed([text]);
    const t = now() - t0;
    if (keep) add(name, t);
    if (keep && name === "worker") {
      add("leg: embed() to WorkerSession.run", mainStamps.run - t0);
      add("leg: run to worker received", stamps[LEG.received] - mainStamps.run);
      add("leg: received to native run start", stamps[LEG.nativeStart] - stamps[LEG.received]);
      add("leg: native run", stamps[LEG.nativeEnd] - stamps[LEG.nativeStart]);
      add("leg: native end to posted", stamps[LEG.posted] - stamps[LEG.nativeEnd]);
      add("leg: posted to main received", mainStamps.received - stamps[LEG.posted]);
      add("leg: main received to embed() done", t0 + t - mainStamps.received);
      add("worker, outside the native run", t - (stamps[LEG.nativeEnd] - stamps[LEG.nativeStart]));
    }
    await sleep(GAP);
  }
  const t0 = now();
  (await naive([text], { pooling: "mean", normalize: true })).tolist();
  if (keep) add("naive", now() - t0);
  await sleep(GAP + 20); // its spinning threads settle
  for (const asleep of [0, 5]) {
    await ping();
    if (asleep) await sleep(asleep);
    const [a, b, c] = await ping();
    if (keep) {
      add(`ping-pong, worker asleep ${asleep} ms: there`, b - a);
      add(`ping-pong, worker asleep ${asleep} ms: back`, c - b);
    }
  }
}

const base = median(ms.worker);
console.log(`embedding of one short text, ${ROUNDS - WARMUP} rounds, p50 ms (ratio to worker):`);
for (const [name, v] of Object.entries(ms)) {
  const m = median(v);
  const ratio = names.includes(name as never) || name === "naive"
    ? ` (${(m / base).toFixed(2)}x)`
    : "";
  console.log(`  ${name.padEnd(42)} ${m.toFixed(3)}${ratio}`);
}
for (const name of ["worker", "engine"]) {
  const session = sessions[name] as WorkerSessionType;
  console.log(`${name}'s runs (probe included):`, JSON.stringify(session.stats()));
}
pong.terminate();
for (const e of Object.values(engines)) await e.dispose();
await naive.dispose();

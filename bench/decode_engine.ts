/**
 * Where a decode step's time goes in our chat engine, against the session's own step time: the
 * benchmark chat model (`demo/chat-bench`, SmolLM2-135M shape, random weights) run through
 * `ChatEngine.generate()` in this process (no HTTP) at 1 and 4 streams, with the model worker's
 * `session.run` timed inside the worker (`_ort_probe.ts`) and the main thread's parts timed by
 * wrapping them: the round trip to the worker, each sequence's `accept` (sampling, detokenizing,
 * stop matching, events), the sampler alone and the detokenizer alone. A raw decode loop (the
 * same session settings, in this thread, each step's `present` fed back as the next `past`) runs
 * in the same rounds as the reference. Variants are interleaved round by round; medians.
 *
 * Modes: `loop`, the engine's default (greedy batches decoded by the model worker on its own,
 * decode_loop.ts), and `step` (`decodeInWorker: false`: one model call per step, logits to the
 * main thread, sampled there).
 *
 * Run: deno run --allow-all bench/decode_engine.ts [--rounds 3] [--tokens 64] [--dtype q8,q4]
 *      [--modes step,loop] [--streams 1,4] [--temperature 0]
 * Each dtype and mode gets its own engine (and each dtype a raw session), loaded once; every
 * round runs every variant and stream count (order alternating).
 *
 * @module
 */

import { parseArgs } from "node:util";
import { PROBE } from "./_ort_probe.ts";
import { median } from "./_stats.ts";
import { chatPrompt } from "./_texts.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    rounds: { type: "string", default: "3" },
    tokens: { type: "string", default: "64" },
    dtype: { type: "string", default: "q8" },
    modes: { type: "string", default: "step,loop" },
    streams: { type: "string", default: "1,4" },
    temperature: { type: "string", default: "0" },
  },
});
const ROUNDS = Number(values.rounds);
const TOKENS = Number(values.tokens);
const STREAMS = values.streams!.split(",").map(Number);
const TEMPERATURE = Number(values.temperature);

// The engine's model worker, timed inside (as bench/_serve.ts does): replace the Worker class
// before worker_session.ts takes it.
const probes: Float64Array[] = [];
const OriginalWorker = globalThis.Worker;
class ProbedWorker extends OriginalWorker {
  constructor(url: string | URL, options?: WorkerOptions) {
    const engine = String(url).endsWith("/src/engine/session_worker.ts");
    super(engine ? new URL("./_probe_worker.ts", import.meta.url) : url, options);
    if (!engine) return;
    this.addEventListener("message", (event) => {
      const data = (event as MessageEvent).data;
      if (data?.type === "bench-probe") probes.push(new Float64Array(data.counters));
    });
  }
}
globalThis.Worker = ProbedWorker;

const { setupLogger } = await import("../src/core/logging.ts");
setupLogger("error");
const { OutputPaths } = await import("../src/config/output_paths.ts");
const { materializeDemoModel } = await import("../src/engine/generated_models/demo_models.ts");
const { loadModel } = await import("../src/engine/load_model.ts");
const { ChatEngine } = await import("../src/engine/chat/chat_engine.ts");
const { ChatSequence } = await import("../src/engine/chat/chat_sequence.ts");
const { SequenceSampler } = await import("../src/engine/decoding/sampler.ts");
const { TextStream } = await import("../src/engine/decoding/text_stream.ts");
const { WorkerSession } = await import("../src/engine/worker_session.ts");
const { parseDtype } = await import("../src/engine/dtype.ts");

/** Main-thread timers: total ms and count per part. */
const parts = new Map<string, { ms: number; n: number }>();
function add(name: string, ms: number): void {
  const p = parts.get(name) ?? { ms: 0, n: 0 };
  p.ms += ms;
  p.n++;
  parts.set(name, p);
}
// deno-lint-ignore no-explicit-any
function timeMethod(proto: any, method: string, name: string, when?: (args: any[]) => boolean) {
  const original = proto[method];
  proto[method] = function (...args: unknown[]) {
    if (when && !when(args)) return original.apply(this, args);
    const start = performance.now();
    const result = original.apply(this, args);
    if (result instanceof Promise) {
      return result.finally(() => add(name, performance.now() - start));
    }
    add(name, performance.now() - start);
    return result;
  };
}
// deno-lint-ignore no-explicit-any
const isDecode = (args: any[]) => args[0]?.input_ids?.dims?.[1] === 1;
timeMethod(WorkerSession.prototype, "run", "roundTrip", isDecode);
timeMethod(ChatSequence.prototype, "accept", "accept");
timeMethod(ChatSequence.prototype, "acceptToken", "accept");
timeMethod(SequenceSampler.prototype, "sample", "sample");
timeMethod(TextStream.prototype, "push", "detokenize");

const folder = await materializeDemoModel("demo/chat-bench", OutputPaths.resolve().cache);
type Engine = Awaited<ReturnType<typeof ChatEngine.create>>;
type Loaded = Awaited<ReturnType<typeof loadModel>>;
interface Setup {
  dtype: string;
  mode: string;
  engine: Engine;
  /** The reference: the same file in this thread, run as a bare decode loop. */
  raw: Loaded;
  /** Counters of this engine's model worker. */
  probe: Float64Array;
}
const setups: Setup[] = [];
for (const name of values.dtype!.split(",")) {
  const dtype = parseDtype(name);
  const raw = await loadModel(folder, "chat", { device: "cpu", dtype, inWorker: false });
  for (const mode of values.modes!.split(",")) {
    const model = await loadModel(folder, "chat", { device: "cpu", dtype });
    const engine = await ChatEngine.create(model, {
      id: "demo/chat-bench",
      scheduler: { decodeInWorker: mode === "loop" },
    });
    setups.push({ dtype, mode, engine, raw, probe: probes.at(-1)! });
  }
}

interface Measured {
  itl: number[];
  workerStepMs: number;
  parts: Map<string, { ms: number; n: number }>;
  steps: number;
}

/** `streams` generations at once through the engine; ITL from the consumer's side. */
async function engineRun(
  { engine, probe: counters }: Setup,
  streams: number,
  round: number,
): Promise<Measured> {
  const probe = () => [...counters];
  parts.clear();
  const before = probe();
  const stepsBefore = engine.stats().steps;
  const itl: number[] = [];
  await Promise.all(Array.from({ length: streams }, async (_, i) => {
    const stream = await engine.generate(
      { messages: [{ role: "user", content: chatPrompt(round * 100 + i, 40) }] },
      { maxTokens: TOKENS, temperature: TEMPERATURE, seed: i },
    );
    let last = 0;
    for await (const event of stream) {
      if (event.type !== "delta") continue;
      const now = performance.now();
      if (last > 0) itl.push(now - last);
      last = now;
    }
  }));
  const after = probe();
  const runs = after[PROBE.decodeRuns] - before[PROBE.decodeRuns];
  return {
    itl,
    workerStepMs: (after[PROBE.decodeMs] - before[PROBE.decodeMs]) / runs,
    parts: new Map([...parts].map(([k, v]) => [k, { ...v }])),
    steps: engine.stats().steps - stepsBefore,
  };
}

/** The raw session's decode loop at `batch` rows: 57 prompt tokens prefilled, then TOKENS steps. */
async function rawRun({ raw }: Setup, batch: number): Promise<number[]> {
  const { kvHeads, headDim, names } = cacheShape(raw);
  const prompt = 57;
  const i64 = (n: number, v: bigint) => new BigInt64Array(n).fill(v);
  let past: Record<string, { type: "float32"; data: Float32Array; dims: number[] }> = {};
  for (const n of names) {
    past[n] = { type: "float32", data: new Float32Array(0), dims: [batch, kvHeads, 0, headDim] };
  }
  const times: number[] = [];
  for (let step = 0, length = 0; step <= TOKENS; step++) {
    const width = step === 0 ? prompt : 1;
    const feeds = {
      input_ids: { type: "int64" as const, data: i64(batch * width, 42n), dims: [batch, width] },
      attention_mask: {
        type: "int64" as const,
        data: i64(batch * (length + width), 1n),
        dims: [batch, length + width],
      },
      position_ids: {
        type: "int64" as const,
        data: BigInt64Array.from({ length: batch * width }, (_, j) => BigInt(length + j % width)),
        dims: [batch, width],
      },
      num_logits_to_keep: { type: "int64" as const, data: BigInt64Array.of(1n), dims: [] },
      ...past,
    };
    const start = performance.now();
    const out = await raw.session.run(feeds);
    if (step > 0) times.push(performance.now() - start);
    length += width;
    past = {};
    for (const n of names) {
      const t = out[n.replace("past_key_values.", "present.")];
      past[n] = { type: "float32", data: t.data, dims: [...t.dims] };
    }
  }
  return times;
}

function cacheShape(raw: Loaded) {
  const names = raw.session.inputNames.filter((n) => n.startsWith("past_key_values."));
  const dims = raw.session.inputs.find((i) => i.name === names[0])!.shape;
  const c = raw.config;
  const heads = Number(c.num_attention_heads);
  return {
    names,
    kvHeads: typeof dims[1] === "number" ? dims[1] : Number(c.num_key_value_heads ?? heads),
    headDim: typeof dims[3] === "number" ? dims[3] : Number(c.hidden_size) / heads,
  };
}

const load = () => Deno.loadavg().map((x) => x.toFixed(2)).join(", ");
console.error(`load average at start: ${load()}`);
const results = new Map<
  string,
  { itl: number[]; worker: number[]; raw: number[]; p: Measured[] }
>();
for (const setup of setups) await engineRun(setup, 1, 99); // warm-up
for (let r = 0; r < ROUNDS; r++) {
  const order = setups.flatMap((setup) => STREAMS.map((streams) => ({ setup, streams })));
  for (const { setup, streams } of r % 2 === 0 ? order : order.reverse()) {
    const key = `${setup.dtype} | ${setup.mode} | ${streams}`;
    const entry = results.get(key) ?? { itl: [], worker: [], raw: [], p: [] };
    results.set(key, entry);
    const m = await engineRun(setup, streams, r);
    entry.itl.push(median(m.itl));
    entry.worker.push(m.workerStepMs);
    entry.p.push(m);
    entry.raw.push(median(await rawRun(setup, streams)));
    console.error(
      `round ${r + 1}, ${setup.dtype} ${setup.mode}, ${streams} streams: ITL p50 ${
        median(m.itl).toFixed(2)
      } ` +
        `ms, worker step ${m.workerStepMs.toFixed(2)} ms, raw step ${
          entry.raw.at(-1)!.toFixed(2)
        } ms (load ${load()})`,
    );
  }
}

console.log(
  `\nEngine vs raw decode step, demo/chat-bench, ${TOKENS} tokens, temperature ` +
    `${TEMPERATURE}, medians of ${ROUNDS} interleaved rounds; load average at end ${load()}\n`,
);
console.log(
  "| dtype | mode | streams | ITL p50 ms | worker session.run ms | raw loop step ms | ITL / worker run | " +
    "round trip − run ms | accept ms per step | of which sample | of which detokenize |",
);
console.log("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
for (const [key, e] of results) {
  // Per round, then the median: each round's parts come from the same window.
  const per = (name: string) =>
    median(e.p.map((m) => (m.parts.get(name)?.ms ?? 0) / Math.max(1, m.steps)));
  const ratio = median(e.itl.map((itl, i) => itl / e.worker[i]));
  // Step mode only: a loop's steps make no round trip (its few plain steps would mislead).
  const handoff = key.includes("| loop |") ? NaN : median(
    e.p.map((m) => (m.parts.get("roundTrip")?.ms ?? NaN) / m.steps - m.workerStepMs),
  );
  console.log(
    `| ${key} | ${median(e.itl).toFixed(2)} | ${median(e.worker).toFixed(2)} | ` +
      `${median(e.raw).toFixed(2)} | ${ratio.toFixed(2)}x | ` +
      `${Number.isNaN(handoff) ? "–" : handoff.toFixed(2)} | ${per("accept").toFixed(2)} | ` +
      `${per("sample").toFixed(2)} | ${per("detokenize").toFixed(2)} |`,
  );
}
// Loop vs step, round by round (same dtype and streams).
const modes = values.modes!.split(",");
if (modes.includes("loop") && modes.includes("step")) {
  console.log("\n| dtype | streams | ITL p50 loop / step (median of per-round ratios) |");
  console.log("| --- | ---: | ---: |");
  for (const setup of setups.filter((s) => s.mode === "loop")) {
    for (const streams of STREAMS) {
      const loop = results.get(`${setup.dtype} | loop | ${streams}`)!.itl;
      const step = results.get(`${setup.dtype} | step | ${streams}`)!.itl;
      const ratios = loop.map((l, i) => l / step[i]);
      console.log(
        `| ${setup.dtype} | ${streams} | ${median(ratios).toFixed(3)} (${
          ratios.map((r) => r.toFixed(2)).join(", ")
        }) |`,
      );
    }
  }
}
for (const { engine } of setups) await engine.dispose();
for (const raw of new Set(setups.map((s) => s.raw))) await raw.session.release();

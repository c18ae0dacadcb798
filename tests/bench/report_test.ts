// The benchmark report: target evaluation and rendering on synthetic results (the benchmark
// itself takes minutes; these make sure its numbers end up judged and written correctly).
import { assert, assertEquals, assertMatch } from "../_assert.ts";
import {
  evaluateTargets,
  HAND_WRITTEN_MARKER,
  renderReport,
  withHandWritten,
} from "../../bench/_report.ts";
import type { BenchResults } from "../../bench/_report.ts";
import type { ThroughputRun } from "../../bench/embeddings.ts";
import type { ChatRun } from "../../bench/chat.ts";
import { median, percentile, summarize } from "../../bench/_stats.ts";
import { rawAt } from "../../bench/_report_profile.ts";
import type { GatewayResults } from "../../bench/gateway.ts";

function gateway(addedAt1: number, keptAt50: number): GatewayResults {
  const side = (p50: number, rps: number) => ({ p50, p99: p50 * 3, rps });
  return {
    rounds: 3,
    instant: [
      { clients: 1, direct: side(0.05, 10000), gateway: side(0.05 + addedAt1, 2000) },
      { clients: 64, direct: side(2, 20000), gateway: side(12, 4500) },
    ],
    slow: [
      { delayMs: 10, row: { clients: 64, direct: side(13, 4700), gateway: side(17, 3300) } },
      {
        delayMs: 50,
        row: { clients: 64, direct: side(54, 1000), gateway: side(55, 1000 * keptAt50) },
      },
    ],
    cpuPerRequestUs: 170,
  };
}

function throughput(textsPerSec: number): ThroughputRun {
  return {
    textsPerSec,
    latencyP50Ms: 10,
    latencyP95Ms: 20,
    peakRssMiB: 300,
    serverCores: 1.8,
    clientCores: 0.1,
    otherCores: 0,
    sessionBusy: 0.7,
    meanBatch: 12,
    meanQueue: 3,
    sessionMsPerText: 0.5,
    handoffMs: 0.3,
    loopLagP50Ms: 5,
    loopLagP99Ms: 40,
    errors: 0,
  };
}

function chat(tokensPerSec: number, ttft: number, burst: number): ChatRun {
  return {
    tokensPerSec,
    ttftP50Ms: ttft,
    ttftP95Ms: ttft * 2,
    itlP50Ms: 12,
    itlP95Ms: 30,
    burstTtftP50Ms: burst,
    burstTtftP95Ms: burst * 1.2,
    requests: 20,
    peakRssMiB: 600,
    serverCores: 1.9,
    clientCores: 0.02,
    otherCores: 0.1,
    sessionBusy: 0.95,
    meanQueue: 0.5,
    decodeBatch: 15,
    decodeStepMs: 50,
    decodePast: 100,
    prefillShare: 0.1,
    prefillMs: 45,
    prefillBatch: 1.5,
    handoffMs: 0.4,
    endedEarly: 0,
    loopLagP50Ms: 20,
    loopLagP99Ms: 90,
  };
}

function fullResults(): BenchResults {
  const byC = (values: number[]) => ({ 1: throughput(values[0]), 32: throughput(values[1]) });
  return {
    machine: {
      cpuModel: "Test CPU",
      cores: 2,
      memoryGiB: 8,
      os: "linux test x86_64",
      deno: "2.9.6",
      v8: "15",
      device: "cpu (onnxruntime-node, native)",
      loadAverage: [1, 1, 1],
      date: "2026-01-01T00:00:00.000Z",
    },
    command: "deno task bench",
    settings: { repeats: 3 },
    wallSeconds: 300,
    embeddings: {
      concurrencies: [1, 32],
      tokens: { short: 10, long: 200 },
      raw: { short: { 1: 600, 64: 1000 }, long: { 1: 70, 8: 90 } },
      servers: {
        naive: { short: byC([500, 400]), long: byC([60, 80]) },
        ours: { short: byC([450, 900]), long: byC([55, 70]) },
      },
      loadedRssMiB: { naive: 160, ours: 170 },
      tokenizeMsPerText: { short: 0.05, long: 0.3 },
    },
    chat: {
      streams: [1, 16],
      maxTokens: 64,
      promptTokens: 60,
      modes: {
        on: { 1: chat(90, 40, 40), 16: chat(400, 100, 600) },
        off: { 1: chat(90, 40, 40), 16: chat(88, 5000, NaN) },
      },
      loadedRssMiB: { on: 450, off: 450 },
    },
  };
}

Deno.test("percentile() interpolates and median() takes the middle", () => {
  assertEquals(percentile([1, 2, 3, 4], 50), 2.5);
  assertEquals(percentile([5, 1, 3], 100), 5);
  assertEquals(median([3, 1, 2]), 2);
  assert(Number.isNaN(median([])));
  assertEquals(summarize([1, 2, 3, 4, 5]).p50, 3);
});

Deno.test("evaluateTargets() judges each target of the issue on the measured ratios", () => {
  const status = Object.fromEntries(evaluateTargets(fullResults()).map((t) => [t.name, t.met]));
  assertEquals(status["Embeddings, short inputs, 32 clients: ours vs raw ONNX limit"], true);
  assertEquals(status["Embeddings, short inputs, 32 clients: ours vs naive server"], false);
  assertEquals(status["Embeddings, long inputs, 32 clients: ours vs raw ONNX limit"], false);
  assertEquals(status["Chat, batching on: aggregate tokens/s at 16 streams vs 1"], true);
  assertEquals(
    status["Chat, batching on: TTFT p50 at 16 streams vs 1 (steady, staggered arrivals)"],
    true,
  );
  assertEquals(
    status["Chat, batching on: TTFT p50 at 16 streams vs 1 (burst: all 16 at once)"],
    false,
  );
});

Deno.test("renderReport() writes the machine, the verdicts and why targets were missed", () => {
  const text = renderReport(fullResults());
  assertMatch(text, /\| CPU \| Test CPU \|/);
  assertMatch(text, /RANDOM weights|Random weights/);
  assertMatch(text, /Shared, noisy machine/);
  assertMatch(text, /ours vs raw ONNX limit \| 900 \/ 1000 texts\/s = 90% \| ≥ 85% \| \*\*met\*\*/);
  assertMatch(
    text,
    /\(burst: all 16 at once\) \| 600 \/ 40\.0 ms = 15\.00x \| < 3x \| \*\*not met\*\*/,
  );
  assertMatch(text, /## Where the time goes/);
  assertMatch(text, /TTFT at 16 streams, burst/);
  assert(!text.includes("undefined"), "no undefined value leaks into the report");
});

Deno.test("evaluateTargets() judges the gateway's added latency and throughput at 64 clients", () => {
  const judge = (g: GatewayResults) => {
    const { embeddings: _e, chat: _c, ...rest } = fullResults();
    return evaluateTargets({ ...rest, gateway: g }).map((t) => t.met);
  };
  assertEquals(judge(gateway(0.4, 0.95)), [true, true]);
  assertEquals(judge(gateway(1.2, 0.95)), [false, true]);
  assertEquals(judge(gateway(0.4, 0.8)), [true, false]);
});

Deno.test("renderReport() writes the gateway section with the added latency per row", () => {
  const text = renderReport({ ...fullResults(), gateway: gateway(0.4, 0.95) });
  assertMatch(text, /## 5\. Gateway overhead/);
  assertMatch(text, /\| 1 \| 0\.050 \| 0\.450 \| \*\*0\.400\*\* \|/);
  assertMatch(text, /\| 50 ms \| 1000 \| 950 \| 95% \|/);
  assertMatch(text, /Gateway: added latency p50 at 1 client \(instant backend\) \| .* \*\*met\*\*/);
  assert(!text.includes("undefined"), "no undefined value leaks into the report");
});

Deno.test("rawAt() interpolates raw throughput between measured batch sizes", () => {
  const raw = { 1: 100, 4: 300, 16: 500 };
  assertEquals(rawAt(raw, 1), 100);
  assertEquals(rawAt(raw, 2), 200);
  assertEquals(rawAt(raw, 8), 400);
  assertEquals(rawAt(raw, 64), 500);
  assert(Number.isNaN(rawAt({}, 4)));
});

Deno.test("renderReport() renders a partial run without any target", () => {
  const { embeddings: _e, chat: _c, ...rest } = fullResults();
  const text = renderReport({
    ...rest,
    http: {
      requests: 10,
      rows: {
        "embed: direct engine.embed()": { p50Ms: 0.001, p99Ms: 0.002, cpuUs: 2 },
        "embed: our server, POST /v1/embeddings": { p50Ms: 0.3, p99Ms: 0.9, cpuUs: 300 },
      },
    },
  });
  assertMatch(text, /no target was measured/);
  assertMatch(text, /Added by our server \(p50, HTTP minus direct\): embeddings 0\.299 ms/);
});

Deno.test("llama.cpp rows: a target per stream count and a side-by-side table with ratios", () => {
  const results = fullResults();
  results.chat!.modes.llama = { 1: chat(120, 80, 80), 16: chat(380, 200, 700) };
  results.chat!.llama = {
    binary: "/cache/llama-server",
    gguf: "/cache/chat.Q8_0.gguf",
    type: "Q8_0",
    threads: 2,
    parallel: 16,
    promptTokens: 60,
  };
  const status = Object.fromEntries(evaluateTargets(results).map((t) => [t.name, t.met]));
  assertEquals(status["Chat vs llama.cpp (same weights, Q8_0), 1 stream(s): tokens/s"], false);
  assertEquals(status["Chat vs llama.cpp (same weights, Q8_0), 16 stream(s): tokens/s"], true);
  const text = renderReport(results);
  assertMatch(text, /### Side by side with llama\.cpp/);
  assertMatch(text, /\| 1 \| 90\.0 \| 120 \| 1\.33x \|/);
  assertMatch(text, /\| llama\.cpp \| 16 \| 380 \|/);
  assert(!/Side by side/.test(renderReport(fullResults())), "no llama.cpp table without its rows");
});

Deno.test("llama.cpp embedding rows: a target per length at 32 clients, a row and a ratio per c", () => {
  const results = fullResults();
  const byC = (values: number[]) => ({ 1: throughput(values[0]), 32: throughput(values[1]) });
  results.embeddings!.llama = {
    peer: {
      binary: "/cache/llama-server",
      gguf: "/cache/embed.Q8_0.gguf",
      type: "Q8_0",
      threads: 2,
      parallel: 32,
      ubatch: 2048,
      pooling: "mean",
      tokens: { short: 10, long: 200 },
      sameIds: 768,
      inputs: 768,
    },
    runs: { short: byC([300, 600]), long: byC([40, 100]) },
  };
  const status = Object.fromEntries(evaluateTargets(results).map((t) => [t.name, t.met]));
  const name = (length: string) =>
    `Embeddings vs llama.cpp (same weights, Q8_0), ${length} inputs, 32 clients: texts/s`;
  assertEquals(status[name("short")], true); // 900 vs 600
  assertEquals(status[name("long")], false); // 70 vs 100
  const text = renderReport(results);
  assertMatch(text, /\| \(d\) llama\.cpp, GGUF Q8_0 \| 300 \| 600 \|/);
  assertMatch(text, /\| \(c\)\/\(d\) llama\.cpp \| 1\.50x \| 1\.50x \|/);
  assertMatch(text, /\| llama\.cpp, 32 \| 10\.00 \/ 20\.00 \|/);
  assertMatch(text, /768 of 768 bench texts/);
  const without = renderReport(fullResults());
  assert(!/\(d\) llama/.test(without), "no llama.cpp row without its runs");
  assertMatch(without, /llama\.cpp rows: not measured in this run/);
});

Deno.test("a new report keeps the previous RESULTS.md's hand-written sections", () => {
  const previous = `# old\n\nold numbers\n\n${HAND_WRITTEN_MARKER}\n\n## Analysis\n\nkept\n`;
  const next = withHandWritten("# new\n\nnew numbers\n", previous);
  assertEquals(next, `# new\n\nnew numbers\n\n${HAND_WRITTEN_MARKER}\n\n## Analysis\n\nkept\n`);
  assertEquals(withHandWritten("# new\n", "# old, nothing by hand\n"), "# new\n");
  assertEquals(withHandWritten("# new\n", null), "# new\n");
});

/**
 * Chat streaming under concurrent streams: our engine server with continuous batching on vs the
 * same server with batching off (`maxSequences: 1`), and llama.cpp's `llama-server` on the same
 * weights as GGUF (Q8_0 for our q8, Q4_0 for q4) when a build is found (bench/_llama_server.ts), at 1, 4 and 16 closed-loop
 * SSE streams. llama.cpp gets the very prompt token ids our chat template makes (its `/completion`
 * endpoint takes ids), `n_predict` = `max_tokens` and `ignore_eos`, so both do the same work.
 *
 * Each stream sends `/v1/chat/completions` requests back to back (`stream: true`, fixed
 * `max_tokens`, temperature 0, no stop strings). The streams start staggered (one single-stream
 * request time spread over them), as users do, and are measured over a fixed window after a
 * warm-up: aggregate tokens/s, time to first token (TTFT) and inter-token latency (ITL). A
 * separate "burst" round sends one request per stream all at once, the worst case for TTFT.
 *
 * @module
 */

import * as transformers from "@huggingface/transformers";
import type { BenchContext } from "./_context.ts";
import { ServerProcess } from "./_server_process.ts";
import { median, medianOfFields, percentile, sleep } from "./_stats.ts";
import { chatPrompt } from "./_texts.ts";
import { CHAT_MODEL } from "./_models.ts";
import { llamaSnapshot, rates, type Snapshot, snapshot } from "./_snapshot.ts";
import { benchGguf, findLlamaServer, LLAMA_BUILD_HINT, LlamaServer } from "./_llama_server.ts";
import { fetchRetryingClosed, sseData } from "./_sse.ts";
import { materializeDemoModel } from "../src/engine/generated_models/demo_models.ts";
import type { LlamaGgufType } from "../fixtures/generated_models/llama_gguf.ts";

/** Words in each user message (the chat template adds a few tokens). */
const PROMPT_WORDS = 40;

/** Ours with batching on (default scheduler) or off (`maxSequences: 1`), or llama.cpp. */
export type ChatMode = "on" | "off" | "llama";

/** The GGUF weights llama.cpp runs for each of our dtypes (the same precision). */
const GGUF_TYPE: Partial<Record<string, LlamaGgufType>> = { q8: "Q8_0", q4: "Q4_0", fp32: "F16" };

/** The llama.cpp peer's settings, as reported. */
export interface LlamaPeer {
  binary: string;
  gguf: string;
  type: LlamaGgufType;
  threads: number;
  parallel: number;
}

/** One measured phase (medians over repeats in results). */
export interface ChatRun {
  tokensPerSec: number;
  ttftP50Ms: number;
  ttftP95Ms: number;
  itlP50Ms: number;
  itlP95Ms: number;
  /** TTFT when every stream sends at the same moment (NaN when not measured). */
  burstTtftP50Ms: number;
  burstTtftP95Ms: number;
  /** Requests that started in the window. */
  requests: number;
  peakRssMiB: number;
  serverCores: number;
  clientCores: number;
  /** Cores used by other processes on the machine during the window. */
  otherCores: number;
  /** Share of the window the model was running (timed inside the model worker). */
  sessionBusy: number;
  /** Mean sequences waiting for a place (engine `stats().queueDepth`, sampled every 10 ms). */
  meanQueue: number;
  /** Mean sequences per decode step (engine `stats().batchSizes`), and its time. */
  decodeBatch: number;
  decodeStepMs: number;
  /** Mean cached tokens per decode step. */
  decodePast: number;
  /** Share of session time spent in prefills. */
  prefillShare: number;
  /** Mean time of one prefill run, and prompts per prefill run. */
  prefillMs: number;
  prefillBatch: number;
  /**
   * Per model call (each step of a decode loop in the worker counts as one): submit-to-result
   * time on the main thread beyond the model's run time, ms.
   */
  handoffMs: number;
  /** Requests that ended before max_tokens (EOS). */
  endedEarly: number;
  /** How late a 10 ms timer fired in the server (event loop blocked), p50 / p99, ms. */
  loopLagP50Ms: number;
  loopLagP99Ms: number;
}

/** What the chat part measured. */
export interface ChatResults {
  streams: number[];
  maxTokens: number;
  /** Mean prompt tokens (chat template included). */
  promptTokens: number;
  /** `llama` is absent or empty when no llama-server build was found. */
  modes: Record<"on" | "off", Record<number, ChatRun>> & { llama?: Record<number, ChatRun> };
  loadedRssMiB: Record<"on" | "off", number>;
  /** Present when llama.cpp ran. */
  llama?: LlamaPeer & { promptTokens: number };
}

/** Which slices to run (memory.ts runs only 16 streams). */
export interface ChatPlan {
  streams?: number[];
  repeats?: number;
  /** Measure the all-at-once round too (batching on only). */
  burst?: boolean;
}

/** A finished (or cut) streaming request as the client saw it. */
interface StreamRecord {
  start: number;
  /** Arrival times of chunks with content. */
  chunks: number[];
  completionTokens: number;
  promptTokens: number;
  finish: string | null;
}

/** Where one streaming request goes: our server (with its counters) or llama-server. */
interface ChatTarget {
  stream(
    index: number,
    maxTokens: number,
    signal: AbortSignal,
    entry?: { record: StreamRecord },
  ): Promise<StreamRecord>;
  /** Our server, for session counters; undefined for llama.cpp. */
  ours?: ServerProcess;
  /** The server process, for its CPU time. */
  pid: number;
}

function oursTarget(server: ServerProcess): ChatTarget {
  return {
    stream: (index, maxTokens, signal, entry) =>
      streamOnce(server.baseUrl, index, maxTokens, signal, entry),
    ours: server,
    pid: server.pid,
  };
}

/**
 * Runs the chat comparison.
 *
 * @example
 * ```ts
 * const results = await runChat(ctx, { streams: [1, 4, 16] });
 * ```
 */
export async function runChat(ctx: BenchContext, plan: ChatPlan = {}): Promise<ChatResults> {
  const streams = plan.streams ?? [1, 4, 16];
  const repeats = plan.repeats ?? ctx.repeats;
  const spec = {
    target: "engine" as const,
    model: CHAT_MODEL,
    kind: "chat" as const,
    cacheDir: ctx.cacheDir,
    device: ctx.device,
    dtype: ctx.dtype,
    // Like for like with llama.cpp's `cache_prompt: false`: every prompt prefilled whole
    // (prompts repeat across rounds; conversation.ts measures the prefix cache).
    scheduler: { prefixCacheBytes: 0 },
  };
  ctx.log(`chat: starting ${CHAT_MODEL} with batching on and off`);
  const servers = {
    on: await ServerProcess.start(spec, { logFile: ctx.serverLog }),
    off: await ServerProcess.start({ ...spec, scheduler: { ...spec.scheduler, maxSequences: 1 } }, {
      logFile: ctx.serverLog,
    }),
  };
  const targets: Partial<Record<ChatMode, ChatTarget>> = {
    on: oursTarget(servers.on),
    off: oursTarget(servers.off),
  };
  const llama = await startLlama(ctx);
  if (llama) targets.llama = llama.target;
  const modes = Object.keys(targets) as ChatMode[];
  const runs: Record<ChatMode, Record<number, ChatRun[]>> = { on: {}, off: {}, llama: {} };
  const promptTokens: number[] = [];
  const llamaPromptTokens: number[] = [];
  try {
    // One single-stream request time, spread over the streams' first requests.
    let singleRequestMs = await warm(targets.on!, ctx.maxTokens);
    for (const mode of modes.slice(1)) await warm(targets[mode]!, ctx.maxTokens);
    for (let r = 0; r < repeats; r++) {
      for (const n of streams) {
        // Interleaved: the order of the servers rotates from one slice to the next.
        const shift = (r * streams.length + streams.indexOf(n)) % modes.length;
        for (const mode of [...modes.slice(shift), ...modes.slice(0, shift)]) {
          const target = targets[mode]!;
          // A burst round first (batching servers); its request time spreads the steady streams'
          // starts so that, like independent users, they do not all arrive in the same step.
          const burst = (plan.burst ?? true) && mode !== "off" && n > 1
            ? await burstRound(target, n, ctx.maxTokens)
            : undefined;
          const spreadMs = burst ? burst.requestMs : singleRequestMs;
          const run = await steadyLoad(target, n, spreadMs, singleRequestMs, ctx);
          (mode === "llama" ? llamaPromptTokens : promptTokens).push(run.promptTokens);
          if (n === 1 && mode === "on") singleRequestMs = run.requestMs;
          const result: ChatRun = {
            ...run.result,
            burstTtftP50Ms: burst
              ? percentile(burst.ttfts, 50)
              : n === 1
              ? run.result.ttftP50Ms
              : NaN,
            burstTtftP95Ms: burst
              ? percentile(burst.ttfts, 95)
              : n === 1
              ? run.result.ttftP95Ms
              : NaN,
          };
          (runs[mode][n] ??= []).push(result);
          ctx.log(
            `  [${r + 1}/${repeats}] ${mode === "llama" ? "llama.cpp" : `batching ${mode}`}, ` +
              `${n} streams: ${result.tokensPerSec.toFixed(1)} tok/s, TTFT p50 ${
                result.ttftP50Ms.toFixed(0)
              } ms (burst ${result.burstTtftP50Ms.toFixed(0)}), ITL p50 ${
                result.itlP50Ms.toFixed(1)
              } ms, step ${result.decodeStepMs.toFixed(1)} ms × ${
                result.decodeBatch.toFixed(1)
              } seqs, model busy ${(result.sessionBusy * 100).toFixed(0)}%, waiting ${
                result.meanQueue.toFixed(1)
              }, others ${result.otherCores.toFixed(2)} cores`,
          );
        }
      }
    }
  } finally {
    await Promise.all([...Object.values(servers).map((s) => s.stop()), llama?.server.stop()]);
  }
  const medians = (byStreams: Record<number, ChatRun[]>) =>
    Object.fromEntries(Object.entries(byStreams).map(([n, list]) => [n, medianOfFields(list)]));
  return {
    streams,
    maxTokens: ctx.maxTokens,
    promptTokens: median(promptTokens),
    modes: { on: medians(runs.on), off: medians(runs.off), llama: medians(runs.llama) },
    loadedRssMiB: { on: servers.on.loadedRssMiB, off: servers.off.loadedRssMiB },
    llama: llama && { ...llama.peer, promptTokens: median(llamaPromptTokens) },
  };
}

/**
 * Starts llama-server on the bench chat model as GGUF (threads = cores, 16 slots,
 * continuous batching), or returns undefined (and says how to build it) when there is no build.
 */
async function startLlama(
  ctx: BenchContext,
): Promise<{ server: LlamaServer; target: ChatTarget; peer: LlamaPeer } | undefined> {
  const binary = await findLlamaServer();
  if (!binary) {
    ctx.log(`chat: ${LLAMA_BUILD_HINT}`);
    return undefined;
  }
  const type = GGUF_TYPE[ctx.dtype];
  if (!type) {
    ctx.log(`chat: llama.cpp rows skipped: no GGUF type matches dtype ${ctx.dtype}`);
    return undefined;
  }
  const gguf = await benchGguf(ctx.cacheDir, CHAT_MODEL, type);
  const peer = { binary, gguf, type, threads: navigator.hardwareConcurrency, parallel: 16 };
  ctx.log(`chat: starting llama-server (${binary}) on ${gguf}`);
  const server = await LlamaServer.start(binary, gguf, { ...peer, logFile: ctx.serverLog });
  // The prompt ids our server makes from the same messages (its chat template, our tokenizer).
  const folder = await materializeDemoModel(CHAT_MODEL, ctx.cacheDir);
  transformers.env.allowRemoteModels = false;
  const tok = await transformers.AutoTokenizer.from_pretrained(folder);
  const promptIds = (index: number) =>
    tok.encode(
      tok.apply_chat_template([{ role: "user", content: chatPrompt(index, PROMPT_WORDS) }], {
        tokenize: false,
        add_generation_prompt: true,
      }) as string,
    );
  return {
    server,
    peer,
    target: {
      stream: (index, maxTokens, signal, entry) =>
        streamLlama(server.baseUrl, promptIds(index), maxTokens, signal, entry),
      pid: server.pid,
    },
  };
}

/**
 * Three requests to load everything lazily initialized, checking the stream works; returns the
 * time of the last one, ms.
 */
async function warm(target: ChatTarget, maxTokens: number): Promise<number> {
  let ms = NaN;
  for (let i = 0; i < 3; i++) {
    const rec = await target.stream(i, maxTokens, new AbortController().signal);
    if (rec.completionTokens === 0 || rec.chunks.length === 0) {
      throw new Error(`the chat server (pid ${target.pid}) streamed no tokens`);
    }
    ms = rec.chunks[rec.chunks.length - 1] - rec.start;
  }
  return ms;
}

/** Every stream sends one request at the same moment; returns their TTFTs and request time. */
async function burstRound(
  target: ChatTarget,
  n: number,
  maxTokens: number,
): Promise<{ ttfts: number[]; requestMs: number }> {
  const records = await Promise.all(
    Array.from(
      { length: n },
      (_, i) => target.stream(10_000 + i, maxTokens, new AbortController().signal),
    ),
  );
  const done = records.filter((r) => r.chunks.length > 0);
  return {
    ttfts: done.map((r) => r.chunks[0] - r.start),
    requestMs: median(done.map((r) => r.chunks[r.chunks.length - 1] - r.start)),
  };
}

/**
 * `n` closed-loop streams, started `spreadMs / n` apart, measured over `ctx.chatSeconds` (at
 * least 1.5 `spreadMs`) after a warm-up. Requests still running when the window closes are cancelled, except those that
 * started inside it and have not had their first token yet: they run until it arrives.
 */
async function steadyLoad(
  target: ChatTarget,
  n: number,
  spreadMs: number,
  singleRequestMs: number,
  ctx: BenchContext,
): Promise<
  {
    result: Omit<ChatRun, "burstTtftP50Ms" | "burstTtftP95Ms">;
    requestMs: number;
    promptTokens: number;
  }
> {
  const gap = spreadMs / n;
  const warmupMs = Math.max(ctx.quick ? 300 : 600, singleRequestMs);
  const start = performance.now();
  const windowStart = start + gap * (n - 1) + warmupMs;
  // Long enough for every stream to start a request inside it.
  const windowEnd = windowStart + Math.max(ctx.chatSeconds * 1000, 1.5 * spreadMs);
  const records: StreamRecord[] = [];
  const inFlight = new Set<{ record: StreamRecord; abort: AbortController }>();
  let counter = n * 1000;
  const server = target.ours;
  await server?.reset();
  const take = () => server ? snapshot(server) : llamaSnapshot(target.pid);
  let before: Snapshot | undefined;
  const atStart = sleep(windowStart - performance.now()).then(async () => before = await take());
  const client = async (i: number) => {
    await sleep(i * gap);
    while (performance.now() < windowEnd) {
      const abort = new AbortController();
      const entry = { record: emptyRecord(), abort };
      inFlight.add(entry);
      const rec = await target.stream(counter++, ctx.maxTokens, abort.signal, entry);
      inFlight.delete(entry);
      records.push(rec);
    }
  };
  const clients = Array.from({ length: n }, (_, i) => client(i));
  await sleep(windowEnd - performance.now());
  const after = await take();
  for (const entry of inFlight) {
    const startedInWindow = entry.record.start >= windowStart;
    if (!startedInWindow || entry.record.chunks.length > 0) entry.abort.abort();
  }
  await Promise.all(clients);
  await atStart;
  const windowSec = (windowEnd - windowStart) / 1000;
  const complete = records.filter((r) => r.finish !== null && r.completionTokens > 0);
  const allChunks = complete.reduce((s, r) => s + r.chunks.length, 0);
  const allTokens = complete.reduce((s, r) => s + r.completionTokens, 0);
  const tokensPerChunk = allChunks > 0 ? allTokens / allChunks : 1;
  let chunksInWindow = 0;
  const itl: number[] = [];
  const ttft: number[] = [];
  for (const rec of records) {
    for (let k = 0; k < rec.chunks.length; k++) {
      const t = rec.chunks[k];
      if (t < windowStart || t > windowEnd) continue;
      chunksInWindow++;
      if (k > 0) itl.push(t - rec.chunks[k - 1]);
    }
    if (rec.start >= windowStart && rec.start < windowEnd && rec.chunks.length > 0) {
      ttft.push(rec.chunks[0] - rec.start);
    }
  }
  const { serverSeconds, serverCores, clientCores, otherCores, session } = rates(before!, after);
  const requestMs = median(complete.map((r) => r.chunks[r.chunks.length - 1] - r.start));
  const prefillRuns = session.runs - session.decodeRuns;
  return {
    result: {
      tokensPerSec: (chunksInWindow * tokensPerChunk) / windowSec,
      ttftP50Ms: percentile(ttft, 50),
      ttftP95Ms: percentile(ttft, 95),
      itlP50Ms: percentile(itl, 50),
      itlP95Ms: percentile(itl, 95),
      requests: ttft.length,
      peakRssMiB: after.peakRssMiB,
      serverCores,
      clientCores,
      otherCores,
      sessionBusy: session.busyMs / (serverSeconds * 1000),
      meanQueue: session.queueSamples > 0 ? session.queueSum / session.queueSamples : NaN,
      decodeBatch: session.engineBatches > 0
        ? session.engineRows / session.engineBatches
        : session.decodeRuns > 0
        ? session.decodeRows / session.decodeRuns
        : NaN,
      decodeStepMs: session.decodeRuns > 0 ? session.decodeMs / session.decodeRuns : NaN,
      decodePast: session.decodeRuns > 0 ? session.decodePast / session.decodeRuns : NaN,
      prefillShare: session.busyMs > 0 ? 1 - session.decodeMs / session.busyMs : NaN,
      prefillMs: prefillRuns > 0 ? (session.busyMs - session.decodeMs) / prefillRuns : NaN,
      prefillBatch: prefillRuns > 0 ? (session.rows - session.decodeRows) / prefillRuns : NaN,
      handoffMs: session.workerCalls > 0
        ? (session.workerCallMs - session.busyMs) / session.workerCalls
        : NaN,
      endedEarly: complete.filter((r) => r.finish === "stop").length,
      loopLagP50Ms: after.loopLag.p50,
      loopLagP99Ms: after.loopLag.p99,
    },
    requestMs,
    promptTokens: median(complete.map((r) => r.promptTokens)),
  };
}

function emptyRecord(): StreamRecord {
  return { start: 0, chunks: [], completionTokens: 0, promptTokens: 0, finish: null };
}

/**
 * Sends one streaming chat request and records when each content chunk arrived. Aborting
 * `signal` cuts the stream (the record keeps what arrived). `entry.record` is filled live.
 */
async function streamOnce(
  baseUrl: string,
  index: number,
  maxTokens: number,
  signal: AbortSignal,
  entry: { record: StreamRecord } = { record: emptyRecord() },
): Promise<StreamRecord> {
  const rec = entry.record;
  rec.start = performance.now();
  try {
    const res = await fetch(`${baseUrl}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      signal,
      body: JSON.stringify({
        model: CHAT_MODEL,
        messages: [{ role: "user", content: chatPrompt(index, PROMPT_WORDS) }],
        max_tokens: maxTokens,
        temperature: 0,
        stream: true,
        stream_options: { include_usage: true },
      }),
    });
    if (!res.ok || !res.body) {
      throw new Error(`chat request failed: ${res.status} ${await res.text()}`);
    }
    for await (const { data, at } of sseData(res.body)) {
      if (data === "[DONE]") continue;
      const chunk = JSON.parse(data);
      if (chunk.error) throw new Error(`chat stream error: ${JSON.stringify(chunk.error)}`);
      const choice = chunk.choices?.[0];
      if (choice?.delta?.content) rec.chunks.push(at);
      if (choice?.finish_reason) rec.finish = choice.finish_reason;
      if (chunk.usage) {
        rec.completionTokens = chunk.usage.completion_tokens;
        rec.promptTokens = chunk.usage.prompt_tokens;
      }
    }
  } catch (err) {
    if (!signal.aborted) throw err;
  }
  return rec;
}

/**
 * Sends one streaming `/completion` request of prompt token ids to llama-server (greedy,
 * `n_predict` = `maxTokens`, EOS ignored, no prompt cache reuse) and records when each token
 * arrived, as {@link streamOnce} does for ours.
 */
async function streamLlama(
  baseUrl: string,
  promptIds: number[],
  maxTokens: number,
  signal: AbortSignal,
  entry: { record: StreamRecord } = { record: emptyRecord() },
): Promise<StreamRecord> {
  const rec = entry.record;
  rec.start = performance.now();
  try {
    const res = await fetchRetryingClosed(`${baseUrl}/completion`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      signal,
      body: JSON.stringify({
        prompt: promptIds,
        n_predict: maxTokens,
        temperature: 0,
        ignore_eos: true,
        cache_prompt: false,
        stream: true,
        return_tokens: true,
      }),
    });
    if (!res.ok || !res.body) {
      throw new Error(`llama.cpp request failed: ${res.status} ${await res.text()}`);
    }
    for await (const { data, at } of sseData(res.body)) {
      const chunk = JSON.parse(data);
      if (chunk.error) throw new Error(`llama.cpp stream error: ${JSON.stringify(chunk.error)}`);
      if (chunk.tokens?.length > 0 || chunk.content) rec.chunks.push(at);
      if (chunk.stop) {
        rec.finish = chunk.stop_type === "eos" ? "stop" : "length";
        rec.completionTokens = chunk.timings?.predicted_n ?? chunk.tokens_predicted;
        rec.promptTokens = chunk.timings?.prompt_n ?? chunk.tokens_evaluated;
      }
    }
  } catch (err) {
    if (!signal.aborted) throw err;
  }
  return rec;
}

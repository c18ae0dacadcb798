/**
 * Embeddings throughput, side by side: (a) the raw ONNX Runtime session at several batch sizes
 * (the limit), (b) the naive server (one transformers.js pipeline call per request), (c) our
 * engine server and (d) llama.cpp's `llama-server --embedding` on the same weights as GGUF (when a
 * build is found, bench/_llama_server.ts), all over HTTP, driven by the same client in the same
 * interleaved rounds: N concurrent loops, each sending one text per request, for a fixed time.
 * Short (~10-token) and long (~200-token) inputs.
 *
 * @module
 */

import { type LoadedModel, loadModel } from "../src/engine/load_model.ts";
import type { BertGgufType } from "../fixtures/generated_models/bert_gguf.ts";
import { materializeDemoModel } from "../src/engine/generated_models/demo_models.ts";
import type { BatcherOptions } from "../src/engine/embedding/batcher.ts";
import type { BenchContext } from "./_context.ts";
import { ServerProcess } from "./_server_process.ts";
import { llamaSnapshot, rates, type Snapshot, snapshot } from "./_snapshot.ts";
import { benchGguf, findLlamaServer, LLAMA_BUILD_HINT, LlamaServer } from "./_llama_server.ts";
import { median, medianOfFields, percentile } from "./_stats.ts";
import { makeTexts } from "./_texts.ts";
import { EMBED_MODEL } from "./_models.ts";

/** Input lengths: words per text (each word is one token, plus [CLS] and [SEP]). */
export const EMBED_LENGTHS = { short: 8, long: 198 } as const;
/** A length name. */
export type LengthName = keyof typeof EMBED_LENGTHS;

/** Servers compared over HTTP: "naive", "ours", and any extra variants of ours. */
export type EmbedServerName = string;

/** An extra configuration of our server to measure beside the default one. */
export interface EmbedVariant {
  name: string;
  batching: Partial<BatcherOptions>;
}

/** One load phase against a server (medians over repeats in results). */
export interface ThroughputRun {
  textsPerSec: number;
  latencyP50Ms: number;
  latencyP95Ms: number;
  /** Peak resident memory of the server process during the phase, MiB. */
  peakRssMiB: number;
  /** CPU cores used by the server and by the client process during the window. */
  serverCores: number;
  clientCores: number;
  /** CPU cores used by everything else on the machine (other users) during the window. */
  otherCores: number;
  /**
   * Share of the window the model was running, timed in the thread that runs it (our model
   * worker; the naive server's main thread). Native CPU only.
   */
  sessionBusy: number;
  /** Mean inputs per batch: our engine's `stats().batchSizes`; the naive server's session runs. */
  meanBatch: number;
  /** Mean inputs waiting in our engine's queue (sampled every 10 ms; NaN for the naive server). */
  meanQueue: number;
  /** Session time per text, ms. */
  sessionMsPerText: number;
  /**
   * Our engine: ms per batch from submitting it to the worker until the main thread had the result,
   * beyond the model's own run time (NaN for the naive server).
   */
  handoffMs: number;
  /** How late a 10 ms timer fired in the server (event loop blocked), p50 / p99, ms. */
  loopLagP50Ms: number;
  loopLagP99Ms: number;
  errors: number;
}

/** The GGUF weights llama.cpp runs for each of our dtypes (the same precision). */
const GGUF_TYPE: Partial<Record<string, BertGgufType>> = { q8: "Q8_0", fp16: "F16", fp32: "F32" };

/** Slots of the llama.cpp peer: one per client of the largest concurrency. */
const LLAMA_SLOTS = 32;
/** Its physical batch (`-b`, `-ub`), tokens: the inputs one forward pass may hold. */
const LLAMA_UBATCH = 2048;

/** The llama.cpp embedding peer's settings and what it counted, as reported. */
export interface LlamaEmbedPeer {
  binary: string;
  gguf: string;
  type: BertGgufType;
  threads: number;
  parallel: number;
  ubatch: number;
  pooling: "mean";
  /** Mean tokens per input as llama.cpp's /tokenize counts them ([CLS] and [SEP] included). */
  tokens: Record<LengthName, number>;
  /** Inputs whose llama.cpp token ids equal our tokenizer's, of all inputs. */
  sameIds: number;
  inputs: number;
}

/** What the embeddings part measured. */
export interface EmbeddingResults {
  concurrencies: number[];
  /** Mean tokens per input, [CLS] and [SEP] included. */
  tokens: Record<LengthName, number>;
  /** Raw session texts/s by batch size, per length (median over repeats). */
  raw: Record<LengthName, Record<number, number>>;
  servers: Record<EmbedServerName, Record<LengthName, Record<number, ThroughputRun>>>;
  /** Server memory right after loading, MiB. */
  loadedRssMiB: Record<EmbedServerName, number>;
  /** Tokenizer cost in the bench process, ms per text. */
  tokenizeMsPerText: Record<LengthName, number>;
  /** llama.cpp's rows (same rounds as the servers'); absent when no llama-server was found. */
  llama?: { peer: LlamaEmbedPeer; runs: Record<LengthName, Record<number, ThroughputRun>> };
}

/** Which slices of the part to run (memory.ts runs only concurrency 32). */
export interface EmbeddingPlan {
  concurrencies?: number[];
  raw?: boolean;
  repeats?: number;
  /** Extra configurations of our server. */
  variants?: EmbedVariant[];
  /** Measure llama.cpp too when a build is found (default true). */
  llama?: boolean;
}

const RAW_BATCHES: Record<LengthName, number[]> = {
  short: [1, 4, 8, 16, 32, 64],
  long: [1, 2, 4, 8, 16, 32],
};

/**
 * Runs the embeddings comparison.
 *
 * @example
 * ```ts
 * const results = await runEmbeddings(ctx, { concurrencies: [1, 8, 32] });
 * ```
 */
export async function runEmbeddings(
  ctx: BenchContext,
  plan: EmbeddingPlan = {},
): Promise<EmbeddingResults> {
  const concurrencies = plan.concurrencies ?? [1, 8, 32];
  const repeats = plan.repeats ?? ctx.repeats;
  const withRaw = plan.raw ?? true;
  const folder = await materializeDemoModel(EMBED_MODEL, ctx.cacheDir);
  const texts = {
    short: makeTexts(512, EMBED_LENGTHS.short, 11),
    long: makeTexts(256, EMBED_LENGTHS.long, 12),
  };
  ctx.log(`embeddings: loading ${EMBED_MODEL} in-process and starting two servers`);
  // The raw limit: the session in this thread, nothing between the caller and onnxruntime.
  const model = await loadModel(folder, "embedding", {
    device: ctx.device,
    dtype: ctx.dtype,
    inWorker: false,
  });
  const rows = {
    short: texts.short.map((t) => model.tokenizer.encode(t)),
    long: texts.long.map((t) => model.tokenizer.encode(t)),
  };
  const tokens = {
    short: mean(rows.short.map((r) => r.length)),
    long: mean(rows.long.map((r) => r.length)),
  };
  const tokenizeMsPerText = {
    short: timeTokenizer(model, texts.short),
    long: timeTokenizer(model, texts.long),
  };
  const common = { kind: "embedding" as const, cacheDir: ctx.cacheDir, device: ctx.device };
  const log = { logFile: ctx.serverLog };
  const servers: Record<EmbedServerName, ServerProcess> = {
    naive: await ServerProcess.start({
      ...common,
      target: "naive",
      model: folder,
      dtype: ctx.dtype,
    }, log),
    ours: await ServerProcess.start({
      ...common,
      target: "engine",
      model: EMBED_MODEL,
      dtype: ctx.dtype,
    }, log),
  };
  for (const variant of plan.variants ?? []) {
    servers[variant.name] = await ServerProcess.start({
      ...common,
      target: "engine",
      model: EMBED_MODEL,
      dtype: ctx.dtype,
      batching: variant.batching,
    }, log);
  }
  const targets: Record<string, LoadTarget> = Object.fromEntries(
    Object.entries(servers).map(([name, server]) => [name, serverTarget(server)]),
  );
  const llama = plan.llama === false ? undefined : await startLlama(ctx, texts, rows);
  if (llama) targets[LLAMA] = llama.target;
  const names = Object.keys(targets);
  const rawRuns: Record<LengthName, Record<number, number[]>> = { short: {}, long: {} };
  const serverRuns: Record<EmbedServerName, Record<LengthName, Record<number, ThroughputRun[]>>> =
    Object.fromEntries(names.map((n) => [n, { short: {}, long: {} }]));
  try {
    for (let r = 0; r < repeats; r++) {
      for (const length of ["short", "long"] as const) {
        if (withRaw) {
          for (const size of RAW_BATCHES[length]) {
            const tps = await rawThroughput(model, rows[length], size, ctx.quick ? 0.4 : 1.2);
            (rawRuns[length][size] ??= []).push(tps);
            ctx.log(
              `  [${r + 1}/${repeats}] raw ${length} batch ${size}: ${tps.toFixed(0)} texts/s`,
            );
          }
        }
        for (const c of concurrencies) {
          // Alternate who goes first so slow drift of the shared machine hits both alike.
          const shift = (r + c) % names.length;
          const order = [...names.slice(shift), ...names.slice(0, shift)];
          for (const name of order) {
            const run = await runLoad(targets[name], texts[length], c, ctx);
            (serverRuns[name][length][c] ??= []).push(run);
            ctx.log(
              `  [${r + 1}/${repeats}] ${name} ${length} c=${c}: ${run.textsPerSec.toFixed(0)} ` +
                `texts/s (batch ${run.meanBatch.toFixed(1)}, waiting ${
                  run.meanQueue.toFixed(1)
                }, model busy ${(run.sessionBusy * 100).toFixed(0)}%, hand-off ${
                  run.handoffMs.toFixed(2)
                } ms, ` +
                `cores: server ${run.serverCores.toFixed(2)}, client ${
                  run.clientCores.toFixed(2)
                }, ` +
                `others ${run.otherCores.toFixed(2)})`,
            );
          }
        }
      }
    }
  } finally {
    await Promise.all([...Object.values(servers).map((s) => s.stop()), llama?.server.stop()]);
    await model.session.release();
  }
  const medians = (runs: Record<LengthName, Record<number, ThroughputRun[]>>) => ({
    short: mapValues(runs.short, medianOfFields),
    long: mapValues(runs.long, medianOfFields),
  });
  const ours = Object.keys(servers);
  return {
    concurrencies,
    tokens,
    raw: { short: mapValues(rawRuns.short, median), long: mapValues(rawRuns.long, median) },
    servers: Object.fromEntries(ours.map((n) => [n, medians(serverRuns[n])])),
    loadedRssMiB: Object.fromEntries(ours.map((n) => [n, servers[n].loadedRssMiB])),
    tokenizeMsPerText,
    ...(llama && { llama: { peer: llama.peer, runs: medians(serverRuns[LLAMA]) } }),
  };
}

/** The name of llama.cpp's rows among the load targets. */
const LLAMA = "llama.cpp";

/** Where the load goes: a server's embeddings URL, how to reset and read its counters. */
interface LoadTarget {
  url: string;
  reset(): Promise<unknown>;
  snapshot(): Promise<Snapshot>;
}

function serverTarget(server: ServerProcess): LoadTarget {
  return {
    url: `${server.baseUrl}/embeddings`,
    reset: () => server.reset(),
    snapshot: () => snapshot(server),
  };
}

/**
 * Starts llama-server with `--embedding` on the bench embedding model as GGUF (threads = cores,
 * a slot per client, mean pooling as the model folder says) and counts the tokens it makes of the
 * bench texts; undefined (with the build hint) when there is no build.
 */
async function startLlama(
  ctx: BenchContext,
  texts: Record<LengthName, string[]>,
  ourIds: Record<LengthName, number[][]>,
): Promise<{ server: LlamaServer; target: LoadTarget; peer: LlamaEmbedPeer } | undefined> {
  const binary = await findLlamaServer();
  if (!binary) {
    ctx.log(`embeddings: ${LLAMA_BUILD_HINT}`);
    return undefined;
  }
  const type = GGUF_TYPE[ctx.dtype];
  if (!type) {
    ctx.log(`embeddings: llama.cpp rows skipped: no GGUF type matches dtype ${ctx.dtype}`);
    return undefined;
  }
  const gguf = await benchGguf(ctx.cacheDir, EMBED_MODEL, type);
  const settings = {
    threads: navigator.hardwareConcurrency,
    parallel: LLAMA_SLOTS,
    ubatch: LLAMA_UBATCH,
    pooling: "mean" as const,
  };
  ctx.log(`embeddings: starting llama-server (${binary}) on ${gguf}`);
  const server = await LlamaServer.start(binary, gguf, {
    ...settings,
    slotContext: 512,
    embedding: { pooling: settings.pooling, ubatch: settings.ubatch },
    logFile: ctx.serverLog,
  });
  try {
    // Both must do the same work: llama.cpp's token ids of every bench text beside ours.
    let sameIds = 0;
    let inputs = 0;
    const tokens = { short: NaN, long: NaN };
    for (const length of ["short", "long"] as const) {
      let sum = 0;
      for (const [i, text] of texts[length].entries()) {
        const ids = await server.tokenize(text, { addSpecial: true });
        sum += ids.length;
        inputs++;
        if (
          ids.length === ourIds[length][i].length && ids.every((t, k) => t === ourIds[length][i][k])
        ) {
          sameIds++;
        }
      }
      tokens[length] = sum / texts[length].length;
    }
    if (sameIds !== inputs) {
      ctx.log(`embeddings: llama.cpp tokenizes ${inputs - sameIds} of ${inputs} texts differently`);
    }
    return {
      server,
      peer: { binary, gguf, type, ...settings, tokens, sameIds, inputs },
      target: {
        url: `${server.baseUrl}/v1/embeddings`,
        reset: () => Promise.resolve(),
        snapshot: () => llamaSnapshot(server.pid),
      },
    };
  } catch (err) {
    await server.stop();
    throw err;
  }
}

/** The best raw throughput of a length and the batch size that gave it. */
export function bestRaw(raw: Record<number, number>): { size: number; textsPerSec: number } {
  let best = { size: NaN, textsPerSec: NaN };
  for (const [size, tps] of Object.entries(raw)) {
    if (!(tps <= best.textsPerSec)) best = { size: Number(size), textsPerSec: tps };
  }
  return best;
}

/** Texts/s of the bare session on batches of `size` rows, padded like the engine pads them. */
async function rawThroughput(
  model: LoadedModel,
  rows: number[][],
  size: number,
  seconds: number,
): Promise<number> {
  const pad = BigInt(model.tokenizer.pad_token_id ?? 0);
  const feeds = Array.from({ length: 4 }, (_, k) => {
    const batch = Array.from({ length: size }, (_, i) => rows[(k * size + i) % rows.length]);
    const seq = Math.max(...batch.map((r) => r.length));
    const ids = new BigInt64Array(size * seq).fill(pad);
    const mask = new BigInt64Array(size * seq);
    batch.forEach((row, b) => {
      row.forEach((id, t) => (ids[b * seq + t] = BigInt(id)));
      mask.fill(1n, b * seq, b * seq + row.length);
    });
    const dims = [size, seq];
    return {
      input_ids: { type: "int64" as const, data: ids, dims },
      attention_mask: { type: "int64" as const, data: mask, dims },
      token_type_ids: { type: "int64" as const, data: new BigInt64Array(size * seq), dims },
    };
  });
  await model.session.run(feeds[0]);
  const start = performance.now();
  let runs = 0;
  while (runs < 2 || performance.now() - start < seconds * 1000) {
    await model.session.run(feeds[runs % feeds.length]);
    runs++;
  }
  return (runs * size) / ((performance.now() - start) / 1000);
}

/**
 * Drives `server` with `concurrency` loops, each posting one text per request. Warm-up lasts
 * until every client has had an answer (and at least a moment); the window then lasts at least
 * `ctx.embedSeconds` and two answers per client (so slow phases are not a handful of
 * requests), at most four times that long. The rate is answers over the time between the
 * answers that open and close the window.
 */
async function runLoad(
  server: LoadTarget,
  texts: string[],
  concurrency: number,
  ctx: BenchContext,
): Promise<ThroughputRun> {
  const url = server.url;
  await checkOnce(url, texts[0]);
  const minWarmupMs = ctx.quick ? 300 : 700;
  const minWindowMs = ctx.embedSeconds * 1000;
  const start = performance.now();
  await server.reset();
  let phase: "warm" | "measure" | "stop" = "warm";
  let warmed = 0;
  let windowStart = NaN;
  let windowEnd = NaN;
  let before: Promise<Snapshot> | undefined;
  let after: Promise<Snapshot> | undefined;
  const latencies: number[] = [];
  let errors = 0;
  const answered = (at: number, sent: number) => {
    if (phase === "warm") {
      if (++warmed >= concurrency && at - start >= minWarmupMs) {
        phase = "measure";
        windowStart = at;
        before = server.snapshot();
      }
    } else if (phase === "measure") {
      latencies.push(at - sent);
      const elapsed = at - windowStart;
      const enough = elapsed >= minWindowMs && latencies.length >= 2 * concurrency;
      if (enough || elapsed >= 4 * minWindowMs) {
        phase = "stop";
        windowEnd = at;
        after = server.snapshot();
      }
    }
  };
  const loop = async (client: number) => {
    let k = client * 7919;
    while (phase !== "stop") {
      const body = JSON.stringify({ model: EMBED_MODEL, input: texts[k++ % texts.length] });
      const sent = performance.now();
      const res = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
      });
      await res.arrayBuffer();
      if (res.ok) answered(performance.now(), sent);
      else errors++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, (_, i) => loop(i)));
  const { serverSeconds, serverCores, clientCores, otherCores, session } = rates(
    await before!,
    await after!,
  );
  const last = await after!;
  return {
    textsPerSec: latencies.length / ((windowEnd - windowStart) / 1000),
    latencyP50Ms: percentile(latencies, 50),
    latencyP95Ms: percentile(latencies, 95),
    peakRssMiB: last.peakRssMiB,
    serverCores,
    clientCores,
    otherCores,
    sessionBusy: session.busyMs / (serverSeconds * 1000),
    meanBatch: session.engineBatches > 0
      ? session.engineRows / session.engineBatches
      : session.runs > 0
      ? session.rows / session.runs
      : NaN,
    meanQueue: session.queueSamples > 0 && session.engineBatches > 0
      ? session.queueSum / session.queueSamples
      : NaN,
    sessionMsPerText: session.rows > 0 ? session.busyMs / session.rows : NaN,
    handoffMs: session.workerCalls > 0
      ? (session.workerCallMs - session.busyMs) / session.workerCalls
      : NaN,
    loopLagP50Ms: last.loopLag.p50,
    loopLagP99Ms: last.loopLag.p99,
    errors,
  };
}

/** One request whose answer is checked, so a broken server fails loudly, not fast. */
async function checkOnce(url: string, text: string): Promise<void> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: EMBED_MODEL, input: text }),
  });
  const body = await res.json();
  const vector = body?.data?.[0]?.embedding;
  if (!res.ok || !Array.isArray(vector) || vector.length === 0) {
    throw new Error(`${url} answered ${res.status}: ${JSON.stringify(body).slice(0, 300)}`);
  }
}

function timeTokenizer(model: LoadedModel, texts: string[]): number {
  const start = performance.now();
  for (const text of texts) model.tokenizer.encode(text);
  return (performance.now() - start) / texts.length;
}

function mean(values: number[]): number {
  return values.reduce((s, v) => s + v, 0) / values.length;
}

function mapValues<T, U>(record: Record<number, T>, fn: (value: T) => U): Record<number, U> {
  return Object.fromEntries(Object.entries(record).map(([k, v]) => [k, fn(v)]));
}

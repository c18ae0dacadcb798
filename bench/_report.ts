/**
 * Renders the benchmark results as `bench/RESULTS.md`: machine, settings, the targets of the
 * throughput issue with met / not met, the tables of every part, and where the time goes.
 *
 * @module
 */

import type { MachineInfo } from "./_machine.ts";
import { fmt, ratio } from "./_stats.ts";
import type { ChatResults } from "./chat.ts";
import { CHAT_MODEL, EMBED_MODEL } from "./_models.ts";
import type { DecodeStepRow } from "./_decode_profile.ts";
import { bestRaw, type EmbeddingResults, type LengthName } from "./embeddings.ts";
import { HTTP_VARIANTS, type HttpOverheadResults } from "./http_overhead.ts";
import type { MemoryResults } from "./memory.ts";
import { explainGaps } from "./_report_profile.ts";
import type { GatewayResults } from "./gateway.ts";
import { gatewaySection, gatewayTargets } from "./_report_gateway.ts";
import type { ConversationResults } from "./conversation.ts";
import { conversationSection, conversationTargets } from "./_report_conversation.ts";

/** Everything one run measured. */
export interface BenchResults {
  machine: MachineInfo;
  command: string;
  settings: Record<string, string | number | boolean>;
  wallSeconds: number;
  embeddings?: EmbeddingResults;
  chat?: ChatResults;
  decodeSteps?: DecodeStepRow[];
  conversation?: ConversationResults;
  memory?: MemoryResults;
  http?: HttpOverheadResults;
  gateway?: GatewayResults;
}

/** One target of the issue and whether this run met it. */
export interface TargetStatus {
  name: string;
  measured: string;
  required: string;
  met: boolean;
}

/** Evaluates the issue's targets on what was measured. */
export function evaluateTargets(results: BenchResults): TargetStatus[] {
  const targets: TargetStatus[] = [];
  const e = results.embeddings;
  if (e?.concurrencies.includes(32)) {
    for (const length of ["short", "long"] as LengthName[]) {
      const ours = e.servers.ours[length][32]?.textsPerSec ?? NaN;
      const raw = bestRaw(e.raw[length]);
      const naive = e.servers.naive[length][32]?.textsPerSec ?? NaN;
      if (Number.isFinite(raw.textsPerSec)) {
        targets.push({
          name: `Embeddings, ${length} inputs, 32 clients: ours vs raw ONNX limit`,
          measured: `${fmt(ours)} / ${fmt(raw.textsPerSec)} texts/s = ${
            pct(ours / raw.textsPerSec)
          }`,
          required: "≥ 85%",
          met: ours / raw.textsPerSec >= 0.85,
        });
      }
      targets.push({
        name: `Embeddings, ${length} inputs, 32 clients: ours vs naive server`,
        measured: `${fmt(ours)} / ${fmt(naive)} texts/s = ${ratio(ours, naive)}`,
        required: "≥ 3x",
        met: ours / naive >= 3,
      });
      const peer = e.llama?.runs[length][32];
      if (peer) {
        targets.push({
          name: `Embeddings vs llama.cpp (same weights, ${
            e.llama!.peer.type
          }), ${length} inputs, 32 clients: texts/s`,
          measured: `${fmt(ours)} / ${fmt(peer.textsPerSec)} = ${ratio(ours, peer.textsPerSec)}`,
          required: "> 1x",
          met: ours > peer.textsPerSec,
        });
      }
    }
  }
  const on = results.chat?.modes.on;
  if (on?.[1] && on[16]) {
    targets.push({
      name: "Chat, batching on: aggregate tokens/s at 16 streams vs 1",
      measured: `${fmt(on[16].tokensPerSec)} / ${fmt(on[1].tokensPerSec)} = ${
        ratio(on[16].tokensPerSec, on[1].tokensPerSec)
      }`,
      required: "≥ 4x",
      met: on[16].tokensPerSec / on[1].tokensPerSec >= 4,
    });
    targets.push({
      name: "Chat, batching on: TTFT p50 at 16 streams vs 1 (steady, staggered arrivals)",
      measured: `${fmt(on[16].ttftP50Ms)} / ${fmt(on[1].ttftP50Ms)} ms = ${
        ratio(on[16].ttftP50Ms, on[1].ttftP50Ms)
      }`,
      required: "< 3x",
      met: on[16].ttftP50Ms / on[1].ttftP50Ms < 3,
    });
    if (Number.isFinite(on[16].burstTtftP50Ms)) {
      targets.push({
        name: "Chat, batching on: TTFT p50 at 16 streams vs 1 (burst: all 16 at once)",
        measured: `${fmt(on[16].burstTtftP50Ms)} / ${fmt(on[1].ttftP50Ms)} ms = ${
          ratio(on[16].burstTtftP50Ms, on[1].ttftP50Ms)
        }`,
        required: "< 3x",
        met: on[16].burstTtftP50Ms / on[1].ttftP50Ms < 3,
      });
    }
  }
  const llama = results.chat?.modes.llama ?? {};
  for (const n of results.chat?.streams ?? []) {
    const ours = on?.[n];
    const peer = llama[n];
    if (!ours || !peer) continue;
    targets.push({
      name: `Chat vs llama.cpp (same weights, ${
        results.chat!.llama?.type
      }), ${n} stream(s): tokens/s`,
      measured: `${fmt(ours.tokensPerSec)} / ${fmt(peer.tokensPerSec)} = ${
        ratio(ours.tokensPerSec, peer.tokensPerSec)
      }`,
      required: "> 1x",
      met: ours.tokensPerSec > peer.tokensPerSec,
    });
  }
  if (results.conversation) targets.push(...conversationTargets(results.conversation));
  if (results.gateway) targets.push(...gatewayTargets(results.gateway));
  return targets;
}

/** The whole RESULTS.md. */
export function renderReport(results: BenchResults): string {
  const targets = evaluateTargets(results);
  const m = results.machine;
  const out: string[] = [
    "# Svc throughput benchmarks",
    "",
    `Generated by \`${results.command}\` on ${m.date} (${fmt(results.wallSeconds / 60, 1)} min).`,
    "",
    `> **Random weights.** The models are the generated benchmark demo models \`${EMBED_MODEL}\` ` +
    `(all-MiniLM-L6-v2 shape) and \`${CHAT_MODEL}\` (SmolLM2-135M shape): their outputs are ` +
    "meaningless, their timings are those of real models of that shape.",
    ">",
    "> **Shared, noisy machine.** Other developers used the same cores during the run. Compare " +
    "numbers within this file (measured side by side, interleaved, medians over repeats), not " +
    "with other machines. Absolute times only count from a GPU machine.",
    ...contention(results),
    "",
    "## Machine",
    "",
    "| | |",
    "| --- | --- |",
    `| CPU | ${m.cpuModel} |`,
    `| cores | ${m.cores} |`,
    `| memory | ${fmt(m.memoryGiB, 1)} GiB |`,
    `| OS | ${m.os} |`,
    `| Deno | ${m.deno} (V8 ${m.v8}) |`,
    `| device | ${m.device} |`,
    `| load average at start | ${m.loadAverage.map((l) => l.toFixed(2)).join(", ")} |`,
    "",
    ...(m.device.startsWith("cpu")
      ? [
        "CPU rows only: no GPU was available to this run. On a GPU machine, " +
        "`deno task bench --device webgpu` measures the same comparisons there.",
        "",
      ]
      : []),
    "## Settings",
    "",
    "| | |",
    "| --- | --- |",
    ...Object.entries(results.settings).map(([k, v]) => `| ${k} | ${v} |`),
    "",
    "## Targets",
    "",
    "| target | measured | required | status |",
    "| --- | --- | --- | --- |",
    ...targets.map((t) =>
      `| ${t.name} | ${t.measured} | ${t.required} | ${t.met ? "**met**" : "**not met**"} |`
    ),
    "",
  ];
  if (targets.length === 0) out.push("(no target was measured in this run)", "");
  if (results.embeddings) out.push(...embeddingSection(results.embeddings));
  if (results.chat) out.push(...chatSection(results.chat, results.decodeSteps));
  if (results.conversation) out.push(...conversationSection(results.conversation));
  if (results.memory) out.push(...memorySection(results.memory));
  if (results.http) out.push(...httpSection(results.http));
  if (results.gateway) {
    out.push(...gatewaySection(results.gateway, results.embeddings));
  }
  out.push(...explainGaps(results, targets));
  out.push(
    "## Reproduce",
    "",
    "```sh",
    "deno task bench                      # everything, this file (~10 min on 2 cores)",
    "deno task bench --quick              # ~2 min smoke run, written under .svc/benchmarks/",
    "deno task bench --only chat --repeats 1",
    "deno task bench --only gateway       # one part (embeddings, chat, conversation, memory, http, gateway)",
    "deno bench bench/sampler_bench.ts    # micro-benchmarks: sampling, KV cache assembly",
    "deno bench --allow-read --allow-env bench/dispatcher_bench.ts  # the gateway's wait queue",
    "```",
    "",
  );
  return out.join("\n");
}

function embeddingSection(e: EmbeddingResults): string[] {
  const cs = e.concurrencies;
  const head = `| | ${cs.map((c) => `c=${c}`).join(" | ")} |`;
  const rule = `| --- | ${cs.map(() => "---:").join(" | ")} |`;
  const out = [
    "## 1. Embeddings: texts/s",
    "",
    "N concurrent client loops, each posting one text per request over loopback HTTP for a " +
    "fixed time (after a warm-up); the raw rows call `session.run` in process on pre-tokenized, " +
    "padded batches (no tokenizer, no pooling, no HTTP). The naive server is " +
    '`bench/naive_server.ts`: one transformers.js `pipeline("feature-extraction")` call per ' +
    "request. Servers run as subprocesses; the client is this process. In the detail tables, " +
    "*model busy* is the share of the window the model was running, timed in the thread that " +
    "runs it (our model worker; the naive server's main thread); *inputs per batch* and " +
    "*inputs waiting* (mean queue, sampled every 10 ms) come from our engine's `stats()`.",
    "",
  ];
  for (const length of ["short", "long"] as LengthName[]) {
    const raw = e.raw[length];
    const best = bestRaw(raw);
    const row = (name: string, f: (c: number) => string) =>
      `| ${name} | ${cs.map((c) => f(c)).join(" | ")} |`;
    const ours = (c: number) => e.servers.ours[length][c];
    const naive = (c: number) => e.servers.naive[length][c];
    const llama = e.llama?.runs[length];
    const details = { ...e.servers, ...(llama && { "llama.cpp": { [length]: llama } }) } as Record<
      string,
      Partial<EmbeddingResults["servers"][string]>
    >;
    out.push(
      `### ${length} inputs (${fmt(e.tokens[length], 0)} tokens)`,
      "",
      head,
      rule,
      ...(Object.keys(raw).length > 0
        ? [
          row("(a) raw ONNX session, batch = c", (c) => fmt(raw[c] ?? NaN)),
          row(
            `(a) raw ONNX session, best batch (${best.size}) — the limit`,
            () => fmt(best.textsPerSec),
          ),
        ]
        : []),
      row("(b) naive server", (c) => fmt(naive(c)?.textsPerSec ?? NaN)),
      row("(c) our server", (c) => fmt(ours(c)?.textsPerSec ?? NaN)),
      ...Object.keys(e.servers).filter((n) => n !== "ours" && n !== "naive").map((n) =>
        row(`(c') our server, ${n}`, (c) => fmt(e.servers[n][length][c]?.textsPerSec ?? NaN))
      ),
      ...(llama
        ? [
          row(
            `(d) llama.cpp, GGUF ${e.llama!.peer.type}`,
            (c) => fmt(llama[c]?.textsPerSec ?? NaN),
          ),
        ]
        : []),
      row("(c)/(a) limit", (c) => pct((ours(c)?.textsPerSec ?? NaN) / best.textsPerSec)),
      row("(c)/(b) naive", (c) => ratio(ours(c)?.textsPerSec ?? NaN, naive(c)?.textsPerSec ?? NaN)),
      ...(llama
        ? [
          row(
            "(c)/(d) llama.cpp",
            (c) => ratio(ours(c)?.textsPerSec ?? NaN, llama[c]?.textsPerSec ?? NaN),
          ),
        ]
        : []),
      "",
      `Raw session texts/s by batch size: ${
        Object.entries(raw).map(([b, t]) => `${b}: ${fmt(t)}`).join(", ")
      }.`,
      "",
      "| server, c | latency p50 / p95 ms | inputs per batch | inputs waiting | model busy | cores: server / client / others |",
      "| --- | ---: | ---: | ---: | ---: | ---: |",
      ...Object.keys(details).flatMap((name) =>
        cs.map((c) => {
          const r = details[name][length]?.[c];
          return r
            ? `| ${name}, ${c} | ${fmt(r.latencyP50Ms, 2)} / ${fmt(r.latencyP95Ms, 2)} | ${
              fmt(r.meanBatch)
            } | ${fmt(r.meanQueue ?? NaN)} | ${pct(r.sessionBusy)} | ${fmt(r.serverCores, 2)} / ${
              fmt(r.clientCores, 2)
            } / ${fmt(r.otherCores, 2)} |`
            : `| ${name}, ${c} | – | – | – | – | – |`;
        })
      ),
      "",
    );
  }
  out.push(
    `Tokenizer cost (measured in the bench process): ${fmt(e.tokenizeMsPerText.short, 3)} ms ` +
      `per short text, ${fmt(e.tokenizeMsPerText.long, 3)} ms per long text.`,
    "",
    ...embeddingPeer(e),
  );
  return out;
}

/** What the llama.cpp rows of the embeddings part ran, or why there are none. */
function embeddingPeer(e: EmbeddingResults): string[] {
  const llama = e.llama;
  if (!llama) {
    return [
      "llama.cpp rows: not measured in this run (no llama-server build; see " +
      "`bench/build_llama_server.sh`).",
      "",
    ];
  }
  const p = llama.peer;
  return [
    `(d) is llama.cpp's \`llama-server\` (\`${p.binary}\`, built by ` +
    "`bench/build_llama_server.sh`) on the same weights written as GGUF " +
    `${p.type} by our writer (\`fixtures/generated_models/bert_gguf.ts\`, llama.cpp's \`bert\` ` +
    `architecture), \`--embedding --pooling ${p.pooling}\` \`-t ${p.threads}\` ` +
    `\`-np ${p.parallel}\` \`-b ${p.ubatch}\` \`-ub ${p.ubatch}\`, driven over its ` +
    "OpenAI-compatible `/v1/embeddings` by the same client, with the same texts, in the same " +
    "rounds as ours (the order rotates). It counts the same tokens: its `/tokenize` gives our " +
    `tokenizer's ids for ${p.sameIds} of ${p.inputs} bench texts (mean ` +
    `${fmt(p.tokens.short, 1)} / ${fmt(p.tokens.long, 1)} tokens per short / long text vs ` +
    `${fmt(e.tokens.short, 1)} / ${fmt(e.tokens.long, 1)} ours). Its vectors are L2-normalized ` +
    "means, as ours. It has no session counters, so its batch, queue and busy columns are empty.",
    "",
  ];
}

function chatSection(c: ChatResults, steps?: DecodeStepRow[]): string[] {
  const out = [
    "## 2. Chat streaming",
    "",
    `Closed-loop SSE streams (\`/v1/chat/completions\`, \`stream: true\`, max_tokens ` +
    `${c.maxTokens}, temperature 0, no stop strings, ~${fmt(c.promptTokens, 0)}-token prompts). ` +
    "Steady state: the streams' first requests are spread over one request time, as " +
    "independent users arrive, then measured over a fixed window. Burst: every stream sends " +
    "one request at the same moment. Batching off = the same engine with `maxSequences: 1`. " +
    "TTFT = time to the first chunk with content; ITL = time between content chunks. Seqs per " +
    "decode step and seqs waiting come from the engine's `stats()`; step ms and model busy are " +
    "timed inside the model worker.",
    "",
    "| batching | streams | tokens/s | TTFT p50 / p95 ms | burst TTFT p50 / p95 ms | ITL p50 / p95 ms | seqs per decode step | step ms | seqs waiting | model busy | others' cores |",
    "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
  ];
  const label = { on: "on", off: "off", llama: "llama.cpp" };
  for (const mode of ["on", "off", "llama"] as const) {
    for (const n of c.streams) {
      const r = c.modes[mode]?.[n];
      if (!r) continue;
      out.push(
        `| ${label[mode]} | ${n} | ${fmt(r.tokensPerSec)} | ${fmt(r.ttftP50Ms, 0)} / ${
          fmt(r.ttftP95Ms, 0)
        } | ${fmt(r.burstTtftP50Ms, 0)} / ${fmt(r.burstTtftP95Ms, 0)} | ${fmt(r.itlP50Ms)} / ${
          fmt(r.itlP95Ms)
        } | ${fmt(r.decodeBatch)} | ${fmt(r.decodeStepMs)} | ${fmt(r.meanQueue ?? NaN)} | ${
          pct(r.sessionBusy)
        } | ${fmt(r.otherCores, 2)} |`,
      );
    }
  }
  const on = c.modes.on;
  const off = c.modes.off;
  const ratios: string[] = [];
  if (on[1] && on[16]) {
    ratios.push(
      `- tokens/s, 16 streams vs 1: batching on ${ratio(on[16].tokensPerSec, on[1].tokensPerSec)}` +
        (off[1] && off[16] ? `, off ${ratio(off[16].tokensPerSec, off[1].tokensPerSec)}` : ""),
      `- TTFT p50, 16 streams vs 1: batching on ${ratio(on[16].ttftP50Ms, on[1].ttftP50Ms)} ` +
        `(burst ${ratio(on[16].burstTtftP50Ms, on[1].ttftP50Ms)})` +
        (off[1] && off[16] ? `, off ${ratio(off[16].ttftP50Ms, off[1].ttftP50Ms)}` : ""),
    );
  }
  if (on[16] && off[16]) {
    ratios.push(
      `- at 16 streams, batching on vs off: tokens/s ${
        ratio(on[16].tokensPerSec, off[16].tokensPerSec)
      }, TTFT p50 ${ratio(on[16].ttftP50Ms, off[16].ttftP50Ms)}`,
    );
  }
  if (ratios.length > 0) out.push("", ...ratios);
  out.push("", ...llamaSection(c));
  if (steps && steps.length > 0) {
    out.push(
      "### Decode step profile (raw session, in process)",
      "",
      "One decode step (one new token per sequence) by batch size and cached tokens, beside the " +
        "size of the `present` cache the step returns and the time one JavaScript copy of that " +
        "many bytes takes (onnxruntime-node copies every output into JavaScript memory).",
      "",
      "| batch | cached tokens | step ms | ms per token | cache out MiB | one copy ms |",
      "| ---: | ---: | ---: | ---: | ---: | ---: |",
      ...steps.map((s) =>
        `| ${s.batch} | ${s.past} | ${fmt(s.stepMs)} | ${fmt(s.stepMs / s.batch, 2)} | ${
          fmt(s.cacheMiB)
        } | ${fmt(s.copyMs)} |`
      ),
      "",
    );
  }
  return out;
}

/** Ours (batching on) beside llama.cpp, from the same run. */
function llamaSection(c: ChatResults): string[] {
  const peer = c.llama;
  if (!peer) {
    return [
      "llama.cpp rows: not measured in this run (no llama-server build; see " +
      "`bench/build_llama_server.sh`).",
      "",
    ];
  }
  const llama = c.modes.llama ?? {};
  const rows = c.streams.filter((n) => c.modes.on[n] && llama[n]).map((n) => {
    const o = c.modes.on[n];
    const l = llama[n];
    return `| ${n} | ${fmt(o.tokensPerSec)} | ${fmt(l.tokensPerSec)} | ${
      ratio(l.tokensPerSec, o.tokensPerSec)
    } | ${fmt(o.itlP50Ms)} / ${fmt(l.itlP50Ms)} | ${fmt(o.ttftP50Ms, 0)} / ${
      fmt(l.ttftP50Ms, 0)
    } | ${fmt(o.burstTtftP50Ms, 0)} / ${fmt(l.burstTtftP50Ms, 0)} | ${fmt(o.serverCores, 2)} / ${
      fmt(l.serverCores, 2)
    } |`;
  });
  return [
    "### Side by side with llama.cpp",
    "",
    `llama.cpp's \`llama-server\` (\`${peer.binary}\`, built by \`bench/build_llama_server.sh\` ` +
    `from the source the npm package \`node-llama-cpp\` ships) on the same weights written ` +
    `as GGUF ${peer.type} by our writer (\`fixtures/generated_models/llama_gguf.ts\`), \`-t ${peer.threads}\` ` +
    `\`-np ${peer.parallel}\` \`-cb\`, measured in the same rounds as ours (the order rotates). It ` +
    "gets the prompt token ids our chat template and tokenizer make (`/completion` with ids; " +
    `median ${fmt(peer.promptTokens, 0)} prompt tokens counted by llama.cpp vs ` +
    `${fmt(c.promptTokens, 0)} by our server), \`n_predict\` = max_tokens, \`ignore_eos\`, ` +
    "`cache_prompt: false`, greedy. Ours: batching on, prefix cache off (like for like), the " +
    "dtype in Settings.",
    "",
    "| streams | ours tok/s | llama.cpp tok/s | llama.cpp / ours | ITL p50 ours / llama.cpp ms | TTFT p50 ours / llama.cpp ms | burst TTFT p50 ours / llama.cpp ms | server cores ours / llama.cpp |",
    "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ...rows,
    "",
  ];
}

function memorySection(memory: MemoryResults): string[] {
  const row = (r: MemoryResults["embeddings"][number]) =>
    `| ${r.server} | ${fmt(r.loadedMiB, 0)} | ${
      Object.entries(r.peaks).map(([k, v]) => `${k}: ${fmt(v, 0)}`).join("; ")
    } |`;
  return [
    "## 3. Memory (server process RSS, MiB)",
    "",
    "`Deno.memoryUsage().rss` sampled every 50 ms inside each server subprocess during the load.",
    "",
    "| server | after load | peak under load |",
    "| --- | ---: | --- |",
    ...memory.embeddings.map((r) => row({ ...r, server: `embeddings: ${r.server}` })),
    ...memory.chat.map((r) => row({ ...r, server: `chat: ${r.server}` })),
    "",
  ];
}

function httpSection(http: HttpOverheadResults): string[] {
  const rows = http.rows;
  const added = (viaHttp: string, direct: string) =>
    rows[viaHttp] && rows[direct] ? fmt(rows[viaHttp].p50Ms - rows[direct].p50Ms, 3) : "–";
  return [
    "## 4. HTTP overhead (engine that answers instantly)",
    "",
    `${http.requests} sequential requests per variant and repeat; \`bench/_instant_engine.ts\` ` +
    'answers at once (a 384-float vector; one delta "ok"), served by `createEngineApp` + ' +
    "`serveApp` in this process. CPU per call counts client and server (same process).",
    "",
    "| call | p50 ms | p99 ms | CPU µs per call |",
    "| --- | ---: | ---: | ---: |",
    ...HTTP_VARIANTS.filter((v) => rows[v]).map((v) =>
      `| ${v} | ${fmt(rows[v].p50Ms, 3)} | ${fmt(rows[v].p99Ms, 3)} | ${fmt(rows[v].cpuUs, 0)} |`
    ),
    "",
    `Added by our server (p50, HTTP minus direct): embeddings ${
      added("embed: our server, POST /v1/embeddings", "embed: direct engine.embed()")
    } ms, of which the bare transport (Deno.serve + fetch, same body) is ${
      added("embed: bare Deno.serve, canned body", "embed: direct engine.embed()")
    } ms; chat JSON ${
      added("chat: our server, JSON response", "chat: direct engine.generate()")
    } ` +
    `ms; chat SSE ${added("chat: our server, SSE stream", "chat: direct engine.generate()")} ms.`,
    "",
  ];
}

/** A line on how much CPU other processes took during the measured phases. */
function contention(results: BenchResults): string[] {
  const others: number[] = [];
  for (const byLength of Object.values(results.embeddings?.servers ?? {})) {
    for (const byC of Object.values(byLength)) {
      for (const run of Object.values(byC)) others.push(run.otherCores);
    }
  }
  for (const byN of Object.values(results.chat?.modes ?? {})) {
    for (const run of Object.values(byN)) others.push(run.otherCores);
  }
  const known = others.filter((v) => Number.isFinite(v));
  if (known.length === 0) return [];
  const mean = known.reduce((a, b) => a + b, 0) / known.length;
  const busy = known.filter((v) => v >= 0.5).length;
  return [
    ">",
    `> In this run other processes used ${fmt(mean, 2)} of the ${results.machine.cores} cores on ` +
    `average during the measured server phases (median per phase; ${busy} of ${known.length} ` +
    `phases at 0.5 cores or more; see the "others" columns).`,
  ];
}

/** A share as a percentage. */
export function pct(share: number): string {
  return Number.isFinite(share) ? `${(share * 100).toFixed(0)}%` : "–";
}

/** The line after which RESULTS.md holds sections written by hand, which a new report keeps. */
export const HAND_WRITTEN_MARKER =
  "<!-- Sections below are written by hand (other benchmarks, analyses); deno task bench keeps them. -->";

/**
 * A new report with the hand-written sections of the previous RESULTS.md (from
 * {@link HAND_WRITTEN_MARKER} on) appended, so a full run does not drop them.
 */
export function withHandWritten(report: string, previous: string | null): string {
  const at = previous?.indexOf(HAND_WRITTEN_MARKER) ?? -1;
  if (at < 0) return report;
  return `${report.trimEnd()}\n\n${previous!.slice(at)}`;
}

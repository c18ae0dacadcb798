/**
 * The "where the time goes" section of RESULTS.md: for every target not met, what the profile
 * numbers of the same run say about the cause, and what would close the gap.
 *
 * @module
 */

import { fmt, ratio } from "./_stats.ts";
import type { BenchResults, TargetStatus } from "./_report.ts";
import { bestRaw, type LengthName } from "./embeddings.ts";

const SYNC_RUN = "onnxruntime-node runs inference synchronously on the calling JavaScript thread " +
  "(`onnxruntime-node/dist/backend.js`, `OnnxruntimeSessionHandler.run`: a `setImmediate` " +
  "around the native `binding.run`), so while a session runs, the server's event loop is " +
  "blocked: no socket is read or written, no request parsed, no token streamed";

/** Markdown paragraphs explaining the gaps of the targets not met. */
export function explainGaps(results: BenchResults, targets: TargetStatus[]): string[] {
  const out = ["## Where the time goes", ""];
  const e = results.embeddings;
  const missed = (prefix: string) => targets.some((t) => t.name.startsWith(prefix) && !t.met);
  if (e?.concurrencies.includes(32)) {
    const lengths = (["short", "long"] as LengthName[]).filter((l) => e.servers.ours[l][32]);
    if (
      missed("Embeddings") &&
      lengths.some((l) =>
        targets.some((t) => !t.met && t.name.includes(`${l} inputs`) && t.name.includes("raw"))
      )
    ) {
      out.push("### Embeddings: ours vs the raw session", "");
      for (const length of lengths) {
        const r = e.servers.ours[length][32];
        const best = bestRaw(e.raw[length]);
        out.push(
          `- ${length}, 32 clients: ${fmt(r.textsPerSec)} texts/s vs the raw ${
            fmt(best.textsPerSec)
          } (batch ${best.size}). The session was busy ${pctOf(r.sessionBusy)} of the window ` +
            `with ${fmt(r.meanBatch)} rows per run, ${fmt(r.sessionMsPerText, 3)} ms of session ` +
            `time per text (raw best: ${fmt(1000 / best.textsPerSec, 3)} ms). The server used ` +
            `${fmt(r.serverCores, 2)} cores, the client ${fmt(r.clientCores, 2)}, of ` +
            `${results.machine.cores}; the server's event loop was late by ` +
            `${fmt(r.loopLagP50Ms)} ms p50 / ${fmt(r.loopLagP99Ms)} ms p99.`,
        );
      }
      const naive1 = e.servers.naive.short[1]?.textsPerSec ?? NaN;
      const ours1 = e.servers.ours.short[1]?.textsPerSec ?? NaN;
      const long = e.servers.ours.long[32];
      const longBest = bestRaw(e.raw.long);
      out.push(
        "",
        `1. **Inference blocks the event loop.** ${SYNC_RUN}. All the JavaScript work of a ` +
          "request (HTTP, JSON parsing, tokenization, pooling, JSON encoding of 384 floats; " +
          "about 0.3 ms of CPU per request for the HTTP part alone, section 4) is therefore " +
          "serialized with the session runs instead of overlapping them: the session idles " +
          "while JavaScript runs, and requests wait unread while the session runs. Short inputs " +
          "suffer most, their session time per text being smallest. *Fix:* run each model's " +
          "session, with its batcher / scheduler, in a Worker and keep HTTP on the main thread " +
          "(checked here: onnxruntime-node 1.30 loads and runs inside a Deno Worker, and the " +
          "main thread's timers keep firing meanwhile).",
        `2. **The batcher waits after every batch.** \`EmbeddingBatcher.#loop\` ` +
          "(`src/engine/embedding/batcher.ts`) calls `#gather()` before every batch, so after " +
          "each run it waits up to `maxWaitMs` (2 ms) for a full batch of 64 while the session " +
          "idles; the module doc says it only waits when idle. With one client every request " +
          `pays that wait: ours ${fmt(ours1)} vs naive ${fmt(naive1)} texts/s at c=1 (short). ` +
          "Under load the wait is, today, also the only time the blocked event loop reads new " +
          "requests, so dropping it alone may shrink batches: change it together with item 1 " +
          "(then `maxWaitMs: 0` on CPU: batches form from what arrives during a run).",
        `3. **Batch size on CPU.** For long inputs the raw session did best at batch ` +
          `${longBest.size} (${fmt(longBest.textsPerSec)} texts/s; ${
            fmt(e.raw.long[32] ?? NaN)
          } at batch 32): bigger batches of long inputs cost more per text on 2 cores. Our ` +
          `server ran ${fmt(long?.meanBatch ?? NaN)} rows per run at 32 clients, since the ` +
          "default `maxBatchTokens` (16384) admits up to 64 long inputs; larger batches also " +
          "raise the server's peak memory (section 3; ONNX Runtime's CPU arena grows to the " +
          "largest batch). *Fix:* a CPU default near the raw optimum (best batch × input " +
          "length; in quieter runs on this machine 2 to 8 long inputs per batch did best, " +
          "about 1600 padded tokens).",
        "4. **The client shares the machine.** The load generator's fetch and JSON work runs " +
          "on the same 2 cores (client cores in the tables), and other developers' processes " +
          "took the 'others' share; the raw limit had neither.",
        "",
      );
    }
    const naiveMissed = lengths.filter((l) =>
      targets.some((t) => !t.met && t.name.includes(`${l} inputs`) && t.name.includes("naive"))
    );
    if (naiveMissed.length > 0) {
      out.push("### Embeddings: ours vs the naive server", "");
      let aboveLimit = true;
      for (const length of naiveMissed) {
        const naive = e.servers.naive[length][32];
        const best = bestRaw(e.raw[length]);
        const batch1 = e.raw[length][1];
        if (3 * naive.textsPerSec < best.textsPerSec) aboveLimit = false;
        out.push(
          `- ${length}: the naive server reaches ${fmt(naive.textsPerSec)} texts/s at 32 ` +
            `clients, ${pctOf(naive.textsPerSec / best.textsPerSec)} of the raw limit; 3x the ` +
            `naive server would be ${fmt(3 * naive.textsPerSec)} texts/s, ` +
            `${ratio(3 * naive.textsPerSec, best.textsPerSec)} the raw limit. Batching gains ` +
            `the raw session ${ratio(best.textsPerSec, batch1)} (batch 1: ${fmt(batch1)}, best: ` +
            `${fmt(best.textsPerSec)} texts/s).`,
        );
      }
      out.push(
        "",
        aboveLimit
          ? "On a 2-core CPU a batch-1 run already keeps both cores busy, so batching cannot " +
            "triple throughput: 3x the naive server lies above what the hardware does even " +
            "with no server at all. The 3x target presumes a device where batch 1 leaves most " +
            "of the compute idle (a GPU); on this machine the meaningful bound is the raw " +
            "limit. `deno task bench --device webgpu` on a GPU machine measures that case."
          : "3x the naive server is below the raw limit here, so the missing part is ours: " +
            "see the causes listed under 'ours vs the raw session'.",
        "",
      );
    }
  }
  const c = results.chat;
  const on = c?.modes.on;
  if (c && on?.[1] && on[16] && missed("Chat")) {
    const steps = results.decodeSteps ?? [];
    const step = (batch: number, past: number) =>
      steps.find((s) => s.batch === batch && s.past === past);
    const pasts = [...new Set(steps.map((s) => s.past))].sort((a, b) => a - b);
    const short = pasts[0];
    const long = pasts[pasts.length - 1];
    out.push(
      "### Chat",
      "",
      `- Measured: one stream decodes at ${fmt(on[1].decodeStepMs)} ms per step; 16 streams ` +
        `at ${fmt(on[16].decodeStepMs)} ms per step for ${fmt(on[16].decodeBatch)} sequences ` +
        `(about ${fmt(on[16].decodePast, 0)} cached tokens each), prefills took ` +
        `${pctOf(on[16].prefillShare)} of session time, and the server's event loop was late ` +
        `by ${fmt(on[16].loopLagP50Ms)} ms p50 / ${fmt(on[16].loopLagP99Ms)} ms p99.`,
    );
    if (step(16, short) && step(16, long) && step(1, short)) {
      out.push(
        `- Raw decode steps (table above): batch 16 costs ${fmt(step(16, short)!.stepMs)} ms ` +
          `with ${short} cached tokens but ${fmt(step(16, long)!.stepMs)} ms with ${long}; ` +
          `batch 1 costs ${fmt(step(1, short)!.stepMs)} ms. The weights' compute amortizes ` +
          "over the batch; the KV cache does not: every step onnxruntime-node copies each " +
          "`present` output (the whole cache, one token longer) into a new JavaScript array, " +
          "the next step hands it back as `past`, and the graph's Concat copies it again.",
      );
    }
    if (targets.some((t) => !t.met && t.name.includes("tokens/s"))) {
      out.push(
        "- **Tokens/s at 16 streams.** The per-step cost grows with batch × cache length " +
          "(cache traffic), and sampling + detokenizing 16 rows adds ~2 ms per step on the " +
          "main thread (see `deno bench bench/sampler_bench.ts`: greedy ~0.1 ms per row at " +
          "vocab 49152; top-p ~1 ms per row). *Fix:* keep the KV cache in native memory across " +
          "steps: pass preallocated output tensors (`session.run(feeds, fetches)`) or use IO " +
          "binding, or export the decoder with a shared past/present buffer (ORT's " +
          "GroupQueryAttention); and avoid rebuilding the cache when the batch changes " +
          "(`assembleCache` in `src/engine/chat/kv_cache.ts` copies the whole cache: ~15 ms at " +
          "16 × 128 tokens, see sampler_bench).",
      );
    }
    if (targets.some((t) => !t.met && t.name.includes("TTFT") && t.name.includes("steady"))) {
      out.push(
        `- **TTFT at 16 streams, steady.** A request that arrives while 15 others decode ` +
          `needs several event-loop turns (accept, read, parse, route, submit) before the ` +
          `scheduler sees it. ${SYNC_RUN}; each turn can therefore wait for a whole decode step ` +
          `(${fmt(on[16].decodeStepMs)} ms). Then it waits for the step in progress, its own ` +
          `prefill, and the cache rebuild (\`assembleCache\`). Requests that arrive during the ` +
          `same stall are admitted together and then finish together (same max_tokens), so ` +
          `arrivals clump. *Fix:* run the session in a Worker so HTTP never waits for a step, and ` +
          `on CPU prefill newcomers in small groups so one arrival never waits for many prompts.`,
      );
    }
    if (targets.some((t) => !t.met && t.name.includes("burst"))) {
      out.push(
        `- **TTFT at 16 streams, burst.** All 16 prompts (~${fmt(c.promptTokens, 0)} tokens ` +
          `each) are prefilled as one batch; prefill is compute-bound on a CPU, so the batch ` +
          `takes about 16 single prefills, and every request's first token waits for the whole ` +
          `batch (burst TTFT p50 ${fmt(on[16].burstTtftP50Ms, 0)} ms vs ` +
          `${fmt(on[1].ttftP50Ms, 0)} ms alone). Smaller prefill groups would lower the median ` +
          `(first groups answer early) but not the p95; under 3x at 16 simultaneous prompts ` +
          `needs a device where a batch of prefills costs about one (a GPU).`,
      );
    }
    out.push("");
  }
  if (out.length === 2) out.push("Every target measured in this run was met.", "");
  return out;
}

function pctOf(share: number): string {
  return Number.isFinite(share) ? `${(share * 100).toFixed(0)}%` : "–";
}

/**
 * What the HTTP layer adds: an instantly answering engine ({@link InstantEngine}) called in
 * process vs through our server (`createEngineApp` + `serveApp`) over loopback HTTP, one request
 * at a time, plus a bare `Deno.serve` returning a canned body of the same size (the transport
 * floor). Client and server share this process, so CPU per request covers both sides.
 *
 * @module
 */

import { createEngineApp } from "../src/server/engine_app.ts";
import { serveApp } from "../src/http/serve.ts";
import type { BenchContext } from "./_context.ts";
import { InstantEngine } from "./_instant_engine.ts";
import { cpuSeconds } from "./_proc.ts";
import { medianOfFields, percentile } from "./_stats.ts";

/** Latency of one way of making a call (medians over repeats in results). */
export interface LatencyRow {
  p50Ms: number;
  p99Ms: number;
  /** CPU time per call, client and server together, microseconds. */
  cpuUs: number;
}

/** What the HTTP overhead part measured, by variant name. */
export interface HttpOverheadResults {
  requests: number;
  rows: Record<string, LatencyRow>;
}

/** The variants, in table order; `direct` ones call the engine in process. */
export const HTTP_VARIANTS = [
  "embed: direct engine.embed()",
  "embed: bare Deno.serve, canned body",
  "embed: our server, POST /v1/embeddings",
  "chat: direct engine.generate()",
  "chat: our server, JSON response",
  "chat: our server, SSE stream",
] as const;

/**
 * Runs the HTTP overhead comparison.
 *
 * @example
 * ```ts
 * const results = await runHttpOverhead(ctx);
 * ```
 */
export async function runHttpOverhead(ctx: BenchContext): Promise<HttpOverheadResults> {
  const embedder = new InstantEngine("instant-embed", "embedding");
  const chatter = new InstantEngine("instant-chat", "chat");
  const served = serveApp(createEngineApp({ engines: [embedder, chatter] }), { port: 0 });
  const base = `${served.url}/v1`;
  const cannedBody = await (await embedRequest(base)).text();
  const bare = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (req) => {
      await req.arrayBuffer();
      return new Response(cannedBody, { headers: { "content-type": "application/json" } });
    },
  );
  const bareUrl = `http://127.0.0.1:${bare.addr.port}/v1/embeddings`;
  const calls: Record<typeof HTTP_VARIANTS[number], () => Promise<unknown>> = {
    "embed: direct engine.embed()": () => embedder.embed(["hello world"]),
    "embed: bare Deno.serve, canned body": async () => {
      const res = await fetch(bareUrl, { method: "POST", body: EMBED_BODY });
      return await res.arrayBuffer();
    },
    "embed: our server, POST /v1/embeddings": async () => {
      return await (await embedRequest(base)).arrayBuffer();
    },
    "chat: direct engine.generate()": async () => {
      const stream = await chatter.generate();
      let text = "";
      for await (const event of stream) if (event.type === "delta") text += event.text;
      return text;
    },
    "chat: our server, JSON response": async () => {
      return await (await chatRequest(base, false)).arrayBuffer();
    },
    "chat: our server, SSE stream": async () => {
      return await (await chatRequest(base, true)).arrayBuffer();
    },
  };
  const runs: Record<string, LatencyRow[]> = {};
  try {
    for (const variant of HTTP_VARIANTS) await time(calls[variant], 100); // warm-up
    for (let r = 0; r < ctx.repeats; r++) {
      for (const variant of HTTP_VARIANTS) {
        (runs[variant] ??= []).push(await time(calls[variant], ctx.httpRequests));
      }
      ctx.log(
        `  [${r + 1}/${ctx.repeats}] http overhead: ` +
          HTTP_VARIANTS.map((v) => `${v.split(":")[0]} ${runs[v][r].p50Ms.toFixed(3)} ms`).join(
            ", ",
          ),
      );
    }
  } finally {
    await served.shutdown();
    await bare.shutdown();
  }
  return {
    requests: ctx.httpRequests,
    rows: Object.fromEntries(Object.entries(runs).map(([k, v]) => [k, medianOfFields(v)])),
  };
}

const EMBED_BODY = JSON.stringify({ model: "instant-embed", input: "hello world" });

async function embedRequest(base: string): Promise<Response> {
  const res = await fetch(`${base}/embeddings`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: EMBED_BODY,
  });
  if (!res.ok) throw new Error(`instant embeddings answered ${res.status}: ${await res.text()}`);
  return res;
}

async function chatRequest(base: string, stream: boolean): Promise<Response> {
  const res = await fetch(`${base}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      model: "instant-chat",
      messages: [{ role: "user", content: "hello" }],
      stream,
    }),
  });
  if (!res.ok) throw new Error(`instant chat answered ${res.status}: ${await res.text()}`);
  return res;
}

/** Calls `call` `count` times in a row; latency percentiles and CPU per call. */
async function time(call: () => Promise<unknown>, count: number): Promise<LatencyRow> {
  const latencies: number[] = [];
  const cpuBefore = cpuSeconds();
  for (let i = 0; i < count; i++) {
    const start = performance.now();
    await call();
    latencies.push(performance.now() - start);
  }
  return {
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    cpuUs: ((cpuSeconds() - cpuBefore) / count) * 1e6,
  };
}

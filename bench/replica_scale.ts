/**
 * What grows with the number of gateway replicas and engines (issue 24): measures each part on
 * this machine, so the estimate in RESULTS.md ("Control plane at 10/100 replicas and 1,000
 * engines") rests on numbers, not guesses.
 *
 * 1. `schedule`: the dispatcher's work per request with 1, 100 and 1,000 backends serving one
 *    model (the worst case: every backend is a candidate), instant in-process transport.
 * 2. `probe`: one health probe's CPU, on the prober and on the engine, with a new connection per
 *    probe (engines close idle connections after 5 s, the probe interval) and with a reused one.
 * 3. `postgres`: one change-counter poll (what every replica does every 500 ms), a full engine
 *    listing of 1,000 rows (what every replica reads after any change), and the per-answer usage
 *    upsert (all on one key/model/day row, and on distinct rows), on a throwaway PostgreSQL.
 * 4. `redis`: the coordinator calls one request makes (a key with rpm+tpm, a backend with
 *    max_concurrency, shared circuits) counted through the real gateway app, and the latency and
 *    saturated rate of the rate-limit script on a throwaway redis-server.
 * 5. `metrics`: `/metrics` series, bytes and render time with 1,000 backends that all served.
 *
 * Run: `deno run -A bench/replica_scale.ts [--parts schedule,probe,postgres,redis,metrics]`
 * (PostgreSQL and Redis parts are skipped, saying why, where the binaries are missing). Prints
 * Markdown; the analysis in RESULTS.md is written by hand from it.
 *
 * @module
 */

import { parseArgs } from "node:util";
import { setupLogger } from "../src/core/logging.ts";
import { Dispatcher } from "../src/gateway/dispatcher.ts";
import { createGatewayApp } from "../src/gateway/gateway_app.ts";
import { HealthChecker } from "../src/gateway/health_checker.ts";
import type { BackendTransport } from "../src/gateway/transport.ts";
import type { Coordinator } from "../src/coord/coordinator.ts";
import { RedisCoordinator } from "../src/coord/redis_coordinator.ts";
import { openStateStore } from "../src/state/open_state_store.ts";
import { findRedisServer, startRedis } from "../tests/_helpers/redis_server.ts";
import { freshPostgresUrl, POSTGRES_MISSING } from "../tests/state/_postgres.ts";
import { describeMachine } from "./_machine.ts";
import { cpuSeconds } from "./_proc.ts";
import { median } from "./_stats.ts";

setupLogger("error");
const { values } = parseArgs({
  args: Deno.args,
  options: { parts: { type: "string", default: "schedule,probe,postgres,redis,metrics" } },
});
const PARTS = new Set(values.parts!.split(","));

const ANSWER = JSON.stringify({
  id: "x",
  object: "chat.completion",
  created: 0,
  model: "m",
  choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }],
  usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
});
const instant: BackendTransport = {
  kind: "in_process",
  send: () =>
    Promise.resolve(new Response(ANSWER, { headers: { "content-type": "application/json" } })),
  sendInit: () =>
    Promise.resolve(new Response(ANSWER, { headers: { "content-type": "application/json" } })),
};
const BODY = { model: "m", messages: [{ role: "user", content: "hi" }] };

function dispatcherWith(n: number, options: { coordinator?: Coordinator } = {}): Dispatcher {
  const dispatcher = new Dispatcher({ maxQueue: 100_000, ...options });
  for (let i = 0; i < n; i++) {
    dispatcher.addBackend(
      {
        id: `b${i}`,
        baseUrl: `http://10.0.${i >> 8}.${i & 255}:8001/v1`,
        kind: "llm",
        models: ["m"],
      },
      { transport: instant },
    ).setHealth("healthy");
  }
  return dispatcher;
}

const fmt = (x: number, digits = 1) => Number.isFinite(x) ? x.toFixed(digits) : "n/a";

// ---------------------------------------------------------------------------------------------
// 1. Scheduling work per request.

async function scheduleRound(dispatcher: Dispatcher, requests: number, atOnce: number) {
  const headers = new Headers();
  const cpu0 = cpuSeconds();
  const t0 = performance.now();
  for (let sent = 0; sent < requests; sent += atOnce) {
    await Promise.all(
      Array.from({ length: Math.min(atOnce, requests - sent) }, async () => {
        const res = await dispatcher.dispatch({ kind: "chat", model: "m", body: BODY, headers });
        await res.arrayBuffer();
      }),
    );
  }
  return {
    wallUs: (performance.now() - t0) * 1000 / requests,
    cpuUs: (cpuSeconds() - cpu0) * 1e6 / requests,
  };
}

async function schedulePart(): Promise<void> {
  const sizes = [1, 100, 1000];
  const dispatchers = new Map(sizes.map((n) => [n, dispatcherWith(n)]));
  const samples = new Map<string, number[]>();
  for (const n of sizes) await scheduleRound(dispatchers.get(n)!, 2000, 64); // warm-up
  for (let round = 0; round < 7; round++) {
    for (const n of sizes) { // interleaved, so load on the shared machine hits all alike
      for (const atOnce of [1, 64]) {
        const r = await scheduleRound(dispatchers.get(n)!, 3000, atOnce);
        const key = `${n}/${atOnce}`;
        samples.set(key, [...(samples.get(key) ?? []), r.cpuUs]);
      }
    }
  }
  for (const d of dispatchers.values()) d.close();
  console.log("\n### schedule: dispatcher CPU per request (µs, median of 7 rounds of 3,000)\n");
  console.log("| backends (one model) | 1 at a time | 64 at once |");
  console.log("| -------------------: | ----------: | ---------: |");
  for (const n of sizes) {
    console.log(
      `| ${n} | ${fmt(median(samples.get(`${n}/1`)!))} | ${fmt(median(samples.get(`${n}/64`)!))} |`,
    );
  }
}

// ---------------------------------------------------------------------------------------------
// 2. Health probes: CPU per probe on both sides.

const ENGINE_STUB = `
import process from "node:process";
const body = JSON.stringify({ status: "ok", models: [{ id: "m", state: "ready" }] });
const close = Deno.args[0] === "close";
Deno.serve({ hostname: "0.0.0.0", port: 0, onListen: ({ port }) => console.log(port) }, (req) => {
  if (new URL(req.url).pathname === "/cpu") {
    const { user, system } = process.cpuUsage();
    return Response.json({ seconds: (user + system) / 1e6 });
  }
  return new Response(body, { headers: { "content-type": "application/json", ...(close ? { connection: "close" } : {}) } });
});`;

async function startStub(mode: "close" | "keep") {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["eval", ENGINE_STUB, mode],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (!text.includes("\n")) text += (await reader.read()).value ?? "";
  reader.releaseLock();
  child.stdout.cancel().catch(() => {});
  const port = Number(text.trim().split("\n")[0].replace(/\D/g, ""));
  const cpu = async () =>
    (await (await fetch(`http://127.0.0.1:${port}/cpu`)).json()).seconds as number;
  return {
    port,
    cpu,
    stop: async () => {
      child.kill();
      await child.status;
    },
  };
}

async function probePart(): Promise<void> {
  const N = 1000;
  console.log(`\n### probe: ${N} backends probed per round (GET /health), median of 7 rounds\n`);
  console.log("| connection | round wall ms | prober CPU µs/probe | engine CPU µs/probe |");
  console.log("| ---------- | ------------: | ------------------: | ------------------: |");
  for (const mode of ["close", "keep"] as const) {
    const stub = await startStub(mode);
    const dispatcher = new Dispatcher();
    // Distinct loopback addresses: one connection pool per "engine", as with real hosts.
    for (let i = 0; i < N; i++) {
      const host = mode === "close"
        ? `127.0.${1 + Math.floor(i / 250)}.${1 + (i % 250)}`
        : "127.0.0.1";
      dispatcher.addBackend({
        id: `e${i}`,
        baseUrl: `http://${host}:${stub.port}/v1`,
        kind: "llm",
        models: ["m"],
      });
    }
    const checker = new HealthChecker(() => dispatcher.backends(), { timeoutMs: 10_000 });
    await checker.checkAll(); // warm-up (and the keep-alive pool)
    const wall: number[] = [];
    const mine: number[] = [];
    const theirs: number[] = [];
    for (let round = 0; round < 7; round++) {
      const s0 = await stub.cpu();
      const c0 = cpuSeconds();
      const t0 = performance.now();
      await checker.checkAll();
      wall.push(performance.now() - t0);
      mine.push((cpuSeconds() - c0) * 1e6 / N);
      theirs.push((await stub.cpu() - s0) * 1e6 / N);
    }
    const unhealthy = dispatcher.backends().filter((b) => b.health !== "healthy").length;
    if (unhealthy > 0) console.log(`(${unhealthy} of ${N} probes failed in mode ${mode})`);
    await checker.stop();
    dispatcher.close();
    await stub.stop();
    const label = mode === "close" ? "new per probe" : "kept alive";
    console.log(
      `| ${label} | ${fmt(median(wall))} | ${fmt(median(mine))} | ${fmt(median(theirs))} |`,
    );
  }
}

// ---------------------------------------------------------------------------------------------
// 3. PostgreSQL: polls, listings, usage upserts.

async function timed(n: number, f: (i: number) => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await f(i);
    out.push(performance.now() - t0);
  }
  return out;
}

/** Operations per second with `clients` loops calling `f` for `ms`. */
async function rate(clients: number, ms: number, f: (i: number) => Promise<unknown>) {
  const end = performance.now() + ms;
  let done = 0;
  const t0 = performance.now();
  await Promise.all(Array.from({ length: clients }, async (_, c) => {
    let i = c * 1_000_000;
    while (performance.now() < end) {
      await f(i++);
      done++;
    }
  }));
  return done / ((performance.now() - t0) / 1000);
}

async function postgresPart(): Promise<void> {
  if (POSTGRES_MISSING) {
    console.log(`\n### postgres: skipped (${POSTGRES_MISSING})`);
    return;
  }
  const url = await freshPostgresUrl();
  const store = await openStateStore(url);
  try {
    await store.enginesVersion();
    const poll = await timed(2000, () => store.enginesVersion());
    const pollRate = await rate(16, 3000, () => store.enginesVersion());
    for (let i = 0; i < 1000; i++) {
      await store.putEngine(`engine-${i}`, {
        id: `engine-${i}`,
        kind: "llm",
        baseUrl: `http://svc-engine-${i}.svc-engine:8001/v1`,
        models: ["HuggingFaceTB/SmolLM2-135M-Instruct"],
        maxConcurrency: 8,
      }, null);
    }
    const listing = await timed(30, () => store.listEngines());
    const day = new Date().toISOString().slice(0, 10);
    const usage = (keyId: string) =>
      store.addUsage({
        keyId,
        model: "m",
        day,
        requests: 1,
        promptTokens: 30,
        completionTokens: 100,
      });
    const usageOne = await timed(500, () => usage("key_hot"));
    const hotRate = await rate(16, 3000, () => usage("key_hot"));
    const spreadRate = await rate(16, 3000, (i) => usage(`key_${i % 1000}`));
    console.log(
      "\n### postgres: one PostgreSQL 15 on this machine (fsync off), driver pool of 4\n",
    );
    console.log("| operation | p50 ms (1 client) | saturated ops/s (16 callers) |");
    console.log("| --------- | ----------------: | ---------------------------: |");
    console.log(`| engines change-counter poll | ${fmt(median(poll), 3)} | ${fmt(pollRate, 0)} |`);
    console.log(`| listEngines, 1,000 rows | ${fmt(median(listing), 2)} | — |`);
    console.log(`| usage upsert, one hot row | ${fmt(median(usageOne), 3)} | ${fmt(hotRate, 0)} |`);
    console.log(`| usage upsert, 1,000 rows | — | ${fmt(spreadRate, 0)} |`);
  } finally {
    await store.close();
  }
}

// ---------------------------------------------------------------------------------------------
// 4. Redis: calls per request, then their cost.

/** Counts every coordinator call (and every lease release) by method. */
function counting(inner: Coordinator, counts: Map<string, number>): Coordinator {
  const bump = (name: string) => counts.set(name, (counts.get(name) ?? 0) + 1);
  return new Proxy(inner, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (typeof value !== "function") return value;
      return async (...args: unknown[]) => {
        bump(String(prop));
        const out = await value.apply(target, args);
        if (prop === "acquire" && out) {
          const lease = out as { release(): Promise<void> };
          return { release: () => (bump("lease.release"), lease.release()) };
        }
        return out;
      };
    },
  });
}

async function redisPart(): Promise<void> {
  const binary = findRedisServer();
  if (!binary) {
    console.log("\n### redis: skipped (no redis-server)");
    return;
  }
  const redis = await startRedis(binary);
  const inner = await RedisCoordinator.connect(redis.url, { prefix: `bench${Deno.pid}` });
  const state = await openStateStore("sqlite::memory:");
  try {
    const counts = new Map<string, number>();
    const coordinator = counting(inner, counts);
    const dispatcher = new Dispatcher({ coordinator });
    dispatcher.addBackend(
      {
        id: "e",
        baseUrl: "http://10.0.0.1:8001/v1",
        kind: "llm",
        models: ["m"],
        maxConcurrency: 64,
      },
      { transport: instant },
    ).setHealth("healthy");
    const app = createGatewayApp({
      dispatcher,
      state,
      coordinator,
      adminApiKey: "admin",
      inferenceNeedsKey: true,
    });
    const info = {
      remoteAddr: { transport: "tcp" as const, hostname: "10.1.1.1", port: 1 },
      completed: Promise.resolve(),
    };
    const call = (key: string, path: string, body: unknown) =>
      app(
        new Request(`http://gw${path}`, {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
          body: JSON.stringify(body),
        }),
        info,
      );
    const made = await (await call("admin", "/v1/management/keys", {
      name: "bench",
      scope: "inference",
      rpm: 1_000_000,
      tpm: 1_000_000_000,
    })).json();
    if (typeof made.key !== "string") throw new Error(`no key made: ${JSON.stringify(made)}`);
    const REQUESTS = 300;
    counts.clear();
    for (let i = 0; i < REQUESTS; i++) {
      const res = await call(made.key, "/v1/chat/completions", BODY);
      if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${await res.text()}`);
      await res.arrayBuffer();
    }
    await new Promise((r) => setTimeout(r, 300)); // usage and charges are recorded after the answer
    dispatcher.close();
    console.log(
      `\n### redis: coordinator calls per request (${REQUESTS} sequential requests, one key with rpm+tpm, max_concurrency 64)\n`,
    );
    console.log("| call | per request |");
    console.log("| ---- | ----------: |");
    let total = 0;
    for (const [name, n] of [...counts].sort()) {
      total += n;
      console.log(`| ${name} | ${fmt(n / REQUESTS, 2)} |`);
    }
    console.log(`| **all** | ${fmt(total / REQUESTS, 2)} |`);

    const admit = await timed(2000, (i) => inner.admit(`k${i % 10}`, { rpm: 1e9, tpm: 1e12 }));
    const admitRate = await rate(
      32,
      3000,
      (i) => inner.admit(`k${i % 10}`, { rpm: 1e9, tpm: 1e12 }),
    );
    const slotRate = await rate(32, 3000, async () => {
      const lease = await inner.acquire("backend:bench", 1_000_000);
      await lease?.release();
    });
    console.log(
      "\n| Redis operation | p50 ms (1 caller) | saturated ops/s (32 callers, one client) |",
    );
    console.log(
      "| --------------- | ----------------: | ----------------------------------------: |",
    );
    console.log(`| admit (rate-limit script) | ${fmt(median(admit), 3)} | ${fmt(admitRate, 0)} |`);
    console.log(`| acquire + release a slot | — | ${fmt(slotRate, 0)} pairs |`);
  } finally {
    await inner.close();
    await state.close();
    await redis.stop();
  }
}

// ---------------------------------------------------------------------------------------------
// 5. /metrics with 1,000 backends.

async function metricsPart(): Promise<void> {
  console.log("\n### metrics: GET /metrics after every backend served\n");
  console.log("| backends | series | bytes | render p50 ms |");
  console.log("| -------: | -----: | ----: | ------------: |");
  let breakdown = "";
  for (const n of [1, 100, 1000]) {
    const dispatcher = dispatcherWith(n);
    const app = createGatewayApp({ dispatcher });
    const headers = { "content-type": "application/json" };
    // Enough requests that every backend answers at least one (the latency histograms appear).
    for (let sent = 0; sent < n * 3; sent += 64) {
      await Promise.all(Array.from({ length: 64 }, async () => {
        const res = await app(
          new Request("http://gw/v1/chat/completions", {
            method: "POST",
            headers,
            body: JSON.stringify(BODY),
          }),
        );
        await res.arrayBuffer();
      }));
    }
    let text = "";
    const times = await timed(15, async () => {
      text = await (await app(new Request("http://gw/metrics"))).text();
    });
    const lines = text.split("\n").filter((l) => l !== "" && !l.startsWith("#"));
    const series = lines.length;
    if (n === 1000) {
      const families = new Map<string, number>();
      for (const l of lines) {
        const name = l.split(/[{ ]/)[0].replace(/_(bucket|sum|count)$/, "");
        families.set(name, (families.get(name) ?? 0) + 1);
      }
      breakdown = [...families].sort((a, b) => b[1] - a[1]).slice(0, 4)
        .map(([name, count]) => `${name} ${count}`).join(", ");
    }
    const served = dispatcher.snapshot().backends.filter((b) => b.requests > 0).length;
    dispatcher.close();
    console.log(
      `| ${n} | ${series} | ${new TextEncoder().encode(text).length} | ${fmt(median(times), 2)} |` +
        (served < n ? ` (${served} served)` : ""),
    );
  }
  console.log(`\nLargest families at 1,000 backends (series): ${breakdown}`);
}

const machine = await describeMachine("none (control plane only)");
console.log(
  `## replica_scale — ${machine.cpuModel}, ${machine.cores} cores, load ${
    machine.loadAverage.map((l) => l.toFixed(1)).join("/")
  }, Deno ${machine.deno}, ${machine.date}`,
);
if (PARTS.has("schedule")) await schedulePart();
if (PARTS.has("probe")) await probePart();
if (PARTS.has("postgres")) await postgresPart();
if (PARTS.has("redis")) await redisPart();
if (PARTS.has("metrics")) await metricsPart();

/**
 * Gateway overhead: latency the gateway adds over calling a backend directly (p50, p99 at 1 and
 * 64 concurrent clients) and requests/s through it, against a backend that answers instantly;
 * then, to show whether the gateway is the bottleneck, the same at 64 clients against backends
 * that take 10 ms and 50 ms per request. The backends and the gateway run as separate processes; the
 * client load runs here. Writes `bench/GATEWAY_RESULTS.md`.
 *
 *   deno run --allow-read --allow-write --allow-env --allow-run --allow-sys \
 *     --allow-net=127.0.0.1 bench/gateway.ts [--quick]
 *
 * @module
 */
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { setupLogger } from "../src/core/logging.ts";
import { startGateway } from "../src/gateway/gateway_server.ts";
import { describeMachine } from "./_machine.ts";
import { cpuSeconds } from "./_proc.ts";
import { median, percentile } from "./_stats.ts";

const SELF = fileURLToPath(import.meta.url);
const RESULTS = fileURLToPath(new URL("./GATEWAY_RESULTS.md", import.meta.url));
const PERMS = ["--allow-read", "--allow-env", "--allow-sys", "--allow-net=127.0.0.1"];
const ANSWER = JSON.stringify({
  id: "chatcmpl-bench",
  object: "chat.completion",
  created: 0,
  model: "bench",
  choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }],
  usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 },
});
const BODY = JSON.stringify({
  model: "instant",
  messages: [{ role: "user", content: "Say ok." }],
  max_tokens: 1,
});

// ---- roles run as subprocesses ----

/** An OpenAI-shaped backend that answers after `delayMs` (0: at once). */
function backendRole(delayMs: number): { port: number } {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    if (req.method === "GET") return Response.json({ status: "ok" });
    await req.arrayBuffer();
    if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs));
    return new Response(ANSWER, { headers: { "content-type": "application/json" } });
  });
  return { port: server.addr.port };
}

async function gatewayRole(backends: Record<string, string>): Promise<{ port: number }> {
  setupLogger("error");
  const server = await startGateway({
    port: 0,
    health: { intervalMs: 60_000 },
    dispatcher: { maxQueue: 8192 },
    backends: Object.entries(backends).map(([name, baseUrl]) => ({
      id: name,
      baseUrl,
      kind: "llm" as const,
      models: [name],
      maxConcurrency: 4096,
    })),
  });
  await server.gateway.checker.checkAll();
  return { port: server.served.addr.port };
}

// A side server of each role process: its CPU seconds, for the CPU cost per request.
function controlServer(): number {
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    () => Response.json({ cpu: cpuSeconds() }),
  );
  return server.addr.port;
}

// ---- the driver ----

interface Proc {
  child: Deno.ChildProcess;
  port: number;
  control: number;
}

async function spawn(args: string[]): Promise<Proc> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", ...PERMS, SELF, ...args],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (!text.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`role ${args.join(" ")} exited before it was ready`);
    text += value;
  }
  reader.releaseLock();
  child.stdout.cancel().catch(() => {});
  return { child, ...JSON.parse(text.slice(0, text.indexOf("\n"))) };
}

async function cpuOf(p: Proc): Promise<number> {
  return (await (await fetch(`http://127.0.0.1:${p.control}/`)).json()).cpu;
}

interface Run {
  latenciesMs: number[];
  rps: number;
}

async function load(url: string, body: string, concurrency: number, count: number): Promise<Run> {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < count) {
      next++;
      const t0 = performance.now();
      const res = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
      });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`HTTP ${res.status} from ${url}`);
      latencies.push(performance.now() - t0);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { latenciesMs: latencies, rps: count / ((performance.now() - started) / 1000) };
}

interface Row {
  clients: number;
  direct: { p50: number; p99: number; rps: number };
  gateway: { p50: number; p99: number; rps: number };
}

async function compare(
  direct: string,
  gateway: string,
  body: { direct: string; gateway: string },
  clients: number,
  count: number,
  rounds: number,
): Promise<Row> {
  const d: Run[] = [];
  const g: Run[] = [];
  await load(direct, body.direct, clients, Math.ceil(count / 4)); // warm-up
  await load(gateway, body.gateway, clients, Math.ceil(count / 4));
  for (let i = 0; i < rounds; i++) {
    // Interleaved, so a noisy neighbour hits both sides alike.
    d.push(await load(direct, body.direct, clients, count));
    g.push(await load(gateway, body.gateway, clients, count));
  }
  const sum = (runs: Run[]) => ({
    p50: median(runs.map((r) => percentile(r.latenciesMs, 50))),
    p99: median(runs.map((r) => percentile(r.latenciesMs, 99))),
    rps: median(runs.map((r) => r.rps)),
  });
  return { clients, direct: sum(d), gateway: sum(g) };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    args: Deno.args,
    options: {
      role: { type: "string" },
      delay: { type: "string" },
      backends: { type: "string" },
      quick: { type: "boolean" },
    },
  });
  if (values.role === "backend") {
    const { port } = backendRole(Number(values.delay ?? 0));
    console.log(JSON.stringify({ port, control: controlServer() }));
    return;
  }
  if (values.role === "gateway") {
    const { port } = await gatewayRole(JSON.parse(values.backends!));
    console.log(JSON.stringify({ port, control: controlServer() }));
    return;
  }
  const quick = values.quick === true;
  const rounds = quick ? 1 : 3;
  const delays = [0, 10, 50];
  const backends = await Promise.all(
    delays.map((d) => spawn(["--role", "backend", "--delay", String(d)])),
  );
  const urls = Object.fromEntries(
    delays.map((d, i) => [`d${d}`, `http://127.0.0.1:${backends[i].port}/v1`]),
  );
  const gw = await spawn(["--role", "gateway", "--backends", JSON.stringify(urls)]);
  const gwUrl = `http://127.0.0.1:${gw.port}/v1/chat/completions`;
  const bodyFor = (model: string) => JSON.stringify({ ...JSON.parse(BODY), model });
  try {
    const instant = { direct: bodyFor("d0"), gateway: bodyFor("d0") };
    const rows: Row[] = [];
    for (const [clients, count] of [[1, quick ? 500 : 3000], [64, quick ? 2000 : 12000]]) {
      rows.push(
        await compare(`${urls.d0}/chat/completions`, gwUrl, instant, clients, count, rounds),
      );
      console.error(`instant backend, ${clients} client(s): done`);
    }
    const gwCpu0 = await cpuOf(gw);
    const cpuRun = await load(gwUrl, instant.gateway, 64, quick ? 2000 : 6000);
    const cpuPerRequestUs = ((await cpuOf(gw)) - gwCpu0) / cpuRun.latenciesMs.length * 1e6;
    const slow: [number, Row][] = [];
    for (const d of [10, 50]) {
      const body = { direct: bodyFor(`d${d}`), gateway: bodyFor(`d${d}`) };
      const count = quick ? 500 : Math.round(64_000 / d);
      slow.push([
        d,
        await compare(`${urls[`d${d}`]}/chat/completions`, gwUrl, body, 64, count, rounds),
      ]);
      console.error(`${d} ms backend: done`);
    }
    await Deno.writeTextFile(RESULTS, await report(rows, slow, cpuPerRequestUs, rounds));
    console.log(await Deno.readTextFile(RESULTS));
  } finally {
    for (const p of [...backends, gw]) {
      try {
        p.child.kill("SIGTERM");
      } catch { /* gone */ }
      await p.child.status;
    }
  }
}

async function report(
  rows: Row[],
  slow: [number, Row][],
  cpuUs: number,
  rounds: number,
): Promise<string> {
  const m = await describeMachine("none (HTTP only)");
  const f = (ms: number) => ms.toFixed(3);
  const pct = (r: Row) => (100 * r.gateway.rps / r.direct.rps).toFixed(0);
  const d50 = slow.find(([d]) => d === 50)![1];
  const lines = [
    "## Gateway overhead (`bench/gateway.ts`)",
    "",
    "Reproduce: `deno run --allow-read --allow-write --allow-env --allow-run --allow-sys " +
    "--allow-net=127.0.0.1 bench/gateway.ts` (`--quick` for a short run).",
    "",
    `Machine: ${m.cpuModel}, ${m.cores} cores, ${m.memoryGiB.toFixed(0)} GiB, ${m.os}, ` +
    `Deno ${m.deno}; load average at start ${m.loadAverage.map((x) => x.toFixed(2)).join(" ")}; ` +
    `${m.date}.`,
    "",
    "Client → backend directly vs client → gateway → backend, on loopback; the backends, the " +
    "gateway and the client are separate processes sharing the cores. Medians over " +
    `${rounds} interleaved round(s); latencies in ms.`,
    "",
    "Backend that answers a chat completion at once:",
    "",
    "| clients | direct p50 | gateway p50 | **added p50** | direct p99 | gateway p99 | added p99 | direct req/s | gateway req/s |",
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ...rows.map((r) =>
      `| ${r.clients} | ${f(r.direct.p50)} | ${f(r.gateway.p50)} | **${
        f(r.gateway.p50 - r.direct.p50)
      }** | ${f(r.direct.p99)} | ${f(r.gateway.p99)} | ${f(r.gateway.p99 - r.direct.p99)} | ${
        r.direct.rps.toFixed(0)
      } | ${r.gateway.rps.toFixed(0)} |`
    ),
    "",
    `Gateway CPU per request (instant backend, 64 clients): ${cpuUs.toFixed(0)} µs, so one core ` +
    `carries about ${(1e6 / cpuUs).toFixed(0)} requests/s through the gateway.`,
    "",
    "Backends that take a fixed time per request, 64 clients:",
    "",
    "| backend time | direct req/s | gateway req/s | gateway / direct | direct p50 | gateway p50 |",
    "| --- | --- | --- | --- | --- | --- |",
    ...slow.map(([d, r]) =>
      `| ${d} ms | ${r.direct.rps.toFixed(0)} | ${r.gateway.rps.toFixed(0)} | ${pct(r)} % | ${
        f(r.direct.p50)
      } | ${f(r.gateway.p50)} |`
    ),
    "",
    `Targets: added p50 < 1 ms at 1 client — ${
      rows[0].gateway.p50 - rows[0].direct.p50 < 1 ? "met" : "NOT met"
    }. Gateway not the bottleneck at 64 clients (≥ 90 % of direct throughput) — against the ` +
    `50 ms backend ${d50.gateway.rps >= 0.9 * d50.direct.rps ? "met" : "NOT met"}; against ` +
    "faster backends the gateway's own CPU per request (above) is the limit on this machine, " +
    "where client, gateway and backend share the cores.",
    "",
  ];
  return lines.join("\n");
}

if (import.meta.main) await main();

/**
 * `deno task bench`: runs the throughput comparisons side by side and writes `bench/RESULTS.md`
 * (a `--quick` or `--only` run writes under `.svc/benchmarks/` unless `--out` says otherwise).
 *
 * Parts: `embeddings` (raw session vs naive server vs ours vs llama.cpp), `chat` (continuous
 * batching on vs off vs llama.cpp), `conversation` (multi-turn and shared-system-prompt time to
 * first token, prefix cache vs llama.cpp's prompt cache), `memory` (peak RSS under load), `http` (HTTP overhead on an instant engine), `gateway`
 * (latency and requests/s the gateway adds over calling a backend directly).
 *
 * The report is formatted with `deno fmt` (the repository's settings) before it is written, so
 * `deno fmt --check` passes on it.
 *
 * @module
 */

import { parseArgs } from "node:util";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { OutputPaths } from "../src/config/output_paths.ts";
import { setupLogger } from "../src/core/logging.ts";
import { parseDtype } from "../src/engine/dtype.ts";
import type { BenchContext } from "./_context.ts";
import { describeMachine } from "./_machine.ts";
import { type BenchResults, evaluateTargets, renderReport, withHandWritten } from "./_report.ts";
import { profileDecodeSteps } from "./_decode_profile.ts";
import { runChat } from "./chat.ts";
import { CHAT_MODEL } from "./_models.ts";
import { runEmbeddings } from "./embeddings.ts";
import { runHttpOverhead } from "./http_overhead.ts";
import { runMemory } from "./memory.ts";
import { runGateway } from "./gateway.ts";
import { runConversation } from "./conversation.ts";

const PARTS = ["embeddings", "chat", "conversation", "memory", "http", "gateway"] as const;
type Part = typeof PARTS[number];

const HELP = `deno task bench [options]

  --quick              short smoke run (~2 min): 1 repeat, short phases
  --only <parts>       comma-separated subset of: ${PARTS.join(", ")}
  --repeats <n>        repeats of every measurement (default 3, quick 1); tables show medians
                       (the gateway part: interleaved rounds per comparison)
  --embed-seconds <s>  length of each embedding load phase (default 2, quick 1)
  --chat-seconds <s>   length of each steady chat phase (default 4, quick 2.5)
  --max-tokens <n>     max_tokens of chat requests (default 64, quick 32)
  --http-requests <n>  requests per HTTP overhead variant (default 1000, quick 200)
  --device <d>         cpu (default), wasm or webgpu
  --dtype <d>          weights of the demo models (default q8 on cpu/wasm, fp32 on webgpu); q4
                       exists for the chat model only (--only chat); llama.cpp gets the matching
                       GGUF (chat q8: Q8_0, q4: Q4_0, fp32: F16; embeddings q8: Q8_0, fp32: F32)
  --out <file>         where to write the report (default bench/RESULTS.md for a full run)
  --from-json <file>   write the report again from the saved numbers of an earlier run
                       (.svc/benchmarks/RESULTS-full.json), measuring nothing
  --help               this text

Micro-benchmarks of sampling and KV-cache assembly: deno bench bench/sampler_bench.ts
The gateway part alone, printed: deno run --allow-read --allow-env --allow-run --allow-sys
  --allow-net=127.0.0.1 bench/gateway.ts [--quick]`;

async function main(): Promise<void> {
  const { values } = parseArgs({
    args: Deno.args,
    options: {
      quick: { type: "boolean", default: false },
      only: { type: "string" },
      repeats: { type: "string" },
      "embed-seconds": { type: "string" },
      "chat-seconds": { type: "string" },
      "max-tokens": { type: "string" },
      "http-requests": { type: "string" },
      device: { type: "string", default: "cpu" },
      dtype: { type: "string" },
      out: { type: "string" },
      "from-json": { type: "string" },
      help: { type: "boolean", default: false },
    },
  });
  if (values.help) {
    console.log(HELP);
    return;
  }
  if (values["from-json"]) {
    await rerender(values["from-json"], values.out);
    return;
  }
  const quick = values.quick;
  const parts = parseParts(values.only);
  const device = values.device as BenchContext["device"];
  if (!["cpu", "wasm", "webgpu"].includes(device)) fail(`--device must be cpu, wasm or webgpu`);
  setupLogger("error");
  const paths = OutputPaths.resolve();
  const ctx: BenchContext = {
    cacheDir: paths.cache,
    device,
    dtype: values.dtype ? parseDtype(values.dtype, "--dtype") : device === "webgpu" ? "fp32" : "q8",
    quick,
    repeats: positive(values.repeats, quick ? 1 : 3, "--repeats"),
    embedSeconds: positive(values["embed-seconds"], quick ? 1 : 2, "--embed-seconds"),
    chatSeconds: positive(values["chat-seconds"], quick ? 2.5 : 4, "--chat-seconds"),
    maxTokens: positive(values["max-tokens"], quick ? 32 : 64, "--max-tokens"),
    httpRequests: positive(values["http-requests"], quick ? 200 : 1000, "--http-requests"),
    serverLog: join(paths.benchmarks, "servers.log"),
    log: (message) => console.error(message),
  };
  await Deno.mkdir(paths.benchmarks, { recursive: true });
  await Deno.writeTextFile(ctx.serverLog!, "");
  const full = !quick && parts.length === PARTS.length;
  const out = values.out ??
    (full
      ? join(dirname(new URL(import.meta.url).pathname), "RESULTS.md")
      : join(paths.benchmarks, `RESULTS-${quick ? "quick" : "partial"}.md`));

  const started = performance.now();
  const deviceName = device === "cpu"
    ? "cpu (onnxruntime-node, native)"
    : `${device} (onnxruntime-web)`;
  const results: BenchResults = {
    machine: await describeMachine(deviceName),
    command: ["deno task bench", ...Deno.args].join(" "),
    settings: {
      parts: parts.join(", "),
      repeats: ctx.repeats,
      "embedding phase (s)": ctx.embedSeconds,
      "chat steady phase (s)": ctx.chatSeconds,
      "chat max_tokens": ctx.maxTokens,
      "HTTP requests per variant": ctx.httpRequests,
      dtype: ctx.dtype,
    },
    wallSeconds: 0,
  };
  ctx.log(`bench: ${parts.join(", ")}; ${ctx.repeats} repeat(s); report -> ${out}`);
  if (parts.includes("embeddings")) results.embeddings = await runEmbeddings(ctx);
  if (parts.includes("chat")) {
    results.chat = await runChat(ctx);
    results.decodeSteps = await profileDecodeSteps(ctx, CHAT_MODEL, {
      batches: [1, 4, 16],
      pasts: quick ? [32, 128] : [32, 128, 256],
    });
  }
  if (parts.includes("conversation")) results.conversation = await runConversation(ctx);
  if (parts.includes("memory")) {
    results.memory = await runMemory(ctx, { embeddings: results.embeddings, chat: results.chat });
  }
  if (parts.includes("http")) results.http = await runHttpOverhead(ctx);
  if (parts.includes("gateway")) results.gateway = await runGateway(ctx);
  results.wallSeconds = (performance.now() - started) / 1000;
  const serverLines = (await Deno.readTextFile(ctx.serverLog!)).split("\n").filter(Boolean);
  results.settings["server stderr lines"] = `${serverLines.length} (.svc/benchmarks/servers.log)`;

  await Deno.mkdir(dirname(out), { recursive: true });
  await writeReport(out, results);
  // The raw numbers, for comparisons across runs, stay out of the source tree.
  const json = join(
    paths.benchmarks,
    `RESULTS-${full ? "full" : quick ? "quick" : "partial"}.json`,
  );
  await Deno.writeTextFile(json, JSON.stringify(results, null, 2));
  console.log(`wrote ${out} (${(results.wallSeconds / 60).toFixed(1)} min)`);
  if (serverLines.length > 0) {
    console.log(`the servers wrote ${serverLines.length} lines to ${ctx.serverLog}`);
  }
  for (const t of evaluateTargets(results)) {
    console.log(`${t.met ? "met    " : "NOT MET"}  ${t.name}: ${t.measured} (${t.required})`);
  }
}

/** Renders the report of saved results again (e.g. after the report's wording changed). */
async function rerender(jsonFile: string, out: string | undefined): Promise<void> {
  const results = JSON.parse(await Deno.readTextFile(jsonFile)) as BenchResults;
  const full = results.command === "deno task bench";
  const target = out ??
    (full
      ? join(dirname(new URL(import.meta.url).pathname), "RESULTS.md")
      : join(OutputPaths.resolve().benchmarks, "RESULTS-rendered.md"));
  await writeReport(target, results);
  console.log(`wrote ${target} from ${jsonFile} (run of ${results.machine.date})`);
}

// The rendered report, keeping the hand-written sections of the file it replaces.
async function writeReport(path: string, results: BenchResults): Promise<void> {
  const previous = await Deno.readTextFile(path).catch(() => null);
  const report = await formatMarkdown(renderReport(results));
  await Deno.writeTextFile(path, withHandWritten(report, previous));
}

/**
 * `text` as `deno fmt` writes Markdown with this repository's settings (CI runs `deno fmt
 * --check`); unchanged, with a warning, when the formatter cannot run.
 */
async function formatMarkdown(text: string): Promise<string> {
  const config = fileURLToPath(new URL("../deno.json", import.meta.url));
  try {
    const child = new Deno.Command(Deno.execPath(), {
      args: ["fmt", `--config=${config}`, "--ext=md", "-"],
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(text));
    await writer.close();
    const { success, stdout, stderr } = await child.output();
    if (success) return new TextDecoder().decode(stdout);
    console.error(
      `bench: deno fmt failed, report left unformatted: ${new TextDecoder().decode(stderr)}`,
    );
  } catch (err) {
    console.error(`bench: deno fmt could not run, report left unformatted: ${err}`);
  }
  return text;
}

function parseParts(only: string | undefined): Part[] {
  if (!only) return [...PARTS];
  const parts = only.split(",").map((p) => p.trim()).filter(Boolean);
  for (const p of parts) {
    if (!(PARTS as readonly string[]).includes(p)) {
      fail(`unknown part '${p}' in --only: use ${PARTS.join(", ")}`);
    }
  }
  return parts as Part[];
}

function positive(text: string | undefined, fallback: number, flag: string): number {
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!(value > 0)) fail(`${flag} must be a positive number, got '${text}'`);
  return value;
}

function fail(message: string): never {
  console.error(`bench: ${message}\n\n${HELP}`);
  Deno.exit(2);
}

if (import.meta.main) await main();

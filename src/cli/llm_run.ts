/**
 * `svc llm run`: serves one model on the engine port (chat) or the embedding port (embedding,
 * rerank), optionally with a reranker beside it on the same port.
 *
 * @module
 */

import { errorMessage } from "../core/errors.ts";
import { loadConfig } from "../config/env.ts";
import { ensureHfMirrorConfigured, getHfEndpoint } from "../config/network_region.ts";
import { OutputPaths } from "../config/output_paths.ts";
import { SvcPorts } from "../config/ports.ts";
import { DEFAULT_MODELS, DEMO_FALLBACKS, detectKindOf } from "../engine/create_engine.ts";
import { startEngineServer } from "../server/engine_server.ts";
import type { Device, ModelKind } from "../core/inference_types.ts";
import { DTYPES } from "../engine/dtype.ts";
import {
  ADMISSION_LIMIT_OPTIONS,
  admissionLimitsHelp,
  admissionLimitsOf,
  choiceOption,
  corsOriginsOption,
  DTYPE_DEFAULT_HELP,
  intOption,
  parseCommandArgs,
} from "./args.ts";
import { HTTP_LIMIT_OPTIONS, HTTP_LIMITS_HELP, httpLimitsFrom } from "./_http_limits.ts";
import { untilShutdownSignal } from "./signals.ts";
import { ENGINE_INSTANCE_ENV } from "../server/engine_instance.ts";
import { recordRun, type RunRecordHandle } from "./_run_records.ts";

/** Help text of `svc llm run`. */
export const LLM_RUN_HELP = `svc llm run — serve one model behind an OpenAI-compatible API

Usage: svc llm run [--model <id|folder>] [options]

  --model <id>           hub id (org/name), local folder, or demo model (demo/chat, demo/embed,
                         demo/rerank, demo/chat-bench, demo/embed-bench). Default: a small real
                         model of the kind; if it cannot be downloaded, its demo stand-in
                         (random weights) with a warning.
  --kind <k>             chat | embedding | rerank (a cross-encoder: POST /v1/rerank); read
                         from the model's config when left out
  --with-rerank          also serve a reranker on the same port (the default one, see --model)
  --rerank-model <id>    the reranker to serve beside the model (implies --with-rerank)
  --port <n>             default: chat on SVC_LLM_PORT or ${SvcPorts.LLM_DEFAULT} (${SvcPorts.LLM_WSL_FALLBACK} on WSL2),
                         embedding and rerank on SVC_EMBEDDING_PORT or ${SvcPorts.EMBEDDING_DEFAULT}; 0 picks a free port
                         [env: SVC_LLM_PORT, SVC_EMBEDDING_PORT]
  --host <addr>          listen address (default 127.0.0.1)
  --cors-origins <list>  web origins that may call this server from a browser: '*' (default),
                         'none', or e.g. http://localhost:3000,https://app.example
  --device <d>           auto | webgpu | cpu | wasm (default auto) [env: SVC_DEVICE]
  --allow-fallback-adapter  let --device webgpu run on a software adapter (slow; for testing)
  --dtype <t>            weights: ${DTYPES.join(" | ")}
                         ${DTYPE_DEFAULT_HELP.replaceAll("\n", "\n                         ")}
  --revision <rev>       hub branch, tag or commit (default main)
  --offline              never download; use the model cache [env: SVC_OFFLINE]
  --max-sequences <n>    chat: most sequences decoded together (1 turns batching off)
  --max-batch-tokens <n> most (padded) tokens in one prefill or embedding batch
  --max-queue <n>        most waiting sequences (chat) or inputs (embedding) before a 429
  --prefix-cache-mib <n> chat: MiB of prompt key/value cache kept across requests, so a
                         conversation's next turn or a shared system prompt is not prefilled
                         again (default 512, 0 on webgpu where a hit is slower today; 0 turns
                         the prefix cache off)
  --stop-with-stdin      also stop when standard input ends (for a supervising process: its
                         pipe closes when it dies, even by SIGKILL)

Per-request limits, checked before any work is queued (over one: a 400 naming the flag):
${admissionLimitsHelp(25)}

HTTP limits:
${HTTP_LIMITS_HELP}

Environment: SVC_HOME (model cache and state), SVC_LOG_LEVEL (or --log-level, -v), HUB_ENDPOINT,
HUB_TOKEN, and those shown as [env: …]; 'svc --help' lists them all.
Keys: ENGINE_API_KEY (or SVC_CHAT_API_KEY) makes every endpoint but /health require
'Authorization: Bearer <key>'. HUB_TOKEN is sent to the hub for private models.
Permissions: --allow-net (listen address and hub host) --allow-read --allow-write (model cache)
--allow-env --allow-ffi --allow-sys.`;

/** Runs `svc llm run`; resolves with the exit code once the server has stopped. */
export async function llmRun(args: string[]): Promise<number> {
  const { values } = parseCommandArgs(args, "svc llm run", {
    model: { type: "string" },
    kind: { type: "string" },
    "with-rerank": { type: "boolean" },
    "rerank-model": { type: "string" },
    port: { type: "string" },
    host: { type: "string" },
    "cors-origins": { type: "string" },
    device: { type: "string" },
    "allow-fallback-adapter": { type: "boolean" },
    dtype: { type: "string" },
    revision: { type: "string" },
    offline: { type: "boolean" },
    "max-sequences": { type: "string" },
    "max-batch-tokens": { type: "string" },
    "max-queue": { type: "string" },
    "prefix-cache-mib": { type: "string" },
    "stop-with-stdin": { type: "boolean" },
    ...ADMISSION_LIMIT_OPTIONS,
    ...HTTP_LIMIT_OPTIONS,
  });
  if (values.help) {
    console.log(LLM_RUN_HELP);
    return 0;
  }
  // The flag first: a bad --device is named as the flag, not as SVC_DEVICE.
  choiceOption(values, "device", ["auto", "webgpu", "cpu", "wasm"]);
  const config = loadConfig({
    overrides: {
      ...(values.device !== undefined ? { device: values.device as string } : {}),
      ...(values.offline ? { offline: true } : {}),
    },
  });
  const model = values.model as string | undefined;
  let kind = choiceOption<ModelKind>(values, "kind", ["chat", "embedding", "rerank"]);
  const rerankModel = values["rerank-model"] as string | undefined;
  const rerank = values["with-rerank"] || rerankModel !== undefined
    ? { model: rerankModel }
    : undefined;
  kind ??= model ? await detectKindOf(model) : "chat";
  const port = intOption(values, "port", { min: 0, max: 65535 }) ?? defaultPort(kind, config);
  const maxSequences = intOption(values, "max-sequences", { min: 1, max: 1024 });
  const maxQueue = intOption(values, "max-queue", { min: 1, max: 1_000_000 });
  const maxBatchTokens = intOption(values, "max-batch-tokens", { min: 1, max: 10_000_000 });
  const prefixCacheMib = intOption(values, "prefix-cache-mib", { min: 0, max: 1_048_576 });
  const httpLimits = httpLimitsFrom(values);
  const queueLimits = {
    ...(maxQueue !== undefined ? { maxQueue } : {}),
    ...(maxBatchTokens !== undefined ? { maxBatchTokens } : {}),
  };
  if (!config.offline) await ensureHfMirrorConfigured();
  const paths = OutputPaths.resolve();
  const instance = Deno.env.get(ENGINE_INSTANCE_ENV);
  const server = await startEngineServer({
    model,
    kind,
    hostname: (values.host as string | undefined) ?? "127.0.0.1",
    port,
    apiKey: config.engineApiKey ?? config.chatApiKey,
    cors: { origins: corsOriginsOption(values, "cors-origins") ?? "*" },
    device: config.device as Device,
    dtype: choiceOption(values, "dtype", DTYPES),
    allowFallbackAdapter: Boolean(values["allow-fallback-adapter"]),
    revision: values.revision as string | undefined,
    cacheDir: paths.hub,
    // Started by a gateway: responses in memory. $SVC_HOME/responses is the gateway's store (it
    // sends us plain chat requests), which our key must not read.
    responsesDir: instance === undefined ? paths.dir("responses") : undefined,
    // Set when a gateway's supervisor started us: /health echoes it (engine_instance.ts).
    instance,
    offline: config.offline,
    hubEndpoint: await getHfEndpoint(),
    hubToken: config.hubToken,
    scheduler: {
      ...queueLimits,
      ...(maxSequences !== undefined ? { maxSequences } : {}),
      ...(prefixCacheMib !== undefined ? { prefixCacheBytes: prefixCacheMib * 1024 * 1024 } : {}),
    },
    batching: queueLimits,
    limits: admissionLimitsOf(values),
    httpLimits,
    ...(rerank ? { rerank } : {}),
  });
  server.ready.catch(() => {}); // observed by the race below, once the record is written
  // Until loaded, what may be loaded: the default model of a kind may fall back to its demo.
  const named: [string | undefined, ModelKind][] = [[model, kind]];
  if (rerank) named.push([rerank.model, "rerank"]);
  const record = await recordThisRun(paths.engines, {
    url: server.baseUrl,
    models: named.flatMap(([m, k]) => m ?? [DEFAULT_MODELS[k], DEMO_FALLBACKS[k]]),
    supervised: instance !== undefined,
  });
  const loading = [model ?? `the default ${kind} model`];
  if (rerank) loading.push(`reranker ${rerank.model ?? "(default)"}`);
  console.log(`svc: loading ${loading.join(" and ")} — ${server.baseUrl} answers 503 until ready`);
  const stopped = values["stop-with-stdin"]
    ? Promise.race([untilShutdownSignal(), untilStdinEnds()])
    : untilShutdownSignal();
  let signalled = false;
  stopped.then((signal) => (signalled = typeof signal === "string"));
  const loaded = await Promise.race([server.ready, stopped.then(() => null)]).catch(
    async (err) => {
      await record?.close();
      throw err;
    },
  );
  if (loaded) {
    const ids = [loaded, ...(server.reranker ? [server.reranker] : [])].map((e) => e.info.id);
    await record?.update(ids).catch(() => {}); // still locked: the earlier names stand
    for (const { info } of [loaded, ...(server.reranker ? [server.reranker] : [])]) {
      const { id, kind: k, randomWeights, dtype } = info;
      const about = [k, ...(dtype ? [dtype] : []), ...(randomWeights ? ["RANDOM weights"] : [])];
      console.log(
        `svc: serving ${id} (${about.join(", ")}) at ${server.baseUrl} — ${ENDPOINTS[k]}, ` +
          `/tokenize, /detokenize, /models; /health, /metrics`,
      );
    }
    if (loaded.info.randomWeights && model === undefined) {
      console.log("svc: the default model could not be loaded: name a real one with --model");
    }
    await stopped;
  }
  console.log(loaded ? "svc: stopping" : "svc: interrupted before the model was ready; stopping");
  await server.stop();
  await record?.close();
  // As `svc llm serve`: interrupted while loading is 130 (a gateway's supervisor stopping us, 0).
  return !loaded && signalled && instance === undefined ? 130 : 0;
}

// What this process serves, for `svc llm model delete` (_run_records.ts). Without write access to
// SVC_HOME it serves anyway, unrecorded, and says so.
async function recordThisRun(
  enginesDir: string,
  init: Parameters<typeof recordRun>[1],
): Promise<RunRecordHandle | undefined> {
  try {
    return await recordRun(enginesDir, init);
  } catch (err) {
    const why = errorMessage(err);
    console.error(
      `svc: warning: could not record this server in ${enginesDir} (${why}): 'svc llm model ` +
        "delete' will not know that it uses its models",
    );
    return undefined;
  }
}

// A supervisor writes nothing; the read ends when its end of the pipe closes.
async function untilStdinEnds(): Promise<void> {
  try {
    for await (const _ of Deno.stdin.readable) { /* nothing is expected */ }
  } catch {
    // A broken pipe ends it too.
  }
  console.log("svc: standard input closed (the supervising process is gone)");
}

const ENDPOINTS: Readonly<Record<ModelKind, string>> = {
  chat: "/chat/completions, /completions",
  embedding: "/embeddings",
  rerank: "/rerank",
};

function defaultPort(kind: ModelKind, config: ReturnType<typeof loadConfig>): number {
  if (kind !== "chat") return config.embeddingPort;
  return config.sources.llmPort === "default" ? SvcPorts.getRecommendedLlmPort() : config.llmPort;
}

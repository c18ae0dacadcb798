/**
 * `svc llm serve`: the gateway on 8000, the chat engine on the recommended LLM port (falling back
 * along `getLlmPorts()`), and with `--with-embedding` the embedding engine on 8090 — the engines
 * as child processes of the gateway. Waits for readiness, prints the endpoints, writes its
 * configuration file, and on Ctrl-C / SIGTERM drains and stops everything. `--background`
 * detaches: it starts itself again without it, waits for readiness, prints, and exits 0.
 *
 * @module
 */
import { join } from "node:path";
import { errorMessage } from "../core/errors.ts";
import { setupLogger } from "../core/logging.ts";
import { ensureHfMirrorConfigured, getHfEndpoint } from "../config/network_region.ts";
import { OutputPaths } from "../config/output_paths.ts";
import { SvcPorts } from "../config/ports.ts";
import { DTYPES } from "../engine/dtype.ts";
import { StateEngineStore } from "../gateway/engines/state_engine_store.ts";
import { gatewayIdentity } from "../gateway/engines/gateway_identity.ts";
import { MAX_STORED_RESPONSES_HELP, openCliCoordinator, openCliStateStore } from "./_state.ts";
import { importResponseFiles } from "../responses/response_files_import.ts";
import type { EngineView, StartEngineRequest } from "../gateway/engines/engine_types.ts";
import { startGateway } from "../gateway/gateway_server.ts";
import {
  admissionLimitsHelp,
  DTYPE_DEFAULT_HELP,
  parseCommandArgs,
  type ParsedArgs,
} from "./args.ts";
import { HTTP_LIMITS_HELP } from "./_http_limits.ts";
import {
  claimServeLock,
  processStartTime,
  readServeState,
  type ServeState,
  updateServeState,
} from "./serve_state.ts";
import { untilShutdownSignal } from "./signals.ts";
import { serveInBackground } from "./_serve_background.ts";
import { checkPorts, refuseRecordedServe } from "./_serve_machine.ts";
import { printEndpoints, ServeOutput, urlOf } from "./_serve_output.ts";
import {
  READY_TIMEOUT_MS,
  SERVE_FLAGS,
  type ServeSettings,
  serveSettings,
} from "./_serve_settings.ts";

/** Help text of `svc llm serve`. */
export const LLM_SERVE_HELP =
  `svc llm serve — the gateway with a chat engine (and an embedding engine)

Usage: svc llm serve [--model <LLM>] [--embedding-model <Embedding>] [--with-embedding] [options]

  --model <id>             chat model (hub id, folder or demo model). Default: a small real
                           model; if it cannot be downloaded, demo/chat (RANDOM weights), loudly.
  --embedding-model <id>   embedding model (implies --with-embedding). Default as for --model.
  --with-embedding         also serve embeddings + rerank (engine on port ${SvcPorts.EMBEDDING_DEFAULT})
  --rerank-model <id>      reranker served beside the embedding model (implies --with-embedding).
                           Default: a small real cross-encoder; if it cannot be downloaded,
                           demo/rerank (RANDOM weights), loudly.
  --no-rerank              serve embeddings without a reranker
  --embedding-in-gateway   run the embedding engine (and reranker) in the gateway's own process
                           (implies --with-embedding): no second hop per request (~1 ms less at
                           one client on a small CPU), but other requests may wait behind a short
                           embedding, a crash of it stops the gateway, and it is not restarted;
                           no --embedding-port
  --dtype <t>              chat model weights: ${DTYPES.join(" | ")}
                           ${DTYPE_DEFAULT_HELP.replaceAll("\n", "\n                           ")}
  --embedding-dtype <t>    embedding model weights, the same choices (implies --with-embedding)
  --port <n>               gateway port (default ${SvcPorts.GATEWAY_DEFAULT}; 0 picks a free one)
  --host <addr>            listen address of the gateway and engines (default 127.0.0.1)
  --llm-port <n>           chat engine port (default ${SvcPorts.getRecommendedLlmPort()}, then the other of ${
    SvcPorts.getLlmPorts().join("/")
  }, then any free port) [env: SVC_LLM_PORT]
  --embedding-port <n>     embedding engine port (default ${SvcPorts.EMBEDDING_DEFAULT}) [env: SVC_EMBEDDING_PORT]
  --device <d>             auto | webgpu | cpu | wasm (default auto) [env: SVC_DEVICE]
  --allow-fallback-adapter let --device webgpu run on a software adapter (slow; for testing)
  --prefix-cache-mib <n>   chat: MiB of prompt key/value cache kept across requests, so a
                           conversation's next turn or a shared system prompt is not prefilled
                           again (default 512, 0 on webgpu where a hit is slower today; 0
                           turns the prefix cache off)
  --offline                never download; use the model cache [env: SVC_OFFLINE]
  --load-wait <seconds>    how long a request for a model still loading waits for it, then 503
                           model_loading with Retry-After (default 30; 0 answers at once)
  --cors-origins <list>    web origins that may call the inference API from a browser: '*'
                           (default), 'none', or e.g. http://localhost:3000,https://app.example.
                           The management API never answers other origins.
  --background             run detached; print the endpoints once ready and exit
  --state-file <path>      configuration file (default <SVC_HOME>/engines/serve.env)
  --state <url>            engine registrations, stored responses, keys and usage: sqlite:<path>
                           or postgres://… (default SVC_STATE_URL, else
                           sqlite:<SVC_HOME>/state.db; an old gateway_engines.json is imported)
                           [env: SVC_STATE_URL]
  --coord <url>            what several gateway replicas share at once (keys' rpm/tpm):
                           redis://host:port (unset: this process alone) [env: SVC_COORD_URL]
  --max-in-flight <n>      most requests the gateway proxies at once; more get 503 (default 1024)
${MAX_STORED_RESPONSES_HELP}
  --restart-unhealthy-after <seconds>
                           restart an engine that was ready and then failed its health probes
                           for this long (alive but stuck; default 30; 0 never restarts it)

HTTP limits of the gateway (the engines get the same timeouts and header limit):
${HTTP_LIMITS_HELP}

Per-request limits of the engines, checked before any work is queued (a 400 names the flag):
${admissionLimitsHelp(27)}

Environment: SVC_HOME (model cache and state), SVC_LOG_LEVEL (or --log-level, -v), HUB_ENDPOINT,
HUB_TOKEN, the keys below, and those shown as [env: …]; 'svc --help' lists them all.
SVC_CHAT_API_KEY protects the gateway's inference API (every endpoint but /health);
SVC_ADMIN_API_KEY protects its management API and dashboard (/v1/management/*) and also opens
inference. Without SVC_ADMIN_API_KEY the management API answers callers on this machine only
(with SVC_CHAT_API_KEY when set). The engines require ENGINE_API_KEY (or SVC_CHAT_API_KEY).
'svc llm status' and 'svc llm stop' read the state file.
Permissions: --allow-net=127.0.0.1 (listen; add the hub hosts for hub models) --allow-read
--allow-write=<SVC_HOME> (model cache, state) --allow-env --allow-ffi --allow-sys --allow-run
(it starts the engine processes).`;

/** Options of {@link llmServe} (for tests and other entry points). */
export interface LlmServeOptions {
  /** How to run this command again for `--background` (default: the main module + `llm serve`). */
  self?: string[];
}

/** Runs `svc llm serve`; resolves with the exit code once everything has stopped. */
export async function llmServe(args: string[], options: LlmServeOptions = {}): Promise<number> {
  const { values } = parseCommandArgs(args, "svc llm serve", SERVE_FLAGS);
  if (values.help) {
    console.log(LLM_SERVE_HELP);
    return 0;
  }
  const logFile = values["log-file"] as string | undefined;
  const out = new ServeOutput(logFile);
  try {
    if (values.background) return await serveInBackground(args, values, options.self, out);
    if (values["detached-child"] && Deno.build.os !== "windows") {
      Deno.addSignalListener("SIGHUP", () => {}); // outlive the terminal that started us
    }
    return await foreground(values, out);
  } catch (err) {
    if (logFile) out.line(`svc: ${errorMessage(err)}`);
    throw err;
  } finally {
    out.close();
  }
}

async function foreground(values: ParsedArgs["values"], out: ServeOutput): Promise<number> {
  const s = serveSettings(values);
  // Held until this process exits: a second serve of this state file is refused from now on,
  // loading included, and 'svc llm status' / 'svc llm stop' find this pid in the record.
  const lock = await claimServeLock(s.statePath);
  let recorded = false;
  try {
    const previous = await readServeState(s.statePath).catch((err) => {
      // No serve holds the lock, so none uses the record: it is rewritten.
      out.line(`svc: warning: ${err.message.replace(/; remove it .*$/, "")}; it is replaced`);
      return Deno.remove(s.statePath).then(() => null);
    });
    refuseRecordedServe(previous);
    await checkPorts(s);
    // SIGTERM from 'svc llm stop' (or Ctrl-C) while loading stops the loading engines.
    const stopped = untilShutdownSignal();
    await updateServeState(s.statePath, {
      ...Object.fromEntries(Object.keys(EMPTY_STATE).map((k) => [k, null])),
      pid: Deno.pid,
      pidStart: processStartTime(Deno.pid) ?? null,
      logFile: s.logFile ?? null,
      startedAt: new Date().toISOString(),
    });
    recorded = true;
    return await serveClaimed(s, out, stopped);
  } finally {
    if (recorded) {
      await updateServeState(s.statePath, { pid: null, llmPid: null, embeddingPid: null })
        .catch(() => {});
    }
    lock.close();
  }
}

async function serveClaimed(
  s: ServeSettings,
  out: ServeOutput,
  stopped: Promise<Deno.Signal>,
): Promise<number> {
  const paths = OutputPaths.resolve();
  if (s.logFile) setupLogger(s.config.logLevel, s.logFile);
  if (!s.config.offline) await ensureHfMirrorConfigured();
  // State writes one after the other (two engines may restart at once); a restarted engine's
  // new pid is recorded once the first write has published the state.
  let writes = Promise.resolve();
  let published = false;
  const writeState = (values: StateUpdate) => {
    writes = writes.then(() => updateServeState(s.statePath, values)).catch((err) =>
      out.line(`svc: could not update ${s.statePath}: ${err instanceof Error ? err.message : err}`)
    );
    return writes;
  };
  // Started with the gateway, before it answers, so their models are listed (loading) at once.
  const startEngines: StartEngineRequest[] = [{
    id: "chat",
    model: s.model,
    kind: "chat",
    dtype: s.dtype,
    reuse: false,
    persist: false,
    port: s.llmPort,
  }];
  if (s.withEmbedding) {
    startEngines.push({
      id: "embedding",
      model: s.embeddingModel,
      kind: "embedding",
      dtype: s.embeddingDtype,
      reuse: false,
      persist: false,
      ...(s.embeddingInGateway ? { placement: "gateway" } : { port: s.embeddingPort }),
      ...(s.rerank ? { rerank: s.rerank } : {}),
    });
  }
  // Tells this gateway's started engines from those of gateways on other hosts sharing the store.
  const gateway = await gatewayIdentity(paths.base);
  const state = await openCliStateStore(s.stateUrl, paths);
  // Responses kept as files before the state store: chains started then go on.
  await importResponseFiles(paths.dir("responses"), state).catch((err) => {
    out.line(`svc: could not import the old stored responses: ${err.message}`);
  });
  const coordinator = await openCliCoordinator(s.coordUrl).catch(async (err) => {
    await state.close();
    throw err;
  });
  const server = await startGateway({
    state,
    coordinator,
    hostname: s.host,
    port: s.port,
    apiKey: s.config.chatApiKey,
    adminApiKey: s.config.adminApiKey,
    cors: { origins: s.corsOrigins },
    loadWaitMs: s.loadWaitMs,
    engines: startEngines,
    maxInFlight: s.maxInFlight,
    maxMessages: s.limits.maxMessages,
    maxStoredResponses: s.maxStoredResponses,
    httpLimits: s.httpLimits,
    management: {
      home: paths.base,
      store: new StateEngineStore(state, {
        legacyFile: join(paths.engines, "gateway_engines.json"),
        gateway,
      }),
      hostname: s.host,
      portCandidates: (kind) => kind === "chat" ? s.llmPorts : s.embeddingPorts,
      engineApiKey: s.config.engineApiKey ?? s.config.chatApiKey,
      hubEndpoint: s.config.offline ? undefined : await getHfEndpoint(),
      offline: s.config.offline,
      device: s.config.device,
      allowFallbackAdapter: s.allowFallbackAdapter,
      prefixCacheMib: s.prefixCacheMib,
      engineLimits: s.limits,
      supervisor: s.unhealthyRestartMs === undefined
        ? undefined
        : { unhealthyRestartMs: s.unhealthyRestartMs },
      // The connection cap is the gateway's own: it opens few connections to each engine.
      httpLimits: { ...s.httpLimits, maxConnections: undefined },
      // The engines' warnings and errors (the demo-model warning among them); their own `svc:`
      // status lines are not repeated: a failure is reported once, as our error line.
      onOutput: (id, line) => {
        if (/\b(WARN|ERROR)\b|!!!/.test(line) && !line.startsWith("svc: ")) {
          out.line(`[${id}] ${line}`);
        }
      },
      onReady: (engine) => {
        if (published) void writeState(enginePids(engine));
      },
    },
  }).catch(async (err) => {
    await coordinator.close();
    await state.close();
    throw err;
  });
  const manager = server.gateway.manager!;
  let interrupted = false;
  stopped.then(() => (interrupted = true));
  try {
    const emb = s.withEmbedding ? manager.get("embedding") : undefined;
    out.say(
      `svc: starting the chat engine (${s.model ?? "default model"}) on port ${
        manager.get("chat").port
      }`,
    );
    if (emb) {
      out.say(
        `svc: starting the embedding engine (${s.embeddingModel ?? "default model"}${
          s.rerank ? `, reranker ${s.rerank.model ?? "default"}` : ""
        }) ${emb.port === null ? "in the gateway's process" : `on port ${emb.port}`}`,
      );
    }
    const ready = Promise.all([
      manager.whenReady("chat", { timeoutMs: READY_TIMEOUT_MS }),
      emb ? manager.whenReady("embedding", { timeoutMs: READY_TIMEOUT_MS }) : undefined,
    ]);
    ready.catch(() => {});
    const engines = await Promise.race([ready, stopped.then(() => null)]).catch((err) => {
      throw withServeFlags(err);
    });
    if (engines === null) {
      out.say("svc: interrupted before the engines were ready; stopping");
      return 130;
    }
    const [chatView, embView] = engines;
    await writeState({
      pid: Deno.pid,
      pidStart: processStartTime(Deno.pid) ?? null,
      ...enginePids(chatView),
      ...(embView ? enginePids(embView) : { embeddingPid: null, embeddingPidStart: null }),
      host: s.host,
      gatewayPort: server.served.addr.port,
      gatewayUrl: urlOf(s.host, server.served.addr.port),
      llmPort: chatView.port,
      chatModel: chatView.models[0],
      embeddingPort: embView?.port ?? null,
      embeddingModel: embView?.models[0] ?? null,
      embeddingUrl: embView?.port ? urlOf(s.host, embView.port) : null,
      logFile: s.logFile ?? null,
      startedAt: new Date().toISOString(),
    });
    published = true;
    printEndpoints(out, urlOf(s.host, server.served.addr.port), chatView, embView, s.statePath);
    if (!interrupted) await stopped;
    out.say("svc: stopping — draining requests, then the engines");
    return 0;
  } finally {
    published = false;
    await server.stop();
    await coordinator.close();
    await state.close();
    await writeState({ pid: null, llmPid: null, embeddingPid: null });
  }
}

// An engine's load error advises `svc llm run`'s --kind, which serve has not: name serve's flags.
function withServeFlags(err: unknown): unknown {
  if (err instanceof Error) {
    err.message = err.message.replace(
      /say which kind it is \(--kind chat\|embedding\|rerank\)/,
      "name it with the flag of its kind (--model: chat, --embedding-model: embedding, " +
        "--rerank-model: reranker)",
    );
  }
  return err;
}

type StateUpdate = { [K in keyof ServeState]?: ServeState[K] | null };

// Every field of the record, for clearing what a previous serve left in it.
const EMPTY_STATE: Required<{ [K in keyof ServeState]: null }> = {
  pid: null,
  host: null,
  gatewayPort: null,
  gatewayUrl: null,
  llmPort: null,
  embeddingPort: null,
  chatModel: null,
  embeddingModel: null,
  embeddingUrl: null,
  llmPid: null,
  embeddingPid: null,
  pidStart: null,
  llmPidStart: null,
  embeddingPidStart: null,
  logFile: null,
  startedAt: null,
};

// The pid fields of our `chat` or `embedding` engine, with the start time that proves them ours
// (engines started through the management API are not recorded).
function enginePids(engine: EngineView): StateUpdate {
  // One in the gateway's process has no pid of its own: stopping the gateway stops it.
  if (engine.placement === "gateway") return { embeddingPid: null, embeddingPidStart: null };
  const start = processStartTime(engine.pid) ?? null;
  if (engine.id === "chat") return { llmPid: engine.pid, llmPidStart: start };
  if (engine.id === "embedding") return { embeddingPid: engine.pid, embeddingPidStart: start };
  return {};
}

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
import { existsSync } from "node:fs";
import { ConfigurationError, ConflictError, errorMessage, ServiceError } from "../core/errors.ts";
import { setupLogger } from "../core/logging.ts";
import { localPath, runnableModule } from "../core/module_location.ts";
import { loadConfig } from "../config/env.ts";
import { ensureHfMirrorConfigured, getHfEndpoint } from "../config/network_region.ts";
import { OutputPaths } from "../config/output_paths.ts";
import { SvcPorts } from "../config/ports.ts";
import { StateEngineStore } from "../gateway/engines/state_engine_store.ts";
import { gatewayIdentity } from "../gateway/engines/gateway_identity.ts";
import {
  MAX_STORED_RESPONSES_HELP,
  maxStoredResponsesOf,
  openCliCoordinator,
  openCliStateStore,
} from "./_state.ts";
import { importResponseFiles } from "../responses/response_files_import.ts";
import { connectHost } from "../gateway/engines/engine_command.ts";
import type { EngineView, StartEngineRequest } from "../gateway/engines/engine_types.ts";
import { startGateway } from "../gateway/gateway_server.ts";
import { type Dtype, DTYPES } from "../engine/dtype.ts";
import { unknownDemoModel } from "../engine/demo_model_check.ts";
import { DEMO_MODEL_SPECS, isDemoModelId } from "../engine/generated_models/demo_models.ts";
import type { AdmissionLimits } from "../core/inference_types.ts";
import {
  ADMISSION_LIMIT_OPTIONS,
  admissionLimitsHelp,
  admissionLimitsOf,
  choiceOption,
  corsOriginsOption,
  DTYPE_DEFAULT_HELP,
  intOption,
  parseCommandArgs,
  type ParsedArgs,
} from "./args.ts";
import { HTTP_LIMIT_OPTIONS, HTTP_LIMITS_HELP, httpLimitsFrom } from "./_http_limits.ts";
import type { HttpLimits } from "../http/http1/limits.ts";
import {
  alreadyRunning,
  checkRecordedPid,
  claimServeLock,
  defaultServeStatePath,
  isServeLockHeld,
  processStartTime,
  readServeState,
  type ServeState,
  updateServeState,
} from "./serve_state.ts";
import { untilShutdownSignal } from "./signals.ts";
import { sleep } from "../core/sleep.ts";

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

const SPEC = {
  model: { type: "string" },
  "embedding-model": { type: "string" },
  "with-embedding": { type: "boolean" },
  "rerank-model": { type: "string" },
  "no-rerank": { type: "boolean" },
  "embedding-in-gateway": { type: "boolean" },
  dtype: { type: "string" },
  "embedding-dtype": { type: "string" },
  port: { type: "string" },
  host: { type: "string" },
  "llm-port": { type: "string" },
  "embedding-port": { type: "string" },
  device: { type: "string" },
  "allow-fallback-adapter": { type: "boolean" },
  "prefix-cache-mib": { type: "string" },
  offline: { type: "boolean" },
  background: { type: "boolean" },
  "state-file": { type: "string" },
  state: { type: "string" },
  coord: { type: "string" },
  "cors-origins": { type: "string" },
  "load-wait": { type: "string" },
  "log-file": { type: "string" },
  "detached-child": { type: "boolean" },
  ...ADMISSION_LIMIT_OPTIONS,
  "max-in-flight": { type: "string" },
  "max-stored-responses": { type: "string" },
  "restart-unhealthy-after": { type: "string" },
  ...HTTP_LIMIT_OPTIONS,
} as const;
const READY_TIMEOUT_MS = 600_000;

/** Options of {@link llmServe} (for tests and other entry points). */
export interface LlmServeOptions {
  /** How to run this command again for `--background` (default: the main module + `llm serve`). */
  self?: string[];
}

/** Runs `svc llm serve`; resolves with the exit code once everything has stopped. */
export async function llmServe(args: string[], options: LlmServeOptions = {}): Promise<number> {
  const { values } = parseCommandArgs(args, "svc llm serve", SPEC);
  if (values.help) {
    console.log(LLM_SERVE_HELP);
    return 0;
  }
  const logFile = values["log-file"] as string | undefined;
  const out = new Output(logFile);
  try {
    if (values.background) return await background(args, values, options, out);
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

async function foreground(values: ParsedArgs["values"], out: Output): Promise<number> {
  const s = prepare(values);
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
  s: Prepared,
  out: Output,
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

interface Prepared {
  config: ReturnType<typeof loadConfig>;
  host: string;
  port: number;
  model?: string;
  embeddingModel?: string;
  /** The reranker the embedding engine serves beside its model (none with --no-rerank). */
  rerank?: { model?: string };
  dtype?: Dtype;
  embeddingDtype?: Dtype;
  withEmbedding: boolean;
  /** `--embedding-in-gateway`: the embedding engine runs in this process. */
  embeddingInGateway: boolean;
  allowFallbackAdapter: boolean;
  /** `--prefix-cache-mib` of the chat engines (their default when left out). */
  prefixCacheMib?: number;
  llmPort?: number;
  llmPorts: number[];
  embeddingPort?: number;
  embeddingPorts: number[];
  statePath: string;
  /** `--state`: the state store URL (default SVC_STATE_URL or the SQLite file). */
  stateUrl?: string;
  /** `--coord`: the coordinator URL (default SVC_COORD_URL, else this process alone). */
  coordUrl?: string;
  logFile?: string;
  limits: Partial<AdmissionLimits>;
  corsOrigins: "*" | string[];
  loadWaitMs?: number;
  maxInFlight?: number;
  /** `--max-stored-responses` or SVC_MAX_STORED_RESPONSES (the store's default when left out). */
  maxStoredResponses?: number;
  /** `--restart-unhealthy-after` in ms (the supervisor's default when left out). */
  unhealthyRestartMs?: number;
  httpLimits: Partial<HttpLimits>;
}

// The flags checked before anything starts: one clear line for each problem.
function prepare(values: ParsedArgs["values"]): Prepared {
  // The flag first: a bad --device is named as the flag, not as SVC_DEVICE.
  choiceOption(values, "device", ["auto", "webgpu", "cpu", "wasm"]);
  const config = loadConfig({
    overrides: {
      ...(values.device !== undefined ? { device: values.device as string } : {}),
      ...(values.offline ? { offline: true } : {}),
    },
  });
  const dtype = choiceOption(values, "dtype", DTYPES);
  const embeddingDtype = choiceOption(values, "embedding-dtype", DTYPES);
  const corsOrigins = corsOriginsOption(values, "cors-origins") ?? "*";
  const loadWait = intOption(values, "load-wait", { min: 0, max: 3600 });
  const unhealthyAfter = intOption(values, "restart-unhealthy-after", { min: 0, max: 86_400 });
  const host = (values.host as string | undefined) ?? "127.0.0.1";
  const port = intOption(values, "port", { min: 0, max: 65535 }) ?? SvcPorts.GATEWAY_DEFAULT;
  const llmPort = intOption(values, "llm-port", { min: 0, max: 65535 });
  const embeddingPort = intOption(values, "embedding-port", { min: 0, max: 65535 });
  const prefixCacheMib = intOption(values, "prefix-cache-mib", { min: 0, max: 1_048_576 });
  samePorts([["--port", port], ["--llm-port", llmPort], ["--embedding-port", embeddingPort]]);
  const embeddingModel = values["embedding-model"] as string | undefined;
  const rerankModel = values["rerank-model"] as string | undefined;
  if (
    values["no-rerank"] && !values["with-embedding"] && values["embedding-model"] === undefined &&
    values["embedding-dtype"] === undefined && !values["embedding-in-gateway"]
  ) {
    throw new ConfigurationError(
      "--no-rerank is for the embedding engine, which runs only with --with-embedding (or " +
        "--embedding-model); add it, or leave out --no-rerank",
      { param: "no-rerank" },
    );
  }
  if (rerankModel !== undefined && values["no-rerank"]) {
    throw new ConfigurationError(
      "--rerank-model and --no-rerank contradict each other; pass one of them",
      { param: "rerank-model" },
    );
  }
  // A typo of a demo model (`demo/chatt`) is one line now, not an engine that fails later.
  for (const id of [values.model as string | undefined, embeddingModel, rerankModel]) {
    if (id !== undefined && !existsSync(id)) unknownDemoModel(id);
  }
  checkDemoKinds(values);
  const embeddingInGateway = Boolean(values["embedding-in-gateway"]);
  if (embeddingInGateway && embeddingPort !== undefined) {
    throw new ConfigurationError(
      "--embedding-port and --embedding-in-gateway contradict each other: the engine in the " +
        "gateway has no port of its own; pass one of them",
      { param: "embedding-port" },
    );
  }
  const statePath = (values["state-file"] as string | undefined) ?? defaultServeStatePath();
  const preferredLlm = config.sources.llmPort === "default" ? [] : [config.llmPort];
  const llmPorts = llmPort === undefined
    ? [...new Set([...preferredLlm, SvcPorts.getRecommendedLlmPort(), ...SvcPorts.getLlmPorts()])]
    : [];
  const embeddingPorts = embeddingPort === undefined ? [config.embeddingPort] : [];
  const withEmbedding = Boolean(values["with-embedding"]) || embeddingModel !== undefined ||
    embeddingDtype !== undefined || rerankModel !== undefined || embeddingInGateway;
  return {
    config,
    host,
    port,
    model: values.model as string | undefined,
    embeddingModel,
    ...(withEmbedding && !values["no-rerank"] ? { rerank: { model: rerankModel } } : {}),
    dtype,
    embeddingDtype,
    withEmbedding,
    embeddingInGateway,
    allowFallbackAdapter: Boolean(values["allow-fallback-adapter"]),
    prefixCacheMib,
    // An explicit port must be free (409 otherwise); 0 means any free port.
    llmPort: llmPort === 0 ? undefined : llmPort,
    llmPorts,
    embeddingPort: embeddingPort === 0 ? undefined : embeddingPort,
    embeddingPorts,
    statePath,
    stateUrl: values.state as string | undefined,
    coordUrl: values.coord as string | undefined,
    logFile: values["log-file"] as string | undefined,
    limits: admissionLimitsOf(values),
    corsOrigins,
    loadWaitMs: loadWait === undefined ? undefined : loadWait * 1000,
    maxInFlight: intOption(values, "max-in-flight", { min: 1, max: 1_000_000 }),
    maxStoredResponses: maxStoredResponsesOf(values, config.maxStoredResponses),
    unhealthyRestartMs: unhealthyAfter === undefined ? undefined : unhealthyAfter * 1000,
    httpLimits: httpLimitsFrom(values),
  };
}

// The flags agree; now what runs on this machine: no other serve of this state file (its record
// unreadable is no obstacle when no serve holds the lock), and each port named is free.
async function checkMachine(s: Prepared): Promise<void> {
  if (await isServeLockHeld(s.statePath)) throw await alreadyRunning(s.statePath);
  refuseRecordedServe(await readServeState(s.statePath).catch(() => null));
  await checkPorts(s);
}

// A serve the record names that still runs (one of an older version, which took no lock).
function refuseRecordedServe(previous: ServeState | null): void {
  if (
    previous?.pid !== undefined && previous.pid !== Deno.pid &&
    checkRecordedPid(previous.pid, previous.pidStart).status === "ours"
  ) {
    throw new ConflictError(
      `svc llm serve is already running (pid ${previous.pid}, gateway ${
        previous.gatewayUrl ?? "?"
      }); stop it with 'svc llm stop' first`,
    );
  }
}

// Two of the servers asked for one port (0, any free port, excepted): one line naming both flags.
function samePorts(ports: [string, number | undefined][]): void {
  const given = ports.filter((p): p is [string, number] => p[1] !== undefined && p[1] !== 0);
  for (let i = 0; i < given.length; i++) {
    for (let j = i + 1; j < given.length; j++) {
      if (given[i][1] !== given[j][1]) continue;
      throw new ConfigurationError(
        `${given[i][0]} and ${given[j][0]} are both ${given[i][1]}; give them different ports`,
        { code: "port_conflict", param: given[j][0].slice(2) },
      );
    }
  }
}

// Each port named on the command line is checked here, the error naming its own flag.
async function checkPorts(s: Prepared): Promise<void> {
  for (
    const [flag, value] of [["port", s.port], ["llm-port", s.llmPort], [
      "embedding-port",
      s.embeddingPort,
    ]] as const
  ) {
    if (value !== undefined && value !== 0 && !(await SvcPorts.isAvailable(value, s.host))) {
      throw new ConfigurationError(
        `port ${value} on ${s.host} is already in use; stop what runs there or pass ` +
          `--${flag} <other>`,
        { code: "port_in_use", param: flag },
      );
    }
  }
}

async function background(
  args: string[],
  values: ParsedArgs["values"],
  options: LlmServeOptions,
  out: Output,
): Promise<number> {
  const s = prepare(values);
  await checkMachine(s);
  const logFile = join(await OutputPaths.resolve().ensure("logs"), "serve.log");
  await Deno.writeTextFile(logFile, "");
  const self = options.self ?? [runnableModule(Deno.mainModule), "llm", "serve"];
  const config = localPath(new URL("../../deno.json", import.meta.url));
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--no-prompt",
      ...(config !== undefined && existsSync(config) ? ["--config", config] : []),
      "--allow-read",
      "--allow-write",
      "--allow-env",
      "--allow-ffi",
      "--allow-sys",
      "--allow-run",
      "--allow-net",
      ...self,
      ...args.filter((a) => a !== "--background"),
      "--detached-child",
      "--log-file",
      logFile,
    ],
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  child.unref();
  let exited: Deno.CommandStatus | null = null;
  child.status.then((status) => (exited = status));
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    const state = await readServeState(s.statePath).catch(() => null);
    // The child prints the endpoints (random weights and all) to the log last: show those lines.
    const log = (await Deno.readTextFile(logFile).catch(() => "")).split("\n");
    if (state?.pid === child.pid && log.some((l) => l.startsWith("svc: state "))) {
      out.say(`svc: running in the background (pid ${child.pid}); logs: ${logFile}`);
      for (const line of log.filter((l) => /^svc: (gateway|chat|embedding|browser) |!!!/.test(l))) {
        out.say(line);
      }
      out.say(`svc: stop it with 'svc llm stop'`);
      return 0;
    }
    if (exited !== null) {
      const why = await lastErrorLine(logFile);
      throw new ServiceError(why ?? `the background server exited (code ${exited!.code})`);
    }
    await sleep(100);
  }
  try {
    Deno.kill(child.pid, "SIGTERM");
  } catch { /* gone */ }
  throw new ServiceError(`the background server was not ready in time; see ${logFile}`);
}

async function lastErrorLine(logFile: string): Promise<string | undefined> {
  const text = await Deno.readTextFile(logFile).catch(() => "");
  const line = text.split("\n").filter((l) => l.startsWith("svc: ")).at(-1);
  return line?.slice("svc: ".length);
}

function printEndpoints(
  out: Output,
  gatewayUrl: string,
  chat: EngineView,
  emb: EngineView | undefined,
  statePath: string,
): void {
  const about = (v: EngineView) =>
    (v.dtype ? ` (${v.dtype})` : "") + (v.randomWeights ? " — RANDOM weights (demo model)" : "") +
    // No model named and the default one could not be loaded: say which flag names one.
    (v.randomWeights && v.model === null
      ? `; name a real model with ${v.kind === "embedding" ? "--embedding-model" : "--model"}`
      : "");
  const served = emb ? emb.models.length > 1 ? "embeddings, rerank, " : "embeddings, " : "";
  out.say(
    `svc: gateway   ${gatewayUrl}  (chat, completions, ${served}tokenize, models; management)`,
  );
  out.say(`svc: chat      ${chat.models.join(", ")} at ${chat.baseUrl}${about(chat)}`);
  if (emb) {
    const where = emb.placement === "gateway" ? "in the gateway's process" : `at ${emb.baseUrl}`;
    out.say(`svc: embedding ${emb.models.join(", ")} ${where}${about(emb)}`);
  }
  out.say(`svc: browser   ${gatewayUrl.replace(/\/v1$/, "/")}  (playground and dashboard)`);
  out.say(`svc: state     ${statePath} — Ctrl-C or 'svc llm stop' stops everything`);
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

// A demo model named with the flag of another kind (`--model demo/embed`): its kind is known
// without loading it, so say at once which flag takes it.
function checkDemoKinds(values: ParsedArgs["values"]): void {
  const flags = {
    model: "chat",
    "embedding-model": "embedding",
    "rerank-model": "rerank",
  } as const;
  const flagOf = { chat: "--model", embedding: "--embedding-model", rerank: "--rerank-model" };
  const called = { chat: "a chat model", embedding: "an embedding model", rerank: "a reranker" };
  for (const [flag, kind] of Object.entries(flags)) {
    const id = values[flag];
    if (typeof id !== "string" || !isDemoModelId(id)) continue;
    const actual = DEMO_MODEL_SPECS[id].kind;
    if (actual === kind) continue;
    throw new ConfigurationError(
      `${id} is ${called[actual]}, not ${called[kind]}; pass it as ${flagOf[actual]} ${id}` +
        (actual === "chat" ? "" : " (svc llm serve has no --kind)"),
      { param: flag },
    );
  }
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

function urlOf(host: string, port: number): string {
  const h = connectHost(host);
  return `http://${h.includes(":") ? `[${h}]` : h}:${port}/v1`;
}

// Prints to the console, or to the log file when detached (no terminal to print to).
class Output {
  #file: Deno.FsFile | null = null;
  #encoder = new TextEncoder();

  constructor(logFile: string | undefined) {
    if (logFile) this.#file = Deno.openSync(logFile, { append: true, create: true });
  }

  say(line: string): void {
    if (this.#file) this.line(line);
    else console.log(line);
  }

  line(line: string): void {
    if (this.#file) this.#file.writeSync(this.#encoder.encode(line + "\n"));
    else console.error(line);
  }

  close(): void {
    this.#file?.close();
    this.#file = null;
  }
}

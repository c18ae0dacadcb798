/**
 * `svc llm gateway`: a gateway that starts no engines. Its backends are running OpenAI-compatible
 * servers (other Svc engines, vLLM, llama.cpp, …) named by base URL; what each serves comes from
 * its `/v1/models` (a backend not answering yet is tried again every few seconds). Engine
 * registrations, stored responses, keys and usage live in the state store, so several replicas on
 * one database serve the same engines, chains and keys.
 *
 * @module
 */
import { loadConfig, readEnvVariable } from "../config/env.ts";
import { OutputPaths } from "../config/output_paths.ts";
import { SvcPorts } from "../config/ports.ts";
import { getLogger } from "../core/logging.ts";
import {
  discoverBackend,
  type DiscoveredBackend,
  parseBackendList,
} from "../gateway/backend_discovery.ts";
import type { BackendInstanceConfig } from "../gateway/backend_config.ts";
import { StateEngineStore } from "../gateway/engines/state_engine_store.ts";
import { startGateway } from "../gateway/gateway_server.ts";
import { corsOriginsOption, intOption, parseCommandArgs } from "./args.ts";
import { HTTP_LIMIT_OPTIONS, HTTP_LIMITS_HELP, httpLimitsFrom } from "./_http_limits.ts";
import {
  MAX_STORED_RESPONSES_HELP,
  maxStoredResponsesOf,
  openCliCoordinator,
  openCliStateStore,
} from "./_state.ts";
import { untilShutdownSignal } from "./signals.ts";

/** Help text of `svc llm gateway`. */
export const LLM_GATEWAY_HELP =
  `svc llm gateway — a gateway over running servers (starts no engines)

Usage: svc llm gateway [--port <n>] --backend <url> [--backend <url>…] [--state <url>]
                       [--coord <url>]

  --backend <url>          OpenAI-compatible base URL ending in /v1 (repeatable; default
                           SVC_BACKENDS, comma-separated). Models come from its /v1/models.
                           Without any, the gateway serves engines registered through the
                           management API (POST /v1/management/engines/register).
                           [env: SVC_BACKENDS]
  --state <url>            shared state: sqlite:<path> or postgres://user:pass@host:port/db
                           (default SVC_STATE_URL, else sqlite:<SVC_HOME>/state.db). Replicas
                           on one database share engines, stored responses, keys and usage.
                           [env: SVC_STATE_URL]
  --coord <url>            what replicas share at once: redis://host:port (default
                           SVC_COORD_URL; unset: this process alone). Holds keys' rpm/tpm
                           limits across replicas. [env: SVC_COORD_URL]
  --port <n>               port (default ${SvcPorts.GATEWAY_DEFAULT}; 0 picks a free one)
  --host <addr>            listen address (default 127.0.0.1)
  --cors-origins <list>    web origins allowed on the inference API ('*' default, 'none', list)
  --max-in-flight <n>      most requests proxied at once; more get 503 (default 1024)
  --max-messages <n>       most input items of one /v1/responses request (default 2048,
                           OpenAI's cap; the backends count chat messages themselves)
${MAX_STORED_RESPONSES_HELP}

HTTP limits:
${HTTP_LIMITS_HELP}

Keys: SVC_ADMIN_API_KEY is the admin key (management API, 'svc llm keys'); once it is set every
inference request needs a key too (one made with 'svc llm keys create', or the admin key).
SVC_CHAT_API_KEY, when set, is one more inference key. ENGINE_API_KEY is sent to the backends.
Permissions: --allow-net (listen, backends, PostgreSQL) --allow-read --allow-write=<SVC_HOME>
--allow-env --allow-ffi --allow-sys.`;

const SPEC = {
  backend: { type: "string", multiple: true },
  state: { type: "string" },
  coord: { type: "string" },
  port: { type: "string" },
  host: { type: "string" },
  "cors-origins": { type: "string" },
  "max-in-flight": { type: "string" },
  "max-messages": { type: "string" },
  "max-stored-responses": { type: "string" },
  ...HTTP_LIMIT_OPTIONS,
} as const;

// How often a backend that did not answer its /v1/models is asked again.
const RETRY_MS = 5000;

/** Runs `svc llm gateway`; resolves with the exit code once it has stopped. */
export async function llmGateway(args: string[]): Promise<number> {
  const { values } = parseCommandArgs(args, "svc llm gateway", SPEC);
  if (values.help) {
    console.log(LLM_GATEWAY_HELP);
    return 0;
  }
  const config = loadConfig();
  const flagged = values.backend as string[] | undefined;
  const envList = readEnvVariable("SVC_BACKENDS");
  const urls = flagged?.length ? flagged : envList ? parseBackendList(envList) : [];
  const host = (values.host as string | undefined) ?? "127.0.0.1";
  const maxStoredResponses = maxStoredResponsesOf(values, config.maxStoredResponses);
  const port = intOption(values, "port", { min: 0, max: 65535 }) ?? SvcPorts.GATEWAY_DEFAULT;
  const paths = OutputPaths.resolve();
  const logger = getLogger("gateway");
  const apiKey = config.engineApiKey ?? null;
  const found = await Promise.all(
    urls.map((url, i) => discoverBackend(url, `backend-${i + 1}`, { apiKey })),
  );
  const state = await openCliStateStore(values.state as string | undefined, paths);
  let coordinator;
  let server;
  try {
    coordinator = await openCliCoordinator(values.coord as string | undefined);
    server = await startGateway({
      hostname: host,
      port,
      apiKey: config.chatApiKey,
      adminApiKey: config.adminApiKey,
      inferenceNeedsKey: true,
      state,
      coordinator,
      cors: { origins: corsOriginsOption(values, "cors-origins") ?? "*" },
      maxInFlight: intOption(values, "max-in-flight", { min: 1, max: 1_000_000 }),
      maxMessages: intOption(values, "max-messages", { min: 1, max: 1_000_000_000 }),
      maxStoredResponses,
      httpLimits: httpLimitsFrom(values),
      backends: found.flatMap((f) => f.backends),
      management: { home: paths.base, store: new StateEngineStore(state), remoteOnly: true },
    });
  } catch (err) {
    await coordinator?.close();
    await state.close();
    throw err;
  }
  const dispatcher = server.gateway.dispatcher;
  // Which models rerank or have random weights, as each backend listed them.
  const learn = (f: DiscoveredBackend) => {
    for (const b of f.backends) {
      const backend = dispatcher.backend(b.id);
      if (backend && f.facts) backend.modelFacts = f.facts;
    }
  };
  for (const f of found) learn(f);
  const addFound = (backends: BackendInstanceConfig[]) => {
    for (const b of backends) {
      dispatcher.addBackend(b);
      void server.gateway.checker.check(dispatcher.backends().find((x) => x.id === b.id)!);
    }
  };
  const waiting = found.map((f, i) => ({ ...f, id: `backend-${i + 1}` })).filter((f) => f.error);
  for (const w of waiting) logger.warn(`backend not ready yet, retrying: ${w.error}`);
  const retry = setInterval(async () => {
    for (const w of [...waiting]) {
      const again = await discoverBackend(w.url, w.id, { apiKey });
      if (again.error) continue;
      waiting.splice(waiting.indexOf(w), 1);
      addFound(again.backends);
      learn(again);
      logger.info?.(
        `backend ${w.url} is up: ${again.backends.flatMap((b) => b.models).join(", ")}`,
      );
    }
    if (waiting.length === 0) clearInterval(retry);
  }, RETRY_MS);
  if (waiting.length === 0) clearInterval(retry);
  if (urls.length === 0) {
    // Engines may be registered through the management API (shared by every replica on the
    // state store); until one is, /health/ready answers 503.
    console.log(
      "svc: no --backend or SVC_BACKENDS given: serving the engines registered through " +
        "POST /v1/management/engines/register (none yet means /health/ready answers 503)",
    );
  }
  console.log(
    `svc: gateway ${server.baseUrl} over ${urls.length} backend(s); state ${state.description}; ` +
      `coordination ${coordinator.kind === "redis" ? "Redis" : "this process"}`,
  );
  try {
    await untilShutdownSignal();
    console.log("svc: stopping — draining requests");
    return 0;
  } finally {
    clearInterval(retry);
    await server.stop();
    await coordinator.close();
    await state.close();
  }
}

/**
 * The flags of `svc llm serve`, read and checked before anything starts: one clear line for each
 * problem (a bad value, two flags that contradict each other, a demo model of another kind).
 *
 * @module
 */
import { existsSync } from "node:fs";
import { ConfigurationError } from "../core/errors.ts";
import { loadConfig } from "../config/env.ts";
import { SvcPorts } from "../config/ports.ts";
import { type Dtype, DTYPES } from "../engine/dtype.ts";
import { unknownDemoModel } from "../engine/demo_model_check.ts";
import { DEMO_MODEL_SPECS, isDemoModelId } from "../engine/generated_models/demo_models.ts";
import type { AdmissionLimits } from "../core/inference_types.ts";
import type { HttpLimits } from "../http/http1/limits.ts";
import {
  ADMISSION_LIMIT_OPTIONS,
  admissionLimitsOf,
  choiceOption,
  corsOriginsOption,
  intOption,
  type ParsedArgs,
} from "./args.ts";
import { HTTP_LIMIT_OPTIONS, httpLimitsFrom } from "./_http_limits.ts";
import { maxStoredResponsesOf } from "./_state.ts";
import { defaultServeStatePath } from "./serve_state.ts";

/** The flags `svc llm serve` takes. */
export const SERVE_FLAGS = {
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
/** How long serve waits for its engines to be ready. */
export const READY_TIMEOUT_MS = 600_000;

/** What the flags ask for. */
export interface ServeSettings {
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

/** The flags read and checked (a `ConfigurationError` naming the first bad one). */
export function serveSettings(values: ParsedArgs["values"]): ServeSettings {
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

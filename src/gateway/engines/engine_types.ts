/**
 * The data types of the engine manager and the management API (camelCase; the wire form is in
 * `management_routes.ts`).
 *
 * @module
 */
import type { HealthState } from "../backend.ts";
import type { CircuitState } from "../circuit_breaker.ts";
import type { Logger } from "../../core/logging.ts";
import type { Dtype } from "../../engine/dtype.ts";
import type { AdmissionLimits } from "../../core/inference_types.ts";
import type { GatewayModel } from "../dispatcher.ts";
import type { EnginePersistence } from "./engine_store.ts";
import type { EngineSupervisorOptions } from "./engine_supervisor.ts";
import type { HealthChecker } from "../health_checker.ts";
import type { HttpLimits } from "../../http/http1/limits.ts";
import type { EngineKind } from "../../core/model_kind.ts";

/** What an engine id may be: 1-64 letters, digits, '.', '_', ':' or '-' (a URL path segment). */
export const ENGINE_ID_PATTERN: RegExp = /^[A-Za-z0-9._:-]{1,64}$/;

/** Where an engine runs: started by this gateway, or registered by URL. */
export type EngineOrigin = "managed" | "remote";
/** Lifecycle state of an engine. */
export type EngineState = "starting" | "ready" | "draining" | "stopped" | "error";

/**
 * Requests the gateway sends a started engine at once, by kind: twice what the engine batches
 * (16 chat sequences, 64 embedding inputs), so a batch never waits on the gateway while the rest
 * waits here, where the scheduling policy orders it. A smaller limit caps the engine's batches
 * (16 for embeddings cost a third of their throughput in `bench/gateway.ts`).
 */
export const MANAGED_MAX_CONCURRENCY: Readonly<Record<EngineKind, number>> = {
  chat: 32,
  embedding: 128,
};

/** An engine as the management API shows it (no key). */
export interface EngineView {
  /** Unique id (the management API's path segment). */
  id: string;
  /** Started by the gateway (`managed`) or registered (`remote`). */
  origin: EngineOrigin;
  /** What it serves. */
  kind: EngineKind;
  /** The model asked for (null: the default model of the kind). */
  model: string | null;
  /** Model ids clients can use for it. */
  models: string[];
  /**
   * Those of `models` that rerank (`/v1/rerank`), as a started engine lists them once ready; an
   * embedding engine runs them beside its embedding model. Empty for a registered engine.
   */
  rerankers: string[];
  /**
   * A started engine loading the default reranker beside its model, whose id it has not listed
   * yet (`rerank` without a model): a rerank request for a model the gateway does not know may be
   * for it. Not on the wire.
   */
  loadsDefaultReranker?: boolean;
  /** Its OpenAI-compatible base URL (ending in /v1). */
  baseUrl: string;
  /** Lifecycle state. */
  state: EngineState;
  /** Why it is not ready, when it is not. */
  message: string | null;
  /**
   * Where a started engine runs: its own process, or the gateway's (`placement: "gateway"`);
   * null for a remote one.
   */
  placement: EnginePlacement | null;
  /** Process id of a started engine (the gateway's for one in it); null for a remote one. */
  pid: number | null;
  /** Port of a started engine; null for a remote one and one in the gateway. */
  port: number | null;
  /** Device of a started engine, as asked. */
  device: string | null;
  /** Weight precision loaded (once ready), else the one asked for, else null. */
  dtype: string | null;
  /** How often the supervisor restarted it. */
  restarts: number;
  /** Whether it serves a demo model with random weights. */
  randomWeights: boolean;
  /** Last health probe result; null before the first. */
  health: HealthState | null;
  /** Circuit breaker state; null before it is routed to. */
  circuit: CircuitState | null;
  /** Requests in flight. */
  inFlight: number;
  /** Seconds since the epoch. */
  createdAt: number;
}

/**
 * Where a started engine runs: `process` (its own, supervised and restarted; the default) or
 * `gateway` (in the gateway's process, reached without a socket; embedding engines only).
 */
export type EnginePlacement = "process" | "gateway";

/** A request to start (or reuse) an engine. */
export interface StartEngineRequest {
  /** Model to serve (default: the kind's default model). */
  model?: string;
  /** Default: guessed from the model id (demo/embed and embedding-like names are embedding). */
  kind?: EngineKind;
  /** Device (default: the gateway's). */
  device?: string;
  /** Weights to load (one of `DTYPES`); left out, the device's best the model has. */
  dtype?: Dtype;
  /** Default: chosen from SvcPorts (8001/8901 for chat, 8090 for embeddings), then any free one. */
  port?: number;
  /** Id to give the engine (default: derived from the model). */
  id?: string;
  /**
   * Also serve a reranker in the same engine process (embedding engines of `svc llm serve`): this
   * model, or the default reranker. Not stored: the command line asks for it each time.
   */
  rerank?: { model?: string };
  /**
   * `gateway`: run it in the gateway's process (embedding engines only): no second hop for each
   * request, but no isolation and no restarts, and it is not stored (`persist` is ignored).
   * Default `process`.
   */
  placement?: EnginePlacement;
  /** Reuse an engine that already serves the model (default true). */
  reuse?: boolean;
  /**
   * Start it again when the gateway restarts (default true; engines the `serve` command line
   * asks for say false, as the next command line says what it wants).
   */
  persist?: boolean;
}

/** A request to register a running OpenAI-compatible server. */
export interface RegisterEngineRequest {
  /** Id to give the backend (default: derived from the URL). */
  id?: string;
  /** Its OpenAI-compatible base URL (ending in /v1). */
  baseUrl: string;
  /** What it serves. */
  kind: EngineKind;
  /** Key sent upstream (never shown back). */
  apiKey?: string | null;
  /** Default: asked from the server's `/v1/models`. */
  models?: string[];
  /**
   * Every model of it reranks (`/v1/rerank`; registered with kind `rerank`). Left out, those the
   * server lists with `kind: "rerank"` do.
   */
  rerank?: boolean;
  /** Extra model names routed to it, alias to upstream name. */
  aliases?: Record<string, string>;
  /** Routing weight (default 1). */
  weight?: number;
  /** Requests it takes at once. */
  maxConcurrency?: number;
  /** Cost per 1k tokens (for `cost_optimized`). */
  cost?: number;
  /** Per-request timeout in ms. */
  timeoutMs?: number;
}

/** The cluster as a whole. */
export interface ClusterStatus {
  /** Whether some backend is ready. */
  ready: boolean;
  /** Scheduling policy in use. */
  policy: string;
  /** Seconds since the gateway started. */
  uptimeSeconds: number;
  /** Engines by state. */
  engines: Record<EngineState, number> & { total: number };
  /** Models served and by which backends. */
  models: GatewayModel[];
  /** Wait queues, one per pool. */
  queues: { name: string; queueLength: number; maxQueue: number; rejected: number }[];
  /** Requests since start. */
  requests: number;
  /** Requests that failed. */
  failed: number;
  /** Requests the caller cancelled. */
  cancelled: number;
  /** Retries on another backend. */
  retries: number;
}

/** Options of `EngineManager`. */
export interface EngineManagerOptions {
  /** SVC_HOME of started engines (their model cache is `<home>/hub`). */
  home: string;
  /** Where registrations persist (none when left out). */
  store?: EnginePersistence;
  /**
   * Starts no engines (`svc llm gateway`): `startEngine` is refused, registrations of running
   * servers work, and the started engines of the state store are left to their gateway.
   */
  remoteOnly?: boolean;
  /** Listen address of started engines (default 127.0.0.1). */
  hostname?: string;
  /** Preferred ports by kind (default SvcPorts: getLlmPorts() / EMBEDDING_DEFAULT). */
  portCandidates?: (kind: EngineKind) => number[];
  /** Key started engines require and the gateway sends them. */
  engineApiKey?: string;
  /** Hub endpoint given to started engines. */
  hubEndpoint?: string;
  /** Started engines never download. */
  offline?: boolean;
  /** Default device of started engines. */
  device?: string;
  /** Let started engines run `webgpu` on a software adapter (slow; for testing). */
  allowFallbackAdapter?: boolean;
  /** `--prefix-cache-mib` of started chat engines (their default where left out). */
  prefixCacheMib?: number;
  /** Per-request limits of started engines (their defaults where left out). */
  engineLimits?: Partial<AdmissionLimits>;
  /** HTTP limits of started engines' servers (default `DEFAULT_HTTP_LIMITS`). */
  httpLimits?: Partial<HttpLimits>;
  /** Probes registered engines at once, so their state is known. */
  checker?: HealthChecker;
  /** Settings of the supervisors (restart back-off, timeouts, command). */
  supervisor?: Omit<EngineSupervisorOptions, "onStateChange" | "onOutput">;
  /** `maxConcurrency` of started engines (default {@link MANAGED_MAX_CONCURRENCY} by kind). */
  managedMaxConcurrency?: number;
  /** Every line a started engine prints. */
  onOutput?: (engineId: string, line: string) => void;
  /** A started engine is ready: the first time and after every restart (a new pid). */
  onReady?: (engine: EngineView) => void;
  /** Log of the manager. */
  logger?: Logger;
}

/**
 * The data types of the engine manager and the management API (camelCase; the wire form is in
 * `management_routes.ts`).
 *
 * @module
 */
import type { HealthState } from "./backend.ts";
import type { CircuitState } from "./circuit_breaker.ts";
import type { Logger } from "../core/logging.ts";
import type { Dtype } from "../engine/dtype.ts";
import type { AdmissionLimits } from "../engine/admission_limits.ts";
import type { GatewayModel } from "./dispatcher.ts";
import type { EngineStore } from "./engine_store.ts";
import type { EngineSupervisorOptions } from "./engine_supervisor.ts";
import type { HealthChecker } from "./health_checker.ts";
import type { HttpLimits } from "../server/http1/limits.ts";

/** What an engine does, as the management API names it. */
export type EngineKind = "chat" | "embedding";
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
  id: string;
  origin: EngineOrigin;
  kind: EngineKind;
  /** The model asked for (null: the default model of the kind). */
  model: string | null;
  /** Model ids clients can use for it. */
  models: string[];
  baseUrl: string;
  state: EngineState;
  message: string | null;
  pid: number | null;
  port: number | null;
  device: string | null;
  /** Weight precision loaded (once ready), else the one asked for, else null. */
  dtype: string | null;
  restarts: number;
  randomWeights: boolean;
  health: HealthState | null;
  circuit: CircuitState | null;
  inFlight: number;
  /** Seconds since the epoch. */
  createdAt: number;
}

/** A request to start (or reuse) an engine. */
export interface StartEngineRequest {
  model?: string;
  /** Default: guessed from the model id (demo/embed and embedding-like names are embedding). */
  kind?: EngineKind;
  device?: string;
  /** Weights to load (one of `DTYPES`); left out, the device's best the model has. */
  dtype?: Dtype;
  /** Default: chosen from SvcPorts (8001/8901 for chat, 8090 for embeddings), then any free one. */
  port?: number;
  id?: string;
  /**
   * Also serve a reranker in the same engine process (embedding engines of `svc llm serve`): this
   * model, or the default reranker. Not stored: the command line asks for it each time.
   */
  rerank?: { model?: string };
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
  id?: string;
  baseUrl: string;
  kind: EngineKind;
  apiKey?: string | null;
  /** Default: asked from the server's `/v1/models`. */
  models?: string[];
  aliases?: Record<string, string>;
  weight?: number;
  maxConcurrency?: number;
  cost?: number;
  timeoutMs?: number;
}

/** The cluster as a whole. */
export interface ClusterStatus {
  ready: boolean;
  policy: string;
  uptimeSeconds: number;
  engines: Record<EngineState, number> & { total: number };
  models: GatewayModel[];
  queues: { name: string; queueLength: number; maxQueue: number; rejected: number }[];
  requests: number;
  failed: number;
  cancelled: number;
  retries: number;
}

/** Options of `EngineManager`. */
export interface EngineManagerOptions {
  /** SVC_HOME of started engines (their model cache is `<home>/hub`). */
  home: string;
  /** Where registrations persist (none when left out). */
  store?: EngineStore;
  /** Listen address of started engines (default 127.0.0.1). */
  hostname?: string;
  /** Preferred ports by kind (default SvcPorts: getLlmPorts() / EMBEDDING_DEFAULT). */
  portCandidates?: (kind: EngineKind) => number[];
  /** Key started engines require and the gateway sends them. */
  engineApiKey?: string;
  hubEndpoint?: string;
  offline?: boolean;
  /** Default device of started engines. */
  device?: string;
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
  logger?: Logger;
}

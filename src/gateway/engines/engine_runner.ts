/**
 * What the engine manager needs of a started engine, wherever it runs: a child process (the
 * {@link EngineSupervisor}) or the gateway's own process ({@link InGatewayEngine}).
 *
 * @module
 */
import type { Logger } from "../../core/logging.ts";
import type { AdmissionLimits } from "../../engine/admission_limits.ts";
import type { Dtype } from "../../engine/dtype.ts";
import type { BackendTransport } from "../transport.ts";
import type { SupervisorState } from "./engine_supervisor.ts";

/** A started engine as the manager sees it. */
export interface EngineRunner {
  /** What was asked for: the reranker beside the model, the weights. */
  readonly spec: { readonly rerank?: { model?: string }; readonly dtype?: Dtype };
  /** Where it is in its life. */
  readonly state: SupervisorState;
  /** Why it is in `error` or `restarting`, or null. */
  readonly message: string | null;
  /** The process that runs it, or null. */
  readonly pid: number | null;
  /** Restarts after crashes so far. */
  readonly restarts: number;
  /** Model ids it serves, once ready. */
  readonly models: readonly string[];
  /** Those of {@link models} that rerank, once ready. */
  readonly rerankers: readonly string[];
  /** True when it serves a generated demo model. */
  readonly randomWeights: boolean;
  /** Weight precision it loaded, once ready. */
  readonly dtype: string | null;
  /** `http://…/v1` of the engine, as the gateway addresses it. */
  readonly baseUrl: string;
  /** How the gateway reaches it; left out: over HTTP at {@link baseUrl}. */
  readonly transport?: BackendTransport;
  /** Starts it; resolves once it is ready, rejects when it cannot start. */
  start(): Promise<void>;
  /** Stops it and frees what it holds. */
  stop(): Promise<void>;
}

/** What an in-gateway engine serves. */
export interface InGatewayEngineSpec {
  /** Its id in the gateway (part of the base URL it is addressed by). */
  id: string;
  /** Model to serve; left out: the default embedding model (or its demo stand-in). */
  model?: string;
  /** Only embedding engines run in the gateway. */
  kind: "embedding";
  /** Also serve a reranker: this model, or the default reranker. */
  rerank?: { model?: string };
  /** auto | webgpu | cpu | wasm. */
  device?: string;
  /** Let `device: webgpu` run on a software adapter. */
  allowFallbackAdapter?: boolean;
  /** One of `DTYPES`; left out, the device's best the model has. */
  dtype?: Dtype;
  /** Never download. */
  offline?: boolean;
  /** SVC_HOME: the model cache is `<home>/hub`. */
  home: string;
  /** Hub endpoint (already resolved for the region). */
  hubEndpoint?: string;
  /** Per-request limits. */
  limits?: Partial<AdmissionLimits>;
  /** Largest request body in bytes. */
  maxBodyBytes?: number;
}

/** Makes an engine that runs in the gateway's process (in_gateway_engine.ts, loaded lazily). */
export type InGatewayEngineFactory = (
  spec: InGatewayEngineSpec,
  options?: { onStateChange?: (state: SupervisorState) => void; logger?: Logger },
) => EngineRunner;

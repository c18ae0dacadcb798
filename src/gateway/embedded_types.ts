/**
 * What the embedded control plane takes and gives, apart from the code that starts it: the client
 * names these types without loading the engines (see `src/client/_client_init.ts`).
 *
 * @module
 */
import type { EnvMap } from "../config/env.ts";
import type { Device, InferenceEngine } from "../core/inference_types.ts";
import type { DispatcherOptions } from "./dispatcher.ts";
import type { Gateway } from "./gateway.ts";
import type { HttpLogger } from "../http/logger.ts";
import type { FetchLike } from "../core/fetch_with_timeout.ts";

/** Base URL the client uses for the embedded gateway (never resolved: no socket). */
export const EMBEDDED_BASE_URL = "http://embedded.svc/v1";

/** Options of `startEmbeddedControlPlane` (`@svc/cli/gateway`). */
export interface EmbeddedControlPlaneOptions {
  /**
   * Chat model to load (a hub id, a folder or a demo id like `demo/chat`); null for none.
   * Default: SVC_CHAT_MODEL, else the default chat model (the demo model when it cannot be had).
   */
  chatModel?: string | null;
  /** Embedding model to load; null for none. Default: SVC_EMBEDDING_MODEL, else the default. */
  embeddingModel?: string | null;
  /**
   * Reranker (cross-encoder) to load for `rerank()`: a hub id (e.g. `Xenova/ms-marco-MiniLM-L-6-v2`),
   * a folder or `demo/rerank`. Default: none, as loading one costs time and memory most clients
   * never use.
   */
  rerankModel?: string | null;
  /** Ready engines to serve as well (they are disposed by `close()` too). */
  engines?: InferenceEngine[];
  /** Model cache (default: the `hub` output folder). */
  cacheDir?: string;
  /** Engine device (default SVC_DEVICE). */
  device?: Device;
  /** Scheduling settings of the gateway. */
  dispatcher?: DispatcherOptions;
  /** HTTP log of the gateway and engine apps (default: the shared logger). */
  logger?: HttpLogger;
  /** Stands in for the process environment. */
  env?: Readonly<EnvMap>;
  /** `.env` file to read (null: none). */
  envFile?: string | null;
}

/** A running in-process control plane. */
export interface EmbeddedControlPlane {
  /** Base URL the client uses (no socket behind it). */
  readonly baseUrl: string;
  /** Sends a request to the gateway's handler (same abort semantics as `fetch`). */
  readonly fetch: FetchLike;
  /** The gateway inside. */
  readonly gateway: Gateway;
  /** Model ids served, by kind (the first of each kind). */
  readonly models: { chat: string | null; embedding: string | null; rerank: string | null };
  /** Stops the gateway and frees every engine. */
  close(): Promise<void>;
}

/** The signature of `startEmbeddedControlPlane`, which the client loads only in embedded mode. */
export type StartEmbeddedControlPlane = (
  options?: EmbeddedControlPlaneOptions,
) => Promise<EmbeddedControlPlane>;

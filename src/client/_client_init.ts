// What each of UnifiedInferenceClient's factories hands its constructor: the mode, the chat and
// embedding endpoints with their keys, and the fetch to use, found the way that mode finds them.
import { loadConfig } from "../config/env.ts";
import { ConfigurationError, ValidationError } from "../core/errors.ts";
import { importLazily } from "../core/lazy_module.ts";
import type { EmbeddedControlPlane, StartEmbeddedControlPlane } from "../gateway/embedded_types.ts";
import {
  checkConfig,
  checkUrl,
  type Endpoint,
  endpoint,
  findGateway,
  httpPolicy,
} from "./_client_setup.ts";
import { ClientHttp, type FetchLike } from "./_http.ts";
import { startEngineAndWait } from "./_management.ts";
import { detectEndpoints, type DetectionOptions } from "./detect_endpoints.ts";
import type {
  CreateForModelOptions,
  UnifiedClientConfig,
  UnifiedClientMode,
  UnifiedClientOptions,
} from "./types.ts";

/** What a client is built from. */
export interface ClientInit {
  mode: UnifiedClientMode;
  chat: Endpoint;
  embedding: Endpoint;
  config: UnifiedClientConfig;
  fetch?: FetchLike;
  controlPlaneUrl?: string;
  embedded?: EmbeddedControlPlane;
  probeTimeoutMs?: number;
}

/** `create()`: through `controlPlaneUrl`, through `embedded`, else by detection. */
export async function initFromOptions(options: UnifiedClientOptions): Promise<ClientInit> {
  checkConfig(options);
  if (options.controlPlaneUrl !== undefined && options.embedded) {
    throw new ConfigurationError(
      "pass either controlPlaneUrl (use a running gateway) or embedded (run one in this " +
        "process), not both",
      { param: "controlPlaneUrl" },
    );
  }
  if (options.embedded) return await initEmbedded(options);
  if (options.controlPlaneUrl !== undefined) {
    const base = checkUrl(options.controlPlaneUrl, "controlPlaneUrl");
    const config = loadConfig({ env: options.env, envFile: options.envFile });
    const key = options.apiKey ?? config.chatApiKey ?? null;
    return {
      mode: "control_plane",
      chat: endpoint(base, options.llmModel ?? config.chatModel, "control_plane", key),
      embedding: endpoint(
        base,
        options.embeddingModel ?? config.embeddingModel,
        "control_plane",
        options.embeddingApiKey ?? key,
      ),
      config: options,
      fetch: options.fetch,
      controlPlaneUrl: base,
      probeTimeoutMs: options.probeTimeoutMs,
    };
  }
  for (const field of ["llmBaseUrl", "embeddingBaseUrl"] as const) {
    if (options[field] !== undefined) checkUrl(options[field], field);
  }
  const found = await detectEndpoints(options);
  return {
    mode: "simple",
    chat: found.chat,
    embedding: found.embedding,
    config: options,
    fetch: options.fetch,
    probeTimeoutMs: options.probeTimeoutMs,
  };
}

/** `createWithControlPlane()`: explicit gateway endpoints; no I/O. */
export function initWithControlPlane(
  llmBaseUrl: string,
  llmModel: string,
  embeddingBaseUrl: string,
  embeddingModel: string,
  config: UnifiedClientConfig & Pick<DetectionOptions, "fetch" | "env" | "envFile">,
): ClientInit {
  checkConfig(config);
  const chatBase = checkUrl(llmBaseUrl, "llmBaseUrl");
  const key = config.apiKey ??
    loadConfig({ env: config.env, envFile: config.envFile }).chatApiKey ?? null;
  return {
    mode: "control_plane",
    chat: endpoint(chatBase, llmModel, "control_plane", key),
    embedding: endpoint(
      checkUrl(embeddingBaseUrl, "embeddingBaseUrl"),
      embeddingModel,
      "control_plane",
      config.embeddingApiKey ?? key,
    ),
    config,
    fetch: config.fetch,
    controlPlaneUrl: chatBase,
  };
}

/** `createForModel()`: an engine for `model` started (or reused) by a gateway, once ready. */
export async function initForModel(
  model: string,
  options: CreateForModelOptions,
): Promise<ClientInit> {
  if ((options as UnifiedClientOptions).embedded) {
    throw new ConfigurationError(
      "createForModel starts engines through a gateway; for a model inside this process use " +
        "create({ embedded: { chatModel } })",
      { param: "embedded" },
    );
  }
  if (typeof model !== "string" || model.trim() === "") {
    throw new ValidationError("model must be a non-empty model id", { param: "model" });
  }
  checkConfig(options);
  const config = loadConfig({ env: options.env, envFile: options.envFile });
  const key = options.apiKey ?? config.chatApiKey ?? null;
  const base = options.controlPlaneUrl !== undefined
    ? checkUrl(options.controlPlaneUrl, "controlPlaneUrl")
    : await findGateway(options, key);
  const http = new ClientHttp(httpPolicy(options), options.fetch);
  const adminKey = options.adminApiKey ?? config.adminApiKey ?? key;
  const ready = await startEngineAndWait(
    http,
    { baseUrl: base, apiKey: adminKey },
    model,
    options,
  );
  const chatModel = ready.kind === "chat" ? model : options.llmModel ?? config.chatModel;
  const embeddingModel = ready.kind === "embedding"
    ? model
    : options.embeddingModel ?? config.embeddingModel;
  return {
    mode: "control_plane",
    chat: endpoint(base, chatModel, "control_plane", key),
    embedding: endpoint(base, embeddingModel, "control_plane", options.embeddingApiKey ?? key),
    config: options,
    fetch: options.fetch,
    controlPlaneUrl: base,
    probeTimeoutMs: options.probeTimeoutMs,
  };
}

// Loads the engines and the gateway in this process.
async function initEmbedded(options: UnifiedClientOptions): Promise<ClientInit> {
  // Loaded only here, so the other modes never load the engine runtime (see lazy_module.ts).
  const { startEmbeddedControlPlane } = await importLazily<
    { startEmbeddedControlPlane: StartEmbeddedControlPlane }
  >(new URL("../gateway/embedded_control_plane.ts", import.meta.url));
  const settings = typeof options.embedded === "object" ? options.embedded : {};
  const plane = await startEmbeddedControlPlane({
    env: options.env,
    envFile: options.envFile,
    ...settings,
  });
  return {
    mode: "embedded",
    chat: endpoint(plane.baseUrl, options.llmModel ?? plane.models.chat, "embedded", null),
    embedding: endpoint(
      plane.baseUrl,
      options.embeddingModel ?? plane.models.embedding,
      "embedded",
      null,
    ),
    config: options,
    fetch: plane.fetch,
    embedded: plane,
    probeTimeoutMs: options.probeTimeoutMs ?? 5000,
  };
}

/**
 * Service detection of the unified client.
 *
 * **The rule.** Chat and embeddings are resolved each on its own:
 * 1. An explicit endpoint wins: the `llmBaseUrl` / `embeddingBaseUrl` option, else
 *    `SVC_CHAT_BASE_URL` / `SVC_EMBEDDING_BASE_URL`. Nothing is probed for that kind.
 * 2. Otherwise the local services are probed, all at once, each with a short timeout (500 ms):
 *    `GET /v1/models`, and `GET /health` when that is not an OpenAI list (a server that asks for a
 *    key also counts as answering). In order of preference: the gateway of a running
 *    `svc llm serve` as its state file records it (`<SVC_HOME>/engines/serve.env`, read when it
 *    names a serve pid and the process may read it; both kinds), the default gateway (8000, both
 *    kinds), that serve's chat engine, the engines in `SvcPorts.getLlmPorts()` order (8001, 8901;
 *    chat) with `SVC_LLM_PORT` tried first when set, then that serve's embedding engine and the
 *    embedding engine (`SVC_EMBEDDING_PORT`, default 8090). Ports are probed on 127.0.0.1. The
 *    kind goes to the first service that answers and lists a model of that kind, else to the
 *    first answering service that may serve it.
 * 3. Only when no local service answered at all, an OpenAI-compatible API from
 *    `COMPAT_BASE_URL` is used for the kinds still missing, with `COMPAT_API_KEY` (or
 *    `SVC_CHAT_API_KEY`) as its key.
 * 4. A kind still without an endpoint is unavailable: calling it raises a ConfigurationError
 *    that says what to start or set.
 *
 * Models: the `llmModel` / `embeddingModel` option, else `SVC_CHAT_MODEL` /
 * `SVC_EMBEDDING_MODEL`, else the first model of the right kind that the chosen endpoint's
 * `/v1/models` lists (our servers say the kind; for others the name decides).
 *
 * Keys (sent as `Authorization: Bearer`): the `apiKey` option wins; else the gateway and explicit
 * endpoints get `SVC_CHAT_API_KEY`, local engines `ENGINE_API_KEY` then `SVC_CHAT_API_KEY`, the
 * cloud API `COMPAT_API_KEY` then `SVC_CHAT_API_KEY`.
 *
 * `findService` is the stricter search among base URLs of one's own: the first that answers with
 * a model list, or an error saying which were tried.
 *
 * @module
 */
import { type EnvMap, loadConfig, type SvcConfig } from "../config/env.ts";
import type { EngineKind } from "../core/model_kind.ts";
import { localCandidates, readServeRecord, trimBase } from "./_local_candidates.ts";
import { probeService } from "./_service_probes.ts";
import { firstOfKind } from "./_wire.ts";
import type { EndpointSource, FetchLike, UnifiedClientConfig } from "./types.ts";

export { findService, probeService } from "./_service_probes.ts";
export type { FindServiceOptions, FoundService, ProbeOutcome } from "./_service_probes.ts";
export { trimBase } from "./_local_candidates.ts";

/** Explicit endpoints, models and keys (they win over the environment and the probes). */
export type ExplicitEndpoints = Pick<
  UnifiedClientConfig,
  "llmBaseUrl" | "llmModel" | "embeddingBaseUrl" | "embeddingModel" | "apiKey" | "embeddingApiKey"
>;

/** Where and how to probe; every field is optional (tests point it at free ports). */
export interface DetectionOptions extends ExplicitEndpoints {
  /** Stands in for the process environment (then it is not read at all). */
  env?: Readonly<EnvMap>;
  /** `.env` file for `loadConfig` (null: none; default ./.env). */
  envFile?: string | null;
  /** Hosts probed, in order (default `["127.0.0.1"]`). */
  hosts?: string[];
  /** Gateway port (default SvcPorts.GATEWAY_DEFAULT); null skips the gateway. */
  gatewayPort?: number | null;
  /** Engine ports in order (default SVC_LLM_PORT when set, then SvcPorts.getLlmPorts()). */
  llmPorts?: number[];
  /** Embedding port (default SVC_EMBEDDING_PORT, 8090); null skips it. */
  embeddingPort?: number | null;
  /** Timeout of one probe in ms (default 500). */
  probeTimeoutMs?: number;
  /** Replaces `fetch` for the probes. */
  fetch?: FetchLike;
  /**
   * State file of `svc llm serve` whose gateway and engines are probed first (default
   * `<SVC_HOME>/engines/serve.env`, read only when the process may read it without a prompt);
   * null: none.
   */
  serveState?: string | null;
}

/** The endpoint chosen for one kind. */
export interface DetectedEndpoint {
  /** Base URL found (ending in /v1); null when none. */
  baseUrl: string | null;
  /** Model to use; null when none is known. */
  model: string | null;
  /** Where it was found. */
  source: EndpointSource;
  /** Key to send; null for none. */
  apiKey: string | null;
}

/** One probe and what it saw. */
export interface ProbeRecord {
  /** Base URL probed. */
  baseUrl: string;
  /** What kind of server was asked for. */
  service: "gateway" | "engine" | "embedding";
  /** Whether it answered. */
  answered: boolean;
  /** Model ids it listed. */
  models: string[];
  /** Why it did not answer, or what it said. */
  detail: string | null;
}

/** What {@link detectEndpoints} found. */
export interface DetectionResult {
  /** Where chat goes. */
  chat: DetectedEndpoint;
  /** Where embeddings go. */
  embedding: DetectedEndpoint;
  /** Every local probe that ran, in order of preference. */
  probes: ProbeRecord[];
}

/**
 * Applies the detection rule of this module.
 *
 * @example
 * ```ts
 * import { detectEndpoints } from "@svc/cli/client";
 * const found = await detectEndpoints({ env: {}, envFile: null, gatewayPort: null, llmPorts: [] });
 * console.log(found.chat.source); // "none": nothing local, no COMPAT_BASE_URL
 * ```
 */
export async function detectEndpoints(options: DetectionOptions = {}): Promise<DetectionResult> {
  const config = loadConfig({ env: options.env, envFile: options.envFile });
  const chat = explicit("chat", options, config);
  const embedding = explicit("embedding", options, config);
  const probes: ProbeRecord[] = [];
  if (chat.baseUrl === null || embedding.baseUrl === null) {
    const candidates = localCandidates(options, config, await readServeRecord(options));
    const outcomes = await Promise.all(
      candidates.map((c) => probeService(c.baseUrl, c.apiKey, options)),
    );
    candidates.forEach((c, i) =>
      probes.push({
        baseUrl: c.baseUrl,
        service: c.service,
        answered: outcomes[i].answered,
        models: outcomes[i].models.map((m) => m.id),
        detail: outcomes[i].detail,
      })
    );
    for (const [kind, target] of [["chat", chat], ["embedding", embedding]] as const) {
      if (target.baseUrl !== null) continue;
      const serving = candidates.map((c, i) => ({ c, o: outcomes[i] }))
        .filter(({ c, o }) => o.answered && c.kinds.includes(kind));
      const pick = serving.find(({ o }) => firstOfKind(o.models, kind) !== null) ?? serving[0];
      if (pick === undefined) continue;
      target.baseUrl = pick.c.baseUrl;
      target.apiKey = pick.c.apiKey;
      target.source = pick.c.service === "gateway" ? "gateway" : "engine";
      target.model ??= firstOfKind(pick.o.models, kind);
    }
    const anyLocal = outcomes.some((o) => o.answered);
    if (!anyLocal && config.compatBaseUrl !== undefined) {
      for (const target of [chat, embedding]) {
        if (target.baseUrl !== null) continue;
        target.baseUrl = trimBase(config.compatBaseUrl);
        target.apiKey = options.apiKey ?? config.compatApiKey ?? config.chatApiKey ?? null;
        target.source = "cloud";
      }
    }
  }
  return { chat, embedding, probes };
}

function explicit(
  kind: EngineKind,
  options: DetectionOptions,
  config: SvcConfig,
): DetectedEndpoint {
  const isChat = kind === "chat";
  const fromOption = isChat ? options.llmBaseUrl : options.embeddingBaseUrl;
  const fromEnv = isChat ? config.chatBaseUrl : config.embeddingBaseUrl;
  const model = (isChat ? options.llmModel : options.embeddingModel) ??
    (isChat ? config.chatModel : config.embeddingModel) ?? null;
  const key = isChat ? options.apiKey : options.embeddingApiKey ?? options.apiKey;
  const url = fromOption ?? fromEnv;
  if (url === undefined) return { baseUrl: null, model, source: "none", apiKey: null };
  return {
    baseUrl: trimBase(url),
    model,
    source: fromOption !== undefined ? "option" : "env",
    apiKey: key ?? config.chatApiKey ?? null,
  };
}

/**
 * The chat base URLs detection probes, in its order of preference, when no chat endpoint is
 * explicit (`svc llm chat` searches them with {@link findService}).
 */
export async function localChatUrls(options: DetectionOptions = {}): Promise<string[]> {
  const config = loadConfig({ env: options.env, envFile: options.envFile });
  return localCandidates(options, config, await readServeRecord(options))
    .filter((c) => c.kinds.includes("chat"))
    .map((c) => c.baseUrl);
}

/**
 * The gateway a running `svc llm serve` recorded in its state file (`serveState`, default
 * `<SVC_HOME>/engines/serve.env`), or null: where `createForModel` looks before the default port.
 */
export async function recordedGatewayUrl(options: DetectionOptions = {}): Promise<string | null> {
  return (await readServeRecord(options))?.gatewayUrl ?? null;
}

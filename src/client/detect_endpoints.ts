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
import { join } from "node:path";
import { type EnvMap, loadConfig, type SvcConfig } from "../config/env.ts";
import { readEnvFile } from "../config/env_file.ts";
import { OutputPaths } from "../config/output_paths.ts";
import { SvcPorts } from "../config/ports.ts";
import { AuthenticationError, errorMessage, ServiceError, SvcException } from "../core/errors.ts";
import { ClientHttp } from "./_http.ts";
import type { EngineKind } from "../core/model_kind.ts";
import { firstOfKind, type ListedModel, listedModels } from "./_wire.ts";
import type { EndpointSource, FetchLike, UnifiedClientConfig } from "./types.ts";

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

interface Candidate {
  baseUrl: string;
  service: ProbeRecord["service"];
  kinds: EngineKind[];
  apiKey: string | null;
}

/** What one probe saw. */
export interface ProbeOutcome {
  /** Whether it answered. */
  answered: boolean;
  /** Models it listed. */
  models: ListedModel[];
  /** Why it did not answer, or what it said. */
  detail: string | null;
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

/**
 * Probes one OpenAI-compatible server: `GET {base}/models`, then `GET /health` beside `/v1`.
 * Resolves (never rejects) with whether it answered, what it lists, and why not.
 *
 * @example
 * ```ts
 * import { probeService } from "@svc/cli/client";
 * const seen = await probeService("http://127.0.0.1:9/v1", null, { probeTimeoutMs: 100 });
 * console.log(seen.answered); // false
 * ```
 */
export async function probeService(
  baseUrl: string,
  apiKey: string | null,
  options: { probeTimeoutMs?: number; fetch?: FetchLike } = {},
): Promise<ProbeOutcome> {
  const timeoutMs = options.probeTimeoutMs ?? 500;
  const send = options.fetch ?? ((r: Request) => fetch(r));
  const headers: Record<string, string> = {};
  if (apiKey) headers.authorization = `Bearer ${apiKey}`;
  const get = async (url: string): Promise<{ status: number; json: unknown }> => {
    const res = await send(new Request(url, { headers, signal: AbortSignal.timeout(timeoutMs) }));
    const text = await res.text();
    let json: unknown = null;
    try {
      json = JSON.parse(text);
    } catch {
      // not JSON: the status still tells something
    }
    return { status: res.status, json };
  };
  try {
    const models = await get(`${baseUrl}/models`);
    if (models.status === 200 && Array.isArray((models.json as { data?: unknown })?.data)) {
      return { answered: true, models: listedModels(models.json), detail: null };
    }
    if (models.status === 401 || models.status === 403) {
      return {
        answered: true,
        models: [],
        detail: apiKey ? `it rejected the key (HTTP ${models.status})` : "it requires a key",
      };
    }
    const health = await get(`${baseUrl.replace(/\/v1$/, "")}/health`);
    if (health.status === 200 || health.status === 503) {
      return {
        answered: true,
        models: [],
        detail: health.status === 503 ? "it is still loading" : null,
      };
    }
    return {
      answered: false,
      models: [],
      detail: `it is not an OpenAI-compatible server (HTTP ${models.status} on /v1/models)`,
    };
  } catch (err) {
    const timedOut = err instanceof DOMException && err.name === "TimeoutError";
    return {
      answered: false,
      models: [],
      detail: timedOut ? `no answer within ${timeoutMs} ms` : `not reachable: ${errorMessage(err)}`,
    };
  }
}

/** Options of {@link findService}. */
export interface FindServiceOptions {
  /** Bearer key sent to every candidate (none when absent or null). */
  apiKey?: string | null;
  /** Timeout of one probe in ms (default 500). */
  probeTimeoutMs?: number;
  /** Replaces `fetch` for the probes. */
  fetch?: FetchLike;
  /**
   * What to do when no candidate answers, ending the error's message (default: start a server
   * with `svc llm serve` or `svc llm run`, or check the URLs).
   */
  hint?: string;
  /**
   * What to check when a server refuses the key, ending that error's message (default: the
   * client's variables and its `apiKey` option).
   */
  keyHint?: string;
}

/** The server {@link findService} found. */
export interface FoundService {
  /** Its base URL, as the candidate was given (without trailing slashes). */
  baseUrl: string;
  /** The models its `/models` lists, with their kinds. */
  models: ListedModel[];
}

/**
 * Finds a server to use among candidate base URLs given in order of preference: `GET
 * {base}/models` at each (all at once), and the first in order that answers with a model list
 * wins. Stricter than the probes of detection, as the answer must be usable: a server that
 * refuses the key ends the search with its AuthenticationError (it is there, the key is wrong),
 * and a missing net permission is thrown as is; a candidate that cannot be reached, times out or
 * answers anything else is passed over. When none answers: a ServiceError (code `no_server`)
 * naming every URL tried, then `hint`.
 *
 * @example
 * ```ts
 * import { findService } from "@svc/cli/client";
 * const { baseUrl, models } = await findService(
 *   ["http://127.0.0.1:8000/v1", "http://127.0.0.1:8001/v1"],
 *   { probeTimeoutMs: 800 },
 * );
 * console.log(baseUrl, models.find((m) => m.kind === "chat")?.id);
 * ```
 */
export async function findService(
  baseUrls: readonly string[],
  options: FindServiceOptions = {},
): Promise<FoundService> {
  const http = new ClientHttp({
    timeoutMs: options.probeTimeoutMs ?? 500,
    maxRetries: 0,
    retryBaseDelayMs: 0,
    maxRetryDelayMs: 0,
    keyHint: options.keyHint,
  }, options.fetch);
  const bases = baseUrls.map((url) => url.trim().replace(/\/+$/, ""));
  const answers = await Promise.allSettled(
    bases.map((baseUrl) =>
      http.json<unknown>({ baseUrl, apiKey: options.apiKey }, "/models", { retry: false })
    ),
  );
  for (const [i, answer] of answers.entries()) {
    if (answer.status === "rejected") {
      const err = answer.reason;
      // Passed over: what cannot be reached or answered with an error. Not: a refused key, a
      // missing permission (trying elsewhere cannot help), a bug.
      if (err instanceof SvcException && !(err instanceof AuthenticationError)) continue;
      throw err;
    }
    if (!Array.isArray((answer.value as { data?: unknown } | null)?.data)) continue;
    return { baseUrl: bases[i], models: listedModels(answer.value) };
  }
  throw new ServiceError(
    `no OpenAI-compatible server answered at ${bases.join(", ") || "(no URL given)"}: ` +
      (options.hint ?? "start one with `svc llm serve` (or `svc llm run`), or check the URLs"),
    { code: "no_server" },
  );
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

/** What detection takes from the state file of a running `svc llm serve`. */
interface ServeRecord {
  gatewayUrl?: string;
  llmPort?: number;
  embeddingUrl?: string;
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

// The serve's state file (keys as src/cli/serve_state.ts writes them), when it records a serve
// that has not stopped (stopping removes SVC_SERVE_PID). Anything unreadable counts as no file:
// detection must not fail, nor prompt for a permission, over it.
async function readServeRecord(options: DetectionOptions): Promise<ServeRecord | null> {
  try {
    const path = options.serveState === undefined
      ? join(
        OutputPaths.resolve({ env: options.env, envFile: options.envFile }).engines,
        "serve.env",
      )
      : options.serveState;
    if (path === null) return null;
    if (Deno.permissions.querySync({ name: "read", path }).state !== "granted") return null;
    const raw = await readEnvFile(path);
    if (!raw?.SVC_SERVE_PID) return null;
    const url = (value: string | undefined) => {
      if (!value) return undefined;
      try {
        const parsed = new URL(value);
        return parsed.protocol === "http:" || parsed.protocol === "https:"
          ? trimBase(value)
          : undefined;
      } catch {
        return undefined;
      }
    };
    const port = Number(raw.SVC_LLM_PORT);
    return {
      gatewayUrl: url(raw.SVC_CHAT_BASE_URL),
      llmPort: Number.isInteger(port) && port > 0 && port < 65536 ? port : undefined,
      embeddingUrl: url(raw.SVC_EMBEDDING_BASE_URL),
    };
  } catch {
    return null;
  }
}

function localCandidates(
  options: DetectionOptions,
  config: SvcConfig,
  serve: ServeRecord | null,
): Candidate[] {
  const hosts = options.hosts ?? ["127.0.0.1"];
  const gatewayPort = options.gatewayPort === undefined
    ? SvcPorts.GATEWAY_DEFAULT
    : options.gatewayPort;
  const llmPorts = options.llmPorts ?? [
    ...(config.sources.llmPort === "default" ? [] : [config.llmPort]),
    ...SvcPorts.getLlmPorts(),
  ];
  const embeddingPort = options.embeddingPort === undefined
    ? config.embeddingPort
    : options.embeddingPort;
  const engineKey = options.apiKey ?? config.engineApiKey ?? config.chatApiKey ?? null;
  const gatewayKey = options.apiKey ?? config.chatApiKey ?? null;
  const embeddingKey = options.embeddingApiKey ?? engineKey;
  const url = (host: string, port: number) =>
    `http://${host.includes(":") && !host.startsWith("[") ? `[${host}]` : host}:${port}/v1`;
  const out: Candidate[] = [];
  const seen = new Set<string>();
  const add = (c: Candidate) => {
    if (seen.has(c.baseUrl)) return;
    seen.add(c.baseUrl);
    out.push(c);
  };
  if (serve?.gatewayUrl) {
    add({
      baseUrl: serve.gatewayUrl,
      service: "gateway",
      kinds: ["chat", "embedding"],
      apiKey: gatewayKey,
    });
  }
  for (const host of hosts) {
    if (gatewayPort !== null) {
      add({
        baseUrl: url(host, gatewayPort),
        service: "gateway",
        kinds: ["chat", "embedding"],
        apiKey: gatewayKey,
      });
    }
  }
  if (serve?.llmPort !== undefined) {
    // On the gateway's host: the serve's engines listen beside it.
    const host = serve.gatewayUrl ? new URL(serve.gatewayUrl).hostname : "127.0.0.1";
    add({
      baseUrl: url(host, serve.llmPort),
      service: "engine",
      kinds: ["chat"],
      apiKey: engineKey,
    });
  }
  for (const port of llmPorts) {
    for (const host of hosts) {
      add({ baseUrl: url(host, port), service: "engine", kinds: ["chat"], apiKey: engineKey });
    }
  }
  if (serve?.embeddingUrl) {
    add({
      baseUrl: serve.embeddingUrl,
      service: "embedding",
      kinds: ["embedding"],
      apiKey: embeddingKey,
    });
  }
  for (const host of hosts) {
    if (embeddingPort !== null) {
      add({
        baseUrl: url(host, embeddingPort),
        service: "embedding",
        kinds: ["embedding"],
        apiKey: embeddingKey,
      });
    }
  }
  return out;
}

/** A base URL without trailing slashes; a bare origin gets `/v1`. */
export function trimBase(url: string): string {
  const trimmed = url.trim().replace(/\/+$/, "");
  try {
    const parsed = new URL(trimmed);
    if (parsed.pathname === "/" || parsed.pathname === "") return `${trimmed}/v1`;
  } catch {
    // validated where it was read; leave it as given
  }
  return trimmed;
}

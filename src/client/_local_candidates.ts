// Where detection looks, in its order of preference: the state file of a running `svc llm serve`,
// the default ports and the configured ones, each with the key it gets; and trimBase, the form
// every base URL detection hands out takes.
import { join } from "node:path";
import type { SvcConfig } from "../config/env.ts";
import { readEnvFile } from "../config/env_file.ts";
import { OutputPaths } from "../config/output_paths.ts";
import { SvcPorts } from "../config/ports.ts";
import type { EngineKind } from "../core/model_kind.ts";
import type { DetectionOptions, ProbeRecord } from "./detect_endpoints.ts";

/** A base URL to probe, the kinds it may serve and the key it gets. */
export interface Candidate {
  baseUrl: string;
  service: ProbeRecord["service"];
  kinds: EngineKind[];
  apiKey: string | null;
}

/** What detection takes from the state file of a running `svc llm serve`. */
export interface ServeRecord {
  gatewayUrl?: string;
  llmPort?: number;
  embeddingUrl?: string;
}

/**
 * The serve's state file (keys as src/cli/serve_state.ts writes them), when it records a serve
 * that has not stopped (stopping removes SVC_SERVE_PID). Anything unreadable counts as no file:
 * detection must not fail, nor prompt for a permission, over it.
 */
export async function readServeRecord(options: DetectionOptions): Promise<ServeRecord | null> {
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
/** The base URLs to probe, in order of preference, each once. */
export function localCandidates(
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

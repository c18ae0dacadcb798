/**
 * Backends of a gateway that starts no engines (`svc llm gateway --backend URL…`): each URL is an
 * OpenAI-compatible base URL ending in `/v1`, and what it serves is read from its `/v1/models`.
 * Models listed with `kind` `embedding` or `rerank` (as Svc engines and gateways list them) go to
 * an embedding backend, the rest to an LLM backend of the same URL.
 *
 * @module
 */
import { errorMessage, ValidationError } from "../core/errors.ts";
import { type BackendInstanceConfig, validateBackendConfig } from "./backend_config.ts";
import { type ModelFacts, modelFactsOf } from "./backend.ts";

/** What discovering one URL gave. */
export interface DiscoveredBackend {
  url: string;
  /** One or two backends (LLM, embedding) on success. */
  backends: BackendInstanceConfig[];
  /** Why it could not be listed (the gateway tries again later). */
  error?: string;
  /** Which of its models rerank or have random weights (set them as each backend's `modelFacts`). */
  facts?: ModelFacts;
}

/**
 * Lists the models of the backend at `baseUrl` and builds its configs, ids `<idBase>` and
 * `<idBase>-embedding`.
 *
 * @example
 * ```ts
 * import { discoverBackend } from "./backend_discovery.ts";
 * // const found = await discoverBackend("http://127.0.0.1:8001/v1", "backend-1");
 * ```
 */
export async function discoverBackend(
  baseUrl: string,
  idBase: string,
  options: { apiKey?: string | null; timeoutMs?: number } = {},
): Promise<DiscoveredBackend> {
  // Checks the URL (scheme, /v1) before any request, with the field named.
  const url =
    validateBackendConfig({ id: idBase, baseUrl, kind: "llm", models: ["probe"] }).baseUrl;
  const headers: Record<string, string> = {};
  if (options.apiKey) headers.authorization = `Bearer ${options.apiKey}`;
  let body: { data?: { id?: unknown; kind?: unknown }[] };
  try {
    const res = await fetch(`${url}/models`, {
      headers,
      signal: AbortSignal.timeout(options.timeoutMs ?? 5000),
    });
    if (!res.ok) {
      await res.body?.cancel();
      return { url, backends: [], error: `GET ${url}/models answered HTTP ${res.status}` };
    }
    body = await res.json();
  } catch (err) {
    return {
      url,
      backends: [],
      error: `${url} is not reachable: ${errorMessage(err)}`,
    };
  }
  const llm: string[] = [];
  const embedding: string[] = [];
  for (const m of Array.isArray(body?.data) ? body.data : []) {
    if (typeof m?.id !== "string" || m.id === "") continue;
    (m.kind === "embedding" || m.kind === "rerank" ? embedding : llm).push(m.id);
  }
  if (llm.length + embedding.length === 0) {
    return { url, backends: [], error: `${url}/models lists no models` };
  }
  const common = { baseUrl: url, apiKey: options.apiKey ?? null };
  return {
    url,
    facts: modelFactsOf(body),
    backends: [
      ...(llm.length ? [{ ...common, id: idBase, kind: "llm" as const, models: llm }] : []),
      ...(embedding.length
        ? [{ ...common, id: `${idBase}-embedding`, kind: "embedding" as const, models: embedding }]
        : []),
    ],
  };
}

/**
 * Splits `SVC_BACKENDS`-style text (comma-separated URLs) into URLs; empty parts are an error.
 *
 * @example
 * ```ts
 * import { parseBackendList } from "./backend_discovery.ts";
 * parseBackendList("http://a:8001/v1, http://b:8001/v1"); // two URLs
 * ```
 */
export function parseBackendList(text: string): string[] {
  const urls = text.split(",").map((u) => u.trim());
  if (urls.some((u) => u === "")) {
    throw new ValidationError(
      "SVC_BACKENDS has an empty entry: list base URLs ending in /v1, separated by commas",
      { param: "backend" },
    );
  }
  return urls;
}

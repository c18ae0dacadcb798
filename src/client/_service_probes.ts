// Asking servers whether they answer and what they list: the lenient probe of detection
// (probeService) and the stricter search among one's own base URLs (findService). Both are public
// through detect_endpoints.ts.
import { AuthenticationError, errorMessage, ServiceError, SvcException } from "../core/errors.ts";
import { ClientHttp } from "./_http.ts";
import { type ListedModel, listedModels } from "./_wire.ts";
import type { FetchLike } from "./types.ts";

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

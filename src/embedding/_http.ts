/**
 * The HTTP call every remote embedding provider makes: POST JSON with a timeout; failures and
 * error answers become our error classes (never a bare network exception), by the shared rules
 * of `core/fetch_with_timeout.ts` and `protocol/error_from_response.ts`.
 *
 * @module
 */

import { fetchWithTimeout } from "../core/fetch_with_timeout.ts";
import { errorFromResponse } from "../protocol/error_from_response.ts";

/** Default per-request timeout. */
export const DEFAULT_TIMEOUT_MS = 60_000;

/** Options of {@link postJson}. */
export interface PostJsonOptions {
  /** Provider name for messages, e.g. "Jina". */
  provider: string;
  /** Variable (or option) holding the credentials, named in 401/403 messages. */
  keyVariable?: string;
  headers?: Record<string, string>;
  timeoutMs?: number;
  fetch?: typeof fetch;
  signal?: AbortSignal;
}

/**
 * POSTs `body` (an object, or text sent as is) and returns the parsed JSON answer. The time
 * limit covers the whole answer.
 *
 * Errors: AuthenticationError (401/403, naming `keyVariable`), RateLimitError (429, with
 * Retry-After), ServiceError (other statuses with code `upstream_http_<status>`, an unreachable
 * service naming the URL, a timeout, an answer that is not JSON), CancelledError (the caller's
 * signal aborted). Messages carry the provider's own error text.
 *
 * @example
 * ```ts
 * const json = await postJson("http://127.0.0.1:8090/v1/embeddings", { input: ["a"] }, {
 *   provider: "Svc",
 * });
 * ```
 */
export async function postJson(
  url: string,
  body: unknown,
  options: PostJsonOptions,
): Promise<unknown> {
  const sent = await fetchWithTimeout(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...options.headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  }, {
    what: options.provider,
    timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    signal: options.signal,
    fetch: options.fetch,
  });
  try {
    if (!sent.response.ok) {
      throw await errorFromResponse(sent.response, {
        source: sent.who,
        keyHint: options.keyVariable,
        upstream: true,
      });
    }
    return await sent.json();
  } finally {
    sent.release();
  }
}

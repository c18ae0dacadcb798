/**
 * HTTP helpers of the CLI's API clients (fine-tuning, keys): a fetch with a timeout whose
 * failures and error answers become our error classes (the shared rules of
 * `core/fetch_with_timeout.ts` and `protocol/error_from_response.ts`).
 *
 * @module
 */

import { fetchWithTimeout, parseJsonAnswer } from "../core/fetch_with_timeout.ts";
import { errorFromResponse } from "../protocol/error_from_response.ts";

/** Options of {@link fetchOrThrow}. */
export interface FetchOptions {
  /** What is being called, for messages, e.g. "the fine-tuning API". */
  what: string;
  /** Variable holding the key, named when the key is rejected. */
  keyVariable?: string;
  /** Gives up after this many ms without an answer (headers); default 30000. */
  timeoutMs?: number;
  /** Cancels the request. */
  signal?: AbortSignal;
  /** Replaces `fetch` (tests). */
  fetch?: typeof fetch;
}

/**
 * Fetches `url`; network failures, timeouts and non-2xx answers become typed errors whose
 * message names the URL and the server's own error text. The timeout covers the wait for the
 * answer's headers only, so a long stream is not cut.
 *
 * @example
 * ```ts
 * const res = await fetchOrThrow("http://127.0.0.1:8000/v1/models", {}, { what: "the server" });
 * ```
 */
export async function fetchOrThrow(
  url: string,
  init: RequestInit,
  options: FetchOptions,
): Promise<Response> {
  const sent = await fetchWithTimeout(url, init, {
    what: options.what,
    timeoutMs: options.timeoutMs ?? 30_000,
    signal: options.signal,
    fetch: options.fetch,
  });
  // The caller's signal still cancels the body being read.
  sent.stopTimer();
  if (!sent.response.ok) {
    const error = await errorFromResponse(sent.response, {
      source: `${options.what} (${init.method ?? "GET"} ${url})`,
      keyHint: options.keyVariable,
    });
    sent.release();
    throw error;
  }
  return sent.response;
}

/** Reads a JSON answer, turning a body that is not JSON into a ServiceError. */
export async function readJson<T>(response: Response, what: string): Promise<T> {
  return parseJsonAnswer<T>(await response.text(), what);
}

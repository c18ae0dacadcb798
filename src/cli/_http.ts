/**
 * HTTP helpers of the CLI's API clients (chat, fine-tuning): a fetch with a timeout whose
 * failures become our error classes, and the mapping of OpenAI-style error answers to them.
 *
 * @module
 */

import {
  AuthenticationError,
  CancelledError,
  ConflictError,
  NotFoundError,
  RateLimitError,
  ServiceError,
  ServiceUnavailableError,
  type SvcException,
  ValidationError,
} from "../core/errors.ts";

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

/** Joins a base URL and a path with exactly one slash between them. */
export function joinUrl(base: string, path: string): string {
  return `${base.replace(/\/+$/, "")}/${path.replace(/^\/+/, "")}`;
}

/**
 * Fetches `url`; network failures, timeouts and non-2xx answers become typed errors whose
 * message names the URL and the server's own error text. The timeout covers the wait for the
 * answer's headers only, so a long stream is not cut.
 */
export async function fetchOrThrow(
  url: string,
  init: RequestInit,
  options: FetchOptions,
): Promise<Response> {
  if (options.signal?.aborted) throw new CancelledError(`request to ${url} cancelled`);
  const timeoutMs = options.timeoutMs ?? 30_000;
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, timeoutMs);
  const onAbort = () => controller.abort();
  options.signal?.addEventListener("abort", onAbort, { once: true });
  let response: Response;
  try {
    response = await (options.fetch ?? fetch)(url, { ...init, signal: controller.signal });
  } catch (err) {
    options.signal?.removeEventListener("abort", onAbort);
    if (options.signal?.aborted) throw new CancelledError(`request to ${url} cancelled`);
    if (err instanceof Deno.errors.NotCapable || err instanceof Deno.errors.PermissionDenied) {
      throw err;
    }
    throw new ServiceError(
      timedOut
        ? `${options.what} at ${url} did not answer within ${timeoutMs} ms`
        : `cannot reach ${options.what} at ${url}: ${(err as Error).message}`,
      { cause: err, code: timedOut ? "upstream_timeout" : "upstream_unreachable" },
    );
  } finally {
    clearTimeout(timer);
  }
  // The caller's signal still cancels the body being read.
  if (!response.ok) {
    options.signal?.removeEventListener("abort", onAbort);
    const text = await response.text().catch(() => "");
    throw errorFromStatus(response.status, text, {
      what: `${options.what} (${init.method ?? "GET"} ${url})`,
      keyVariable: options.keyVariable,
      retryAfter: response.headers.get("retry-after"),
    });
  }
  return response;
}

/**
 * The error class for an HTTP error answer, carrying the server's message: 400/422 validation,
 * 401/403 authentication, 404 not found, 409 conflict, 429 rate limit, 503 unavailable, other
 * statuses a service error.
 *
 * @example
 * ```ts
 * errorFromStatus(404, '{"error":{"message":"no such job"}}', { what: "the API" }).exitCode; // 66
 * ```
 */
export function errorFromStatus(
  status: number,
  body: string,
  context: { what: string; keyVariable?: string; retryAfter?: string | null },
): SvcException {
  const detail = serverMessage(body);
  const where = `${context.what} answered HTTP ${status}: ${detail}`;
  const retry = Number(context.retryAfter);
  const retryAfterSeconds = Number.isFinite(retry) && retry > 0 ? retry : undefined;
  switch (status) {
    case 400:
    case 422:
      return new ValidationError(where);
    case 401:
    case 403:
      return new AuthenticationError(
        `${where}${context.keyVariable ? `; check ${context.keyVariable}` : ""}`,
      );
    case 404:
      return new NotFoundError(where);
    case 409:
      return new ConflictError(where);
    case 429:
      return new RateLimitError(where, { retryAfterSeconds });
    case 503:
      return new ServiceUnavailableError(where, { retryAfterSeconds });
    default:
      return new ServiceError(where, { code: `upstream_http_${status}` });
  }
}

/** The message of an OpenAI-style error body (`error.message`), else the clipped text. */
export function serverMessage(body: string): string {
  try {
    const json = JSON.parse(body);
    const error = json?.error;
    const message = typeof error === "object" && error !== null ? error.message : error;
    if (typeof message === "string" && message !== "") return clip(message);
    if (typeof json?.message === "string") return clip(json.message);
  } catch {
    // not JSON: use the text
  }
  return clip(body) || "(empty body)";
}

function clip(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > 300 ? `${flat.slice(0, 300)}…` : flat;
}

/** Reads a JSON answer, turning a body that is not JSON into a ServiceError. */
export async function readJson<T>(response: Response, what: string): Promise<T> {
  const text = await response.text();
  try {
    return JSON.parse(text) as T;
  } catch (err) {
    throw new ServiceError(`${what} answered with something that is not JSON: ${clip(text)}`, {
      cause: err,
      code: "upstream_bad_response",
    });
  }
}

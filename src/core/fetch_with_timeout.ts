/**
 * The one `fetch` with a time limit, the caller's abort and typed failures (never a bare
 * `TypeError`), shared by the client library, the CLI's API clients and the remote embedding
 * providers. What an HTTP error answer means is `src/protocol/error_from_response.ts`'s job.
 *
 * @module
 */
import {
  CancelledError,
  errorMessage,
  isAccessRefused,
  ServiceError,
  type SvcException,
} from "./errors.ts";

/** Sends one request: `fetch`, or an app handler called directly (embedded mode, tests). */
export type FetchLike = (request: Request) => Promise<Response>;

/** Error codes of the failures (callers keep the codes they document). */
export interface FetchErrorCodes {
  /** No answer within the time limit (default `upstream_timeout`). */
  timeout: string;
  /** No connection, or the answer broke off (default `upstream_unreachable`). */
  unreachable: string;
  /** The answer is not JSON (default `upstream_bad_response`). */
  badResponse: string;
}

const DEFAULT_CODES: FetchErrorCodes = {
  timeout: "upstream_timeout",
  unreachable: "upstream_unreachable",
  badResponse: "upstream_bad_response",
};

/** Options of {@link fetchWithTimeout}. */
export interface FetchWithTimeoutOptions {
  /** Gives up after this many ms (headers, and the body until `stopTimer()`). */
  timeoutMs: number;
  /** Who is called, for messages: "Jina AI" reads "Jina AI at <url>"; default the URL alone. */
  what?: string;
  /** Cancels the request and the body being read. */
  signal?: AbortSignal;
  /** Replaces `fetch` (tests, an in-process transport); called with the URL and the init. */
  fetch?: (url: string, init: RequestInit) => Promise<Response>;
  /** Codes of the errors raised (see {@link FetchErrorCodes}). */
  codes?: Partial<FetchErrorCodes>;
}

/** An answer whose time limit and abort forwarding are still running. */
export interface TimedResponse {
  /** The response, its body not yet read. */
  readonly response: Response;
  /** "<what> at <url>" (or the URL), as messages name it. */
  readonly who: string;
  /** Stops the time limit, e.g. before a long stream; the caller's signal still cancels. */
  stopTimer(): void;
  /** Stops the time limit and detaches the caller's signal: call when done with the body. */
  release(): void;
  /** The typed error for a failure while reading the body: cancelled, timed out or broken off. */
  bodyError(err: unknown): SvcException;
  /** Reads the body as JSON (a failure or a body that is not JSON is a typed error). */
  json<T>(): Promise<T>;
}

/**
 * Fetches `url` with a time limit. A failure is a {@link CancelledError} when the caller's signal
 * aborted, a {@link ServiceError} when time ran out (status 504) or the server cannot be reached;
 * a missing `--allow-net` permission is thrown as is (retrying cannot help). Any HTTP status is
 * returned: the caller decides what it means.
 *
 * @example
 * ```ts
 * import { fetchWithTimeout } from "@svc/cli";
 * const sent = await fetchWithTimeout("http://127.0.0.1:8000/v1/models", {}, { timeoutMs: 2000 });
 * try {
 *   console.log(await sent.json());
 * } finally {
 *   sent.release();
 * }
 * ```
 */
export async function fetchWithTimeout(
  url: string,
  init: RequestInit,
  options: FetchWithTimeoutOptions,
): Promise<TimedResponse> {
  const { signal, timeoutMs } = options;
  const codes = { ...DEFAULT_CODES, ...options.codes };
  const who = options.what ? `${options.what} at ${url}` : url;
  const cancelled = () =>
    new CancelledError(`the request to ${who} was cancelled`, { cause: signal?.reason });
  if (signal?.aborted) throw cancelled();
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, timeoutMs);
  const onAbort = () => controller.abort(signal?.reason);
  signal?.addEventListener("abort", onAbort, { once: true });
  const stopTimer = () => clearTimeout(timer);
  const release = () => {
    clearTimeout(timer);
    signal?.removeEventListener("abort", onAbort);
  };
  // Cancelled and timed-out win over what the interrupted fetch or read reports.
  const interrupted = (err: unknown): SvcException | null => {
    if (signal?.aborted) return cancelled();
    if (!timedOut) return null;
    return new ServiceError(
      `${who} did not answer within ${timeoutMs} ms; check the service or raise timeoutMs`,
      { code: codes.timeout, status: 504, cause: err },
    );
  };
  let response: Response;
  try {
    const doFetch = options.fetch ?? fetch;
    response = await doFetch(url, { ...init, signal: controller.signal });
  } catch (err) {
    release();
    if (isAccessRefused(err)) throw err;
    throw interrupted(err) ?? new ServiceError(
      `cannot reach ${who}: ${errorMessage(err)}; check that the service is running and the URL ` +
        "is right",
      { code: codes.unreachable, cause: err },
    );
  }
  const bodyError = (err: unknown): SvcException =>
    interrupted(err) ?? new ServiceError(`the answer of ${who} broke off: ${errorMessage(err)}`, {
      code: codes.unreachable,
      cause: err,
    });
  return {
    response,
    who,
    stopTimer,
    release,
    bodyError,
    async json<T>(): Promise<T> {
      let text: string;
      try {
        text = await response.text();
      } catch (err) {
        throw bodyError(err);
      }
      return parseJsonAnswer<T>(text, who, { code: codes.badResponse });
    },
  };
}

/**
 * Parses an answer's text as JSON; otherwise a {@link ServiceError} naming `who` and showing the
 * start of the text.
 *
 * @example
 * ```ts
 * import { parseJsonAnswer } from "./fetch_with_timeout.ts";
 * parseJsonAnswer<{ ok: boolean }>('{"ok":true}', "the API").ok; // true
 * ```
 */
export function parseJsonAnswer<T>(
  text: string,
  who: string,
  options: { code?: string } = {},
): T {
  try {
    return JSON.parse(text) as T;
  } catch (err) {
    const flat = text.replace(/\s+/g, " ").trim();
    const shown = flat.length > 200 ? `${flat.slice(0, 200)}…` : flat;
    throw new ServiceError(`${who} answered with something that is not JSON: ${shown}`, {
      code: options.code ?? DEFAULT_CODES.badResponse,
      cause: err,
    });
  }
}

/**
 * Joins a base URL and a path with exactly one slash between them.
 *
 * @example
 * ```ts
 * import { joinUrl } from "@svc/cli";
 * joinUrl("http://127.0.0.1:8000/v1/", "/models"); // "http://127.0.0.1:8000/v1/models"
 * ```
 */
export function joinUrl(base: string, path: string): string {
  return `${base.replace(/\/+$/, "")}/${path.replace(/^\/+/, "")}`;
}

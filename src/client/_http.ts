// The client's one HTTP path: bearer key, per-attempt timeout, caller's abort, retries with
// back-off on connection errors and 429/503 (Retry-After honoured, bounded), typed errors.
import { CancelledError, isRetryable, ServiceError, type SvcException } from "../core/errors.ts";
import { fetchWithTimeout, type TimedResponse } from "../core/fetch_with_timeout.ts";
import { sleep } from "../core/sleep.ts";
import { errorFromResponse, retryAfterSeconds } from "../protocol/error_from_response.ts";
import type { FetchLike, UnifiedClientConfig } from "./types.ts";
import { checkNumber, TIMEOUT_RULE } from "./_client_setup.ts";

export type { FetchLike };

/** The codes the client documents for its own network failures. */
const CODES = { timeout: "timeout", unreachable: "connection_error", badResponse: "bad_response" };
/** Named when a server refuses the key. */
const KEY_HINT = "the API key (SVC_CHAT_API_KEY, COMPAT_API_KEY or the apiKey option)";
/** Longest server message kept in an error (a library user may want all of it). */
const MAX_MESSAGE = 2000;

/** Where requests go. */
export interface HttpTarget {
  /** Base URL ending in `/v1`. */
  baseUrl: string;
  apiKey?: string | null;
}

/** Retry and timeout settings. */
export interface HttpPolicy {
  timeoutMs: number;
  /** Longest silence between two chunks of a stream (default `timeoutMs`). */
  streamIdleTimeoutMs?: number;
  maxRetries: number;
  retryBaseDelayMs: number;
  maxRetryDelayMs: number;
  /** Hears each retry before it; `false` gives up instead (`UnifiedClientConfig.onRetry`). */
  onRetry?: UnifiedClientConfig["onRetry"];
  /** What to check when a server refuses the key (default {@link KEY_HINT}). */
  keyHint?: string;
}

/** One call. */
export interface SendOptions {
  method?: "GET" | "POST" | "DELETE";
  /** JSON-encoded when given. */
  body?: unknown;
  signal?: AbortSignal;
  timeoutMs?: number;
  /** Retry on connection errors and 429/503 (default true). */
  retry?: boolean;
}

/** A streamed answer: read `response.body`, then call `release()`. */
export interface OpenStream {
  response: Response;
  url: string;
  /** Detaches the caller's signal; call when done with the body. */
  release(): void;
  /** The typed error for a failure while reading the body. */
  bodyError(err: unknown): SvcException;
}

/** HTTP with our retry, timeout and error rules. */
export class ClientHttp {
  readonly policy: HttpPolicy;
  #fetch: FetchLike;

  constructor(policy: HttpPolicy, fetchLike?: FetchLike) {
    this.policy = policy;
    this.#fetch = fetchLike ?? ((request) => fetch(request));
  }

  /** Sends and parses a JSON answer (the time limit covers the whole answer). */
  async json<T>(target: HttpTarget, path: string, options: SendOptions = {}): Promise<T> {
    const sent = await this.#open(target, path, options);
    try {
      return await sent.json<T>();
    } finally {
      sent.release();
    }
  }

  /** Sends and returns the answer with its body unread (for SSE). */
  async stream(target: HttpTarget, path: string, options: SendOptions = {}): Promise<OpenStream> {
    const sent = await this.#open(target, path, options);
    // The time limit covers the wait for the headers; a stream may then run as long as it needs,
    // as long as it never falls silent for longer than the idle limit.
    sent.stopTimer();
    const idleMs = this.policy.streamIdleTimeoutMs ?? this.policy.timeoutMs;
    const { response } = sent;
    const guarded = response.body === null ? response : new Response(
      idleGuard(response.body, idleMs, () =>
        new ServiceError(
          `${sent.who} sent nothing for ${idleMs} ms mid-stream (streamIdleTimeoutMs)`,
          { code: CODES.timeout },
        )),
      { status: response.status, statusText: response.statusText, headers: response.headers },
    );
    return {
      response: guarded,
      url: sent.who,
      release: sent.release,
      bodyError: sent.bodyError,
    };
  }

  async #open(target: HttpTarget, path: string, options: SendOptions): Promise<TimedResponse> {
    checkNumber(options.timeoutMs, "timeoutMs", TIMEOUT_RULE, "call");
    const url = `${target.baseUrl.replace(/\/+$/, "")}${path}`;
    const { signal } = options;
    const retries = options.retry === false ? 0 : this.policy.maxRetries;
    const headers: Record<string, string> = { accept: "application/json, text/event-stream" };
    if (target.apiKey) headers.authorization = `Bearer ${target.apiKey}`;
    let body: string | undefined;
    if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers["content-type"] = "application/json";
    }
    const init: RequestInit = { method: options.method ?? "GET", headers, body };
    for (let attempt = 0;; attempt++) {
      let sent: TimedResponse;
      try {
        sent = await fetchWithTimeout(url, init, {
          timeoutMs: options.timeoutMs ?? this.policy.timeoutMs,
          signal,
          fetch: (u, i) => this.#fetch(new Request(u, i)),
          codes: CODES,
        });
      } catch (err) {
        // Only a connection failure is worth another try; cancelled and timed out are final.
        const retryable = err instanceof ServiceError && err.code === CODES.unreachable;
        if (!retryable || attempt >= retries) throw err;
        const delay = this.#backoff(attempt);
        if (!this.#mayRetry(err, attempt, delay, url)) throw err;
        await pause(delay, signal, url);
        continue;
      }
      const { response } = sent;
      if (response.ok) return sent;
      const error = await errorFromResponse(response, {
        source: url,
        keyHint: this.policy.keyHint ?? KEY_HINT,
        maxChars: MAX_MESSAGE,
      });
      sent.release();
      if (!isRetryable(error) || attempt >= retries) throw error;
      const retryAfter = retryAfterSeconds(response.headers);
      const delay = retryAfter !== undefined ? retryAfter * 1000 : this.#backoff(attempt);
      // A server asking for a longer pause than we are willing to wait: tell the caller now.
      if (delay > this.policy.maxRetryDelayMs) throw error;
      if (!this.#mayRetry(error, attempt, delay, url)) throw error;
      await pause(delay, signal, url);
    }
  }

  // Asks the caller's onRetry, if any, whether to go on.
  #mayRetry(error: SvcException, attempt: number, delayMs: number, url: string): boolean {
    return this.policy.onRetry?.({ error, attempt: attempt + 1, delayMs, url }) !== false;
  }

  #backoff(attempt: number): number {
    const base = this.policy.retryBaseDelayMs * 2 ** attempt;
    return Math.min(this.policy.maxRetryDelayMs, base * (0.8 + 0.4 * Math.random()));
  }
}

/** `body` as a stream that errors with `onIdle()` (and cancels `body`) when a read waits `ms`. */
function idleGuard(
  body: ReadableStream<Uint8Array>,
  ms: number,
  onIdle: () => SvcException,
): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const idle = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(onIdle()), ms);
      });
      try {
        const { value, done } = await Promise.race([reader.read(), idle]);
        if (done) controller.close();
        else controller.enqueue(value);
      } catch (err) {
        reader.cancel(err).catch(() => {});
        controller.error(err);
      } finally {
        clearTimeout(timer);
      }
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
}

/** Waits `ms` before a retry; rejects with {@link CancelledError} when `signal` aborts meanwhile. */
async function pause(ms: number, signal: AbortSignal | undefined, url: string): Promise<void> {
  if (ms <= 0) return;
  await sleep(ms, signal);
  if (signal?.aborted) {
    throw new CancelledError(`the request to ${url} was cancelled`, { cause: signal.reason });
  }
}

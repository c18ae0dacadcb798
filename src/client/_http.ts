// The client's one HTTP path: bearer key, per-attempt timeout, caller's abort, retries with
// back-off on connection errors and 429/503 (Retry-After honoured, bounded), typed errors.
import { ServiceError, type SvcException } from "../core/errors.ts";
import {
  cancelledError,
  connectionError,
  errorFromStatus,
  parseServerError,
  retryAfterSeconds,
  timeoutError,
} from "./_errors.ts";
import type { FetchLike } from "./types.ts";

export type { FetchLike };

/** Where requests go. */
export interface HttpTarget {
  /** Base URL ending in `/v1`. */
  baseUrl: string;
  apiKey?: string | null;
}

/** Retry and timeout settings. */
export interface HttpPolicy {
  timeoutMs: number;
  maxRetries: number;
  retryBaseDelayMs: number;
  maxRetryDelayMs: number;
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
}

/** HTTP with our retry, timeout and error rules. */
export class ClientHttp {
  readonly policy: HttpPolicy;
  #fetch: FetchLike;

  constructor(policy: HttpPolicy, fetchLike?: FetchLike) {
    this.policy = policy;
    this.#fetch = fetchLike ?? ((request) => fetch(request));
  }

  /** Sends and parses a JSON answer. */
  async json<T>(target: HttpTarget, path: string, options: SendOptions = {}): Promise<T> {
    const { response, url, release, timer } = await this.#open(target, path, options);
    let text: string;
    try {
      text = await response.text();
    } catch (err) {
      throw this.#bodyError(url, err, options.signal, timer);
    } finally {
      release();
    }
    try {
      return JSON.parse(text) as T;
    } catch (err) {
      throw new ServiceError(
        `${url} answered with something that is not JSON: ${text.slice(0, 200)}`,
        { code: "bad_response", cause: err },
      );
    }
  }

  /** Sends and returns the answer with its body unread (for SSE). */
  async stream(target: HttpTarget, path: string, options: SendOptions = {}): Promise<OpenStream> {
    const { response, url, release, timer } = await this.#open(target, path, options);
    // The time limit covers the wait for the headers; a stream may then run as long as it needs.
    clearTimeout(timer.id);
    return { response, url, release };
  }

  /** Maps an error thrown while reading a body (after the headers came). */
  bodyError(url: string, err: unknown, signal?: AbortSignal): SvcException {
    return this.#bodyError(url, err, signal, { id: undefined, fired: false, ms: 0 });
  }

  #bodyError(
    url: string,
    err: unknown,
    signal: AbortSignal | undefined,
    timer: AttemptTimer,
  ): SvcException {
    if (signal?.aborted) return cancelledError(url, signal.reason);
    if (timer.fired) return timeoutError(url, timer.ms);
    return new ServiceError(
      `the answer of ${url} broke off: ${err instanceof Error ? err.message : String(err)}`,
      { code: "connection_error", cause: err },
    );
  }

  async #open(target: HttpTarget, path: string, options: SendOptions): Promise<Attempt> {
    const url = `${target.baseUrl.replace(/\/+$/, "")}${path}`;
    const { signal } = options;
    const timeoutMs = options.timeoutMs ?? this.policy.timeoutMs;
    const retries = options.retry === false ? 0 : this.policy.maxRetries;
    const headers: Record<string, string> = { accept: "application/json, text/event-stream" };
    if (target.apiKey) headers.authorization = `Bearer ${target.apiKey}`;
    let body: string | undefined;
    if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers["content-type"] = "application/json";
    }
    for (let attempt = 0;; attempt++) {
      if (signal?.aborted) throw cancelledError(url, signal.reason);
      const ctrl = new AbortController();
      const timer: AttemptTimer = { id: undefined, fired: false, ms: timeoutMs };
      timer.id = setTimeout(() => {
        timer.fired = true;
        ctrl.abort();
      }, timeoutMs);
      const onAbort = () => ctrl.abort(signal?.reason);
      signal?.addEventListener("abort", onAbort, { once: true });
      const release = () => {
        clearTimeout(timer.id);
        signal?.removeEventListener("abort", onAbort);
      };
      let response: Response;
      try {
        response = await this.#fetch(
          new Request(url, { method: options.method ?? "GET", headers, body, signal: ctrl.signal }),
        );
      } catch (err) {
        release();
        if (signal?.aborted) throw cancelledError(url, signal.reason);
        if (timer.fired) throw timeoutError(url, timeoutMs);
        const error = connectionError(url, err);
        if (attempt >= retries) throw error;
        await sleep(this.#backoff(attempt), signal, url);
        continue;
      }
      if (response.ok) return { response, url, release, timer };
      let text = "";
      try {
        text = await response.text();
      } catch {
        // the status is enough to go on
      }
      release();
      const retryAfter = retryAfterSeconds(response.headers);
      const error = errorFromStatus(response.status, parseServerError(text), url, retryAfter);
      const retryable = response.status === 429 || response.status === 503;
      if (!retryable || attempt >= retries) throw error;
      const delay = retryAfter !== undefined ? retryAfter * 1000 : this.#backoff(attempt);
      // A server asking for a longer pause than we are willing to wait: tell the caller now.
      if (delay > this.policy.maxRetryDelayMs) throw error;
      await sleep(delay, signal, url);
    }
  }

  #backoff(attempt: number): number {
    const base = this.policy.retryBaseDelayMs * 2 ** attempt;
    return Math.min(this.policy.maxRetryDelayMs, base * (0.8 + 0.4 * Math.random()));
  }
}

interface AttemptTimer {
  id: ReturnType<typeof setTimeout> | undefined;
  fired: boolean;
  ms: number;
}

interface Attempt {
  response: Response;
  url: string;
  release: () => void;
  timer: AttemptTimer;
}

function sleep(ms: number, signal: AbortSignal | undefined, url: string): Promise<void> {
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(cancelledError(url, signal?.reason));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

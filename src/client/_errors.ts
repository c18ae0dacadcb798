// Turns what a server answered (or failed to answer) into our typed errors, chosen by status,
// carrying the server's status, message, code and param.
import {
  AuthenticationError,
  CancelledError,
  ConflictError,
  ContextLengthError,
  MethodNotAllowedError,
  NotFoundError,
  PayloadTooLargeError,
  RateLimitError,
  ServiceError,
  ServiceUnavailableError,
  type SvcErrorOptions,
  type SvcException,
  ValidationError,
} from "../core/errors.ts";

const MAX_MESSAGE = 2000;

/** The parts of an OpenAI error body we read (other servers' shapes are tried too). */
export interface ServerError {
  message: string;
  code: string | null;
  param: string | null;
  type: string | null;
}

/** Reads `{"error":{message,code,param,type}}`, `{"error":"text"}`, `{"message"}` or `{"detail"}`. */
export function parseServerError(text: string): ServerError {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { message: clip(text.trim()) || "(empty body)", code: null, param: null, type: null };
  }
  const body = (typeof json === "object" && json !== null ? json : {}) as Record<string, unknown>;
  const err = body.error;
  if (typeof err === "object" && err !== null) {
    const e = err as Record<string, unknown>;
    return {
      message: clip(str(e.message) ?? JSON.stringify(e)),
      code: str(e.code),
      param: str(e.param),
      type: str(e.type),
    };
  }
  const message = str(err) ?? str(body.message) ?? str(body.detail) ?? clip(text);
  return { message: clip(message), code: str(body.code), param: null, type: null };
}

/** Seconds of a `Retry-After` header (seconds or an HTTP date); undefined when absent or bad. */
export function retryAfterSeconds(headers: Headers): number | undefined {
  const raw = headers.get("retry-after");
  if (raw === null || raw.trim() === "") return undefined;
  const seconds = Number(raw);
  if (Number.isFinite(seconds)) return Math.max(0, seconds);
  const date = Date.parse(raw);
  return Number.isNaN(date) ? undefined : Math.max(0, (date - Date.now()) / 1000);
}

/** The typed error for an HTTP error answer. */
export function errorFromStatus(
  status: number,
  server: ServerError,
  url: string,
  retryAfter?: number,
): SvcException {
  const message = `${server.message} (HTTP ${status} from ${url})`;
  const opts: SvcErrorOptions = { status };
  if (server.code !== null) opts.code = server.code;
  if (server.param !== null) opts.param = server.param;
  const retry = { ...opts, retryAfterSeconds: retryAfter };
  switch (status) {
    case 400:
    case 422:
      return server.code === "context_length_exceeded"
        ? new ContextLengthError(message, opts)
        : new ValidationError(message, opts);
    case 401:
    case 403:
      return new AuthenticationError(
        `${message}; check the API key (SVC_CHAT_API_KEY, COMPAT_API_KEY or the apiKey option)`,
        opts,
      );
    case 404:
      return new NotFoundError(message, opts);
    case 405:
      return new MethodNotAllowedError(message, opts);
    case 409:
      return new ConflictError(message, opts);
    case 413:
      return new PayloadTooLargeError(message, opts);
    case 429:
      return new RateLimitError(message, retry);
    case 499:
      return new CancelledError(message, opts);
    case 503:
      return new ServiceUnavailableError(message, retry);
  }
  return status >= 400 && status < 500
    ? new ValidationError(message, opts)
    : new ServiceError(message, opts);
}

// Error events inside an SSE stream carry no status: the OpenAI `type` tells it.
const STATUS_OF_TYPE: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  not_found_error: 404,
  conflict_error: 409,
  rate_limit_error: 429,
  cancelled_error: 499,
  service_unavailable_error: 503,
};

/** The typed error for an `{"error":…}` event in the middle of a stream. */
export function errorFromStreamEvent(event: unknown, url: string): SvcException {
  const server = parseServerError(JSON.stringify(event));
  const status = STATUS_OF_TYPE[server.type ?? ""] ?? 502;
  return errorFromStatus(status, server, `${url} (in the stream)`);
}

/** A connection failure, named by URL, never the bare TypeError. */
export function connectionError(url: string, cause: unknown): ServiceError {
  const why = cause instanceof Error ? cause.message : String(cause);
  return new ServiceError(
    `cannot reach ${url}: ${why}; check that the server is running and the base URL is right`,
    { code: "connection_error", cause },
  );
}

/** An attempt that ran past its time limit. */
export function timeoutError(url: string, timeoutMs: number): ServiceError {
  return new ServiceError(
    `${url} did not answer within ${timeoutMs} ms; raise timeoutMs or check the server`,
    { code: "timeout", status: 504 },
  );
}

/** The caller aborted. */
export function cancelledError(url: string, reason: unknown): CancelledError {
  return new CancelledError(`the request to ${url} was cancelled`, { cause: reason });
}

function str(v: unknown): string | null {
  return typeof v === "string" && v !== "" ? v : typeof v === "number" ? String(v) : null;
}

function clip(text: string): string {
  return text.length > MAX_MESSAGE ? `${text.slice(0, MAX_MESSAGE)}…` : text;
}

/**
 * The error classes of Svc and the one table, {@link ERROR_TABLE}, that gives each its HTTP status,
 * OpenAI error `type`, default `code`, CLI exit code and whether a retry may succeed. Every error we
 * raise derives from {@link SvcException}. The table is read in both directions: to render an error
 * (`src/protocol/error_body.ts`), to read an HTTP error answer back into a class
 * (`src/protocol/error_from_response.ts`), and to decide retries ({@link isRetryable}).
 *
 * @module
 */

/** Options shared by every Svc error. */
export interface SvcErrorOptions {
  /** The underlying error, kept for logs and debugging. */
  cause?: unknown;
  /** Machine-readable code, e.g. `invalid_value` or `model_not_found`. */
  code?: string;
  /** The request field (or config variable) the error is about, when there is one. */
  param?: string;
  /** HTTP status to report instead of the class's own, e.g. the status a remote server answered. */
  status?: number;
}

/**
 * Base class of every Svc error: catching it catches them all.
 *
 * @example
 * ```ts
 * import { ConfigurationError, SvcException } from "@svc/cli";
 * try {
 *   throw new ConfigurationError("SVC_LLM_PORT is 'abc': expected a port number 1-65535");
 * } catch (err) {
 *   if (err instanceof SvcException) console.log(err.code, err.exitCode);
 * }
 * ```
 */
export class SvcException extends Error {
  /** Machine-readable code. */
  readonly code: string;
  /** HTTP status this error maps to. */
  readonly status: number;
  /** Process exit code the CLI uses for this error. */
  readonly exitCode: number;
  /** The field or variable at fault, if any. */
  readonly param: string | null;

  /** `message` says what was wrong and what to do; `options` may name the param and the cause. */
  constructor(
    message: string,
    options: SvcErrorOptions = {},
    defaults: { code: string; status: number; exitCode: number } = errorMapping(new.target),
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = options.code ?? defaults.code;
    this.status = options.status ?? defaults.status;
    this.exitCode = defaults.exitCode;
    this.param = options.param ?? null;
  }
}

/** A setting (option, environment variable, file) is missing or invalid. Exit code 78 (EX_CONFIG). */
export class ConfigurationError extends SvcException {
  /** `message` says what was wrong and what to do; `options` may name the param and the cause. */
  constructor(message: string, options: SvcErrorOptions = {}) {
    super(message, options);
  }
}

/** Input (a request body, an argument, a file) is malformed or out of range. HTTP 400, exit 65. */
export class ValidationError extends SvcException {
  /** `message` says what was wrong and what to do; `options` may name the param and the cause. */
  constructor(message: string, options: SvcErrorOptions = {}) {
    super(message, options);
  }
}

/** A service we depend on failed or is unreachable. HTTP 502, exit 69 (EX_UNAVAILABLE). */
export class ServiceError extends SvcException {
  /** `message` says what was wrong and what to do; `options` may name the param and the cause. */
  constructor(message: string, options: SvcErrorOptions = {}) {
    super(message, options);
  }
}

/** The prompt or an input is longer than the model accepts. HTTP 400. */
export class ContextLengthError extends ValidationError {
  /** `message` says what was wrong and what to do; `options` may name the param and the cause. */
  constructor(message: string, options: SvcErrorOptions = {}) {
    super(message, options);
  }
}

/** Missing or wrong credentials. HTTP 401, exit 77 (EX_NOPERM). */
export class AuthenticationError extends SvcException {
  /** `message` says what was wrong and what to do; `options` may name the param and the cause. */
  constructor(message: string, options: SvcErrorOptions = {}) {
    super(message, options);
  }
}

/** The caller may not do this here (wrong origin or address for an admin route). HTTP 403. */
export class PermissionDeniedError extends SvcException {
  /** `message` says what was wrong and what to do; `options` may name the param and the cause. */
  constructor(message: string, options: SvcErrorOptions = {}) {
    super(message, options);
  }
}

/** A model, engine or route does not exist. HTTP 404, exit 66 (EX_NOINPUT). */
export class NotFoundError extends SvcException {
  /** `message` says what was wrong and what to do; `options` may name the param and the cause. */
  constructor(message: string, options: SvcErrorOptions = {}) {
    super(message, options);
  }
}

/** The HTTP method is not allowed on this path. HTTP 405. */
export class MethodNotAllowedError extends SvcException {
  /** `message` says what was wrong and what to do; `options` may name the param and the cause. */
  constructor(message: string, options: SvcErrorOptions = {}) {
    super(message, options);
  }
}

/** The request body is larger than the server accepts. HTTP 413. */
export class PayloadTooLargeError extends SvcException {
  /** `message` says what was wrong and what to do; `options` may name the param and the cause. */
  constructor(message: string, options: SvcErrorOptions = {}) {
    super(message, options);
  }
}

/** The request body is not in a format the route accepts (not `application/json`). HTTP 415. */
export class UnsupportedMediaTypeError extends SvcException {
  /** `message` says what was wrong and what to do; `options` may name the param and the cause. */
  constructor(message: string, options: SvcErrorOptions = {}) {
    super(message, options);
  }
}

/** The client did not send its request (headers or body) in time. HTTP 408. */
export class RequestTimeoutError extends SvcException {
  /** `message` says what was wrong and what to do; `options` may name the param and the cause. */
  constructor(message: string, options: SvcErrorOptions = {}) {
    super(message, options);
  }
}

/** The request conflicts with the current state (e.g. an engine already exists). HTTP 409. */
export class ConflictError extends SvcException {
  /** `message` says what was wrong and what to do; `options` may name the param and the cause. */
  constructor(message: string, options: SvcErrorOptions = {}) {
    super(message, options);
  }
}

/** Options of errors that ask the client to come back later. */
export interface RetryableErrorOptions extends SvcErrorOptions {
  /** Seconds after which a retry may succeed; sent as `Retry-After`. */
  retryAfterSeconds?: number;
  /** More response headers (a rate limit's `x-ratelimit-*`). */
  headers?: Readonly<Record<string, string>>;
}

/** Too many requests queued: come back later. HTTP 429 with `Retry-After`, exit 75 (EX_TEMPFAIL). */
export class RateLimitError extends SvcException {
  /** Seconds after which a retry may succeed. */
  readonly retryAfterSeconds: number;
  /** More response headers (a rate limit's `x-ratelimit-*`). */
  readonly headers?: Readonly<Record<string, string>>;
  /** `message` says what was wrong and what to do; `options` may name the param and the cause. */
  constructor(message: string, options: RetryableErrorOptions = {}) {
    super(message, options);
    this.retryAfterSeconds = options.retryAfterSeconds ?? 1;
    this.headers = options.headers;
  }
}

/** The service is loading, draining or has no backend ready. HTTP 503 with `Retry-After`. */
export class ServiceUnavailableError extends SvcException {
  /** Seconds after which a retry may succeed. */
  readonly retryAfterSeconds: number;
  /** `message` says what was wrong and what to do; `options` may name the param and the cause. */
  constructor(message: string, options: RetryableErrorOptions = {}) {
    super(message, options);
    this.retryAfterSeconds = options.retryAfterSeconds ?? 1;
  }
}

/** The work was cancelled (client disconnect, abort signal). */
export class CancelledError extends SvcException {
  /** The request was cancelled (by the caller's signal). */
  constructor(message = "the request was cancelled", options: SvcErrorOptions = {}) {
    super(message, options);
  }
}

/** One row of {@link ERROR_TABLE}. */
export interface ErrorMapping {
  /** The error class. */
  // deno-lint-ignore no-explicit-any
  readonly error: abstract new (...args: any[]) => Error;
  /** Its HTTP status. */
  readonly status: number;
  /** OpenAI's `error.type`. */
  readonly type: string;
  /** The default `code` of its errors. */
  readonly code: string;
  /** The exit code the CLI ends with. */
  readonly exitCode: number;
  /** HTTP statuses of an error answer read back as this class (see `errorFromStatus`). */
  readonly readFrom: readonly number[];
  /** The same request may succeed later (after `Retry-After`): clients retry it. */
  readonly retryable: boolean;
}

/**
 * Error class → HTTP status, OpenAI `type`, default code, exit code, the statuses read back as it
 * and whether a retry may succeed; most specific class first. Types follow OpenAI's names where
 * OpenAI has one (`invalid_request_error`, `server_error`) and the status's meaning where it does
 * not; the SDKs pick their exception class from the status alone. Reading back, 403 is an
 * `AuthenticationError` (a refused key, as OpenAI answers it), a 4xx without a row a
 * `ValidationError` and anything else a `ServiceError`. 499 is the de-facto status for "client
 * closed request"; the client never sees it.
 */
export const ERROR_TABLE: readonly ErrorMapping[] = [
  row(ContextLengthError, 400, "invalid_request_error", "context_length_exceeded", 65),
  row(ValidationError, 400, "invalid_request_error", "invalid_value", 65, [400, 422]),
  row(AuthenticationError, 401, "authentication_error", "invalid_api_key", 77, [401, 403]),
  row(PermissionDeniedError, 403, "permission_error", "permission_denied", 77),
  row(NotFoundError, 404, "not_found_error", "not_found", 66, [404]),
  row(MethodNotAllowedError, 405, "invalid_request_error", "method_not_allowed", 64, [405]),
  row(RequestTimeoutError, 408, "invalid_request_error", "request_timeout", 75),
  row(ConflictError, 409, "conflict_error", "conflict", 75, [409]),
  row(PayloadTooLargeError, 413, "invalid_request_error", "payload_too_large", 65, [413]),
  row(UnsupportedMediaTypeError, 415, "invalid_request_error", "unsupported_media_type", 65),
  row(RateLimitError, 429, "rate_limit_error", "rate_limit_exceeded", 75, [429], true),
  row(CancelledError, 499, "cancelled_error", "cancelled", 130, [499]),
  row(ConfigurationError, 500, "server_error", "configuration_error", 78),
  row(ServiceError, 502, "server_error", "service_error", 69),
  row(
    ServiceUnavailableError,
    503,
    "service_unavailable_error",
    "service_unavailable",
    69,
    [503],
    true,
  ),
  row(SvcException, 500, "server_error", "internal_error", 1),
];

/**
 * The row of {@link ERROR_TABLE} for an error class or instance: its own, else its nearest
 * ancestor's.
 *
 * @example
 * ```ts
 * import { NotFoundError } from "@svc/cli/client";
 * import { errorMapping } from "./errors.ts";
 * errorMapping(NotFoundError).status; // 404
 * ```
 */
export function errorMapping(
  // deno-lint-ignore no-explicit-any
  error: Error | (abstract new (...args: any[]) => Error),
): ErrorMapping {
  const target = typeof error === "function" ? error.prototype : error;
  return ERROR_TABLE.find((r) => target instanceof r.error || target === r.error.prototype) ??
    ERROR_TABLE[ERROR_TABLE.length - 1];
}

/**
 * The row of the class an HTTP error answer with `status` is read back as
 * ({@link ErrorMapping.readFrom}): a 4xx without a row is a {@link ValidationError}, anything else a
 * {@link ServiceError}.
 *
 * @example
 * ```ts
 * import { NotFoundError } from "@svc/cli/client";
 * import { errorMappingForStatus } from "./errors.ts";
 * errorMappingForStatus(404).error === NotFoundError; // true
 * ```
 */
export function errorMappingForStatus(status: number): ErrorMapping {
  return ERROR_TABLE.find((r) => r.readFrom.includes(status)) ??
    errorMapping(status >= 400 && status < 500 ? ValidationError : ServiceError);
}

/**
 * True when the same request may succeed if sent again later: a {@link RateLimitError} or a
 * {@link ServiceUnavailableError} (or an HTTP status read back as one: 429, 503).
 *
 * @example
 * ```ts
 * import { RateLimitError } from "@svc/cli/client";
 * import { isRetryable } from "./errors.ts";
 * isRetryable(new RateLimitError("slow down")); // true
 * isRetryable(503); // true
 * ```
 */
export function isRetryable(error: unknown): boolean {
  if (typeof error === "number") return errorMappingForStatus(error).retryable;
  return error instanceof SvcException && errorMapping(error).retryable;
}

/**
 * The message of a caught value: an `Error`'s `message`, anything else (a thrown string, a number)
 * as `String()` writes it. For `catch (err)`, where TypeScript types `err` as `unknown`.
 *
 * @example
 * ```ts
 * import { errorMessage } from "./errors.ts";
 * errorMessage(new Error("disk full")); // "disk full"
 * errorMessage("timeout"); // "timeout"
 * ```
 */
export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function row(
  // deno-lint-ignore no-explicit-any
  error: abstract new (...args: any[]) => Error,
  status: number,
  type: string,
  code: string,
  exitCode: number,
  readFrom: readonly number[] = [],
  retryable = false,
): ErrorMapping {
  return Object.freeze({ error, status, type, code, exitCode, readFrom, retryable });
}

/**
 * Whether `err` is the operating system (EACCES, EPERM) or Deno's permissions refusing an
 * operation, as opposed to its failing: callers answer it with the flag or access to grant.
 */
export function isAccessRefused(err: unknown): boolean {
  return err instanceof Deno.errors.PermissionDenied || err instanceof Deno.errors.NotCapable;
}

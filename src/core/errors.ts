/**
 * The error classes of Svc. Every error we raise derives from {@link SvcException}, carries a stable
 * `code`, the HTTP status it maps to (where an HTTP answer applies) and the exit code the CLI uses.
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
    defaults: { code: string; status: number; exitCode: number } = {
      code: "internal_error",
      status: 500,
      exitCode: 1,
    },
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
    super(message, options, { code: "configuration_error", status: 500, exitCode: 78 });
  }
}

/** Input (a request body, an argument, a file) is malformed or out of range. HTTP 400, exit 65. */
export class ValidationError extends SvcException {
  /** `message` says what was wrong and what to do; `options` may name the param and the cause. */
  constructor(message: string, options: SvcErrorOptions = {}) {
    super(message, options, { code: "invalid_value", status: 400, exitCode: 65 });
  }
}

/** A service we depend on failed or is unreachable. HTTP 502, exit 69 (EX_UNAVAILABLE). */
export class ServiceError extends SvcException {
  /** `message` says what was wrong and what to do; `options` may name the param and the cause. */
  constructor(message: string, options: SvcErrorOptions = {}) {
    super(message, options, { code: "service_error", status: 502, exitCode: 69 });
  }
}

/** The prompt or an input is longer than the model accepts. HTTP 400. */
export class ContextLengthError extends ValidationError {
  /** `message` says what was wrong and what to do; `options` may name the param and the cause. */
  constructor(message: string, options: SvcErrorOptions = {}) {
    super(message, { code: "context_length_exceeded", ...options });
  }
}

/** Missing or wrong credentials. HTTP 401, exit 77 (EX_NOPERM). */
export class AuthenticationError extends SvcException {
  /** `message` says what was wrong and what to do; `options` may name the param and the cause. */
  constructor(message: string, options: SvcErrorOptions = {}) {
    super(message, options, { code: "invalid_api_key", status: 401, exitCode: 77 });
  }
}

/** The caller may not do this here (wrong origin or address for an admin route). HTTP 403. */
export class PermissionDeniedError extends SvcException {
  /** `message` says what was wrong and what to do; `options` may name the param and the cause. */
  constructor(message: string, options: SvcErrorOptions = {}) {
    super(message, options, { code: "permission_denied", status: 403, exitCode: 77 });
  }
}

/** A model, engine or route does not exist. HTTP 404, exit 66 (EX_NOINPUT). */
export class NotFoundError extends SvcException {
  /** `message` says what was wrong and what to do; `options` may name the param and the cause. */
  constructor(message: string, options: SvcErrorOptions = {}) {
    super(message, options, { code: "not_found", status: 404, exitCode: 66 });
  }
}

/** The HTTP method is not allowed on this path. HTTP 405. */
export class MethodNotAllowedError extends SvcException {
  /** `message` says what was wrong and what to do; `options` may name the param and the cause. */
  constructor(message: string, options: SvcErrorOptions = {}) {
    super(message, options, { code: "method_not_allowed", status: 405, exitCode: 64 });
  }
}

/** The request body is larger than the server accepts. HTTP 413. */
export class PayloadTooLargeError extends SvcException {
  /** `message` says what was wrong and what to do; `options` may name the param and the cause. */
  constructor(message: string, options: SvcErrorOptions = {}) {
    super(message, options, { code: "payload_too_large", status: 413, exitCode: 65 });
  }
}

/** The request body is not in a format the route accepts (not `application/json`). HTTP 415. */
export class UnsupportedMediaTypeError extends SvcException {
  /** `message` says what was wrong and what to do; `options` may name the param and the cause. */
  constructor(message: string, options: SvcErrorOptions = {}) {
    super(message, options, { code: "unsupported_media_type", status: 415, exitCode: 65 });
  }
}

/** The client did not send its request (headers or body) in time. HTTP 408. */
export class RequestTimeoutError extends SvcException {
  /** `message` says what was wrong and what to do; `options` may name the param and the cause. */
  constructor(message: string, options: SvcErrorOptions = {}) {
    super(message, options, { code: "request_timeout", status: 408, exitCode: 75 });
  }
}

/** The request conflicts with the current state (e.g. an engine already exists). HTTP 409. */
export class ConflictError extends SvcException {
  /** `message` says what was wrong and what to do; `options` may name the param and the cause. */
  constructor(message: string, options: SvcErrorOptions = {}) {
    super(message, options, { code: "conflict", status: 409, exitCode: 75 });
  }
}

/** Options of errors that ask the client to come back later. */
export interface RetryableErrorOptions extends SvcErrorOptions {
  /** Seconds after which a retry may succeed; sent as `Retry-After`. */
  retryAfterSeconds?: number;
}

/** Too many requests queued: come back later. HTTP 429 with `Retry-After`, exit 75 (EX_TEMPFAIL). */
export class RateLimitError extends SvcException {
  /** Seconds after which a retry may succeed. */
  readonly retryAfterSeconds: number;
  /** `message` says what was wrong and what to do; `options` may name the param and the cause. */
  constructor(message: string, options: RetryableErrorOptions = {}) {
    super(message, options, { code: "rate_limit_exceeded", status: 429, exitCode: 75 });
    this.retryAfterSeconds = options.retryAfterSeconds ?? 1;
  }
}

/** The service is loading, draining or has no backend ready. HTTP 503 with `Retry-After`. */
export class ServiceUnavailableError extends SvcException {
  /** Seconds after which a retry may succeed. */
  readonly retryAfterSeconds: number;
  /** `message` says what was wrong and what to do; `options` may name the param and the cause. */
  constructor(message: string, options: RetryableErrorOptions = {}) {
    super(message, options, { code: "service_unavailable", status: 503, exitCode: 69 });
    this.retryAfterSeconds = options.retryAfterSeconds ?? 1;
  }
}

/** The work was cancelled (client disconnect, abort signal). */
export class CancelledError extends SvcException {
  /** The request was cancelled (by the caller's signal). */
  constructor(message = "the request was cancelled", options: SvcErrorOptions = {}) {
    // 499 is the de-facto status for "client closed request"; the client never sees it.
    super(message, options, { code: "cancelled", status: 499, exitCode: 130 });
  }
}

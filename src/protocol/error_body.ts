/**
 * The one table that maps every error to an HTTP status and an OpenAI error body
 * `{"error":{"message","type","param","code"}}`. zod failures arrive here already converted to
 * `ValidationError`s (see `validate.ts`), so they follow the `ValidationError` row.
 *
 * @module
 */
import {
  AuthenticationError,
  CancelledError,
  ConfigurationError,
  ConflictError,
  ContextLengthError,
  MethodNotAllowedError,
  NotFoundError,
  PayloadTooLargeError,
  PermissionDeniedError,
  RateLimitError,
  RequestTimeoutError,
  ServiceError,
  ServiceUnavailableError,
  SvcException,
  UnsupportedMediaTypeError,
  ValidationError,
} from "../core/errors.ts";

/** An OpenAI error body. */
export interface OpenAIErrorBody {
  /** OpenAI's error object. */
  error: { message: string; type: string; param: string | null; code: string | null };
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
}

/**
 * Error class → HTTP status and OpenAI `type`, most specific class first. Types follow OpenAI's
 * names where OpenAI has one (`invalid_request_error`, `server_error`) and the status's meaning
 * where it does not; the SDKs pick their exception class from the status alone.
 */
export const ERROR_TABLE: readonly ErrorMapping[] = [
  { error: ContextLengthError, status: 400, type: "invalid_request_error" },
  { error: ValidationError, status: 400, type: "invalid_request_error" },
  { error: AuthenticationError, status: 401, type: "authentication_error" },
  { error: PermissionDeniedError, status: 403, type: "permission_error" },
  { error: NotFoundError, status: 404, type: "not_found_error" },
  { error: MethodNotAllowedError, status: 405, type: "invalid_request_error" },
  { error: RequestTimeoutError, status: 408, type: "invalid_request_error" },
  { error: ConflictError, status: 409, type: "conflict_error" },
  { error: PayloadTooLargeError, status: 413, type: "invalid_request_error" },
  { error: UnsupportedMediaTypeError, status: 415, type: "invalid_request_error" },
  { error: RateLimitError, status: 429, type: "rate_limit_error" },
  { error: CancelledError, status: 499, type: "cancelled_error" },
  { error: ConfigurationError, status: 500, type: "server_error" },
  { error: ServiceError, status: 502, type: "server_error" },
  { error: ServiceUnavailableError, status: 503, type: "service_unavailable_error" },
  { error: SvcException, status: 500, type: "server_error" },
];

/** Everything needed to answer with an error. */
export interface WireError {
  /** HTTP status. */
  status: number;
  /** The body. */
  body: OpenAIErrorBody;
  /** Seconds for a `Retry-After` header (429 and 503). */
  retryAfterSeconds?: number;
  /** True when the error was not one of ours: log it, the client only sees a generic message. */
  unexpected: boolean;
}

/** Message sent for errors that are not ours (details stay in the server log). */
export const INTERNAL_ERROR_MESSAGE =
  "The server had an internal error while processing the request; its log has the details.";

/**
 * Maps any thrown value to its status and OpenAI error body using {@link ERROR_TABLE}. Values that
 * are not `SvcException`s become a 500 with a generic message (their text may hold internals).
 *
 * @example
 * ```ts
 * import { NotFoundError } from "@svc/cli";
 * import { toWireError } from "@svc/cli/server";
 * const e = toWireError(new NotFoundError("no model 'x'", { code: "model_not_found" }));
 * // e.status === 404, e.body.error.type === "not_found_error"
 * ```
 */
export function toWireError(err: unknown, options: { requestId?: string } = {}): WireError {
  if (!(err instanceof SvcException)) {
    const suffix = options.requestId ? ` (request id ${options.requestId})` : "";
    return {
      status: 500,
      body: errorBody(INTERNAL_ERROR_MESSAGE + suffix, {
        type: "server_error",
        code: "internal_error",
      }),
      unexpected: true,
    };
  }
  const row = ERROR_TABLE.find((r) => err instanceof r.error)!;
  const wire: WireError = {
    status: row.status,
    body: errorBody(err.message, { type: row.type, code: err.code, param: err.param }),
    unexpected: false,
  };
  if (err instanceof RateLimitError || err instanceof ServiceUnavailableError) {
    wire.retryAfterSeconds = Math.max(1, Math.ceil(err.retryAfterSeconds));
  }
  return wire;
}

/**
 * Builds an OpenAI error body.
 *
 * @example
 * ```ts
 * import { errorBody } from "@svc/cli/server";
 * errorBody("bad", { type: "invalid_request_error", param: "n" });
 * ```
 */
export function errorBody(
  message: string,
  options: { type: string; param?: string | null; code?: string | null },
): OpenAIErrorBody {
  return {
    error: {
      message,
      type: options.type,
      param: options.param ?? null,
      code: options.code ?? null,
    },
  };
}

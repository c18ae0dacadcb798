/**
 * Renders any error as an HTTP status and an OpenAI error body
 * `{"error":{"message","type","param","code"}}`, through the one error table, `ERROR_TABLE` of
 * `src/core/errors.ts`. zod failures arrive here already converted to `ValidationError`s (see
 * `validate.ts`), so they follow the `ValidationError` row.
 *
 * @module
 */
import {
  errorMapping,
  RateLimitError,
  ServiceUnavailableError,
  SvcException,
} from "../core/errors.ts";

/** An OpenAI error body. */
export interface OpenAIErrorBody {
  /** OpenAI's error object. */
  error: { message: string; type: string; param: string | null; code: string | null };
}

/** Everything needed to answer with an error. */
export interface WireError {
  /** HTTP status. */
  status: number;
  /** The body. */
  body: OpenAIErrorBody;
  /** Seconds for a `Retry-After` header (429 and 503). */
  retryAfterSeconds?: number;
  /** More headers the error carries (a rate limit's `x-ratelimit-*`). */
  headers?: Readonly<Record<string, string>>;
  /** True when the error was not one of ours: log it, the client only sees a generic message. */
  unexpected: boolean;
}

/** Message sent for errors that are not ours (details stay in the server log). */
export const INTERNAL_ERROR_MESSAGE =
  "The server had an internal error while processing the request; its log has the details.";

/**
 * Maps any thrown value to its status and OpenAI error body using the error table (`errorMapping`). Values that
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
  const row = errorMapping(err);
  const wire: WireError = {
    status: row.status,
    body: errorBody(err.message, { type: row.type, code: err.code, param: err.param }),
    unexpected: false,
  };
  if (row.retryable && (err instanceof RateLimitError || err instanceof ServiceUnavailableError)) {
    wire.retryAfterSeconds = Math.max(1, Math.ceil(err.retryAfterSeconds));
  }
  if (err instanceof RateLimitError && err.headers) wire.headers = err.headers;
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

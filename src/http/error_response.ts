/**
 * Turns any thrown value into an OpenAI error `Response`, through the one error table of
 * `src/protocol/error_body.ts`.
 *
 * @module
 */
import { toWireError, type WireError } from "../protocol/error_body.ts";
import type { HttpLogger } from "./logger.ts";

/** Options of {@link errorResponse}. */
export interface ErrorResponseOptions {
  logger?: HttpLogger;
  /** Put in the message of unexpected errors, so a user can find the log line. */
  requestId?: string;
  /** Extra headers (e.g. `Allow` on a 405). */
  headers?: Record<string, string>;
}

/**
 * Builds the JSON error response for `err`; logs errors that are not ours (with their stack) and
 * our own 5xx errors. Adds `Retry-After` for 429 and 503.
 *
 * @example
 * ```ts
 * import { ValidationError } from "@svc/cli";
 * import { errorResponse } from "./error_response.ts";
 * const res = errorResponse(new ValidationError("n must be >= 1", { param: "n" }));
 * // res.status === 400
 * ```
 */
export function errorResponse(err: unknown, options: ErrorResponseOptions = {}): Response {
  return describeErrorResponse(err, options).response;
}

/** {@link errorResponse}, also returning the wire error (for metrics by code). */
export function describeErrorResponse(
  err: unknown,
  options: ErrorResponseOptions = {},
): { response: Response; wire: WireError } {
  const wire = toWireError(err, { requestId: options.requestId });
  logError(err, wire, options);
  const headers: Record<string, string> = {
    "content-type": "application/json",
    ...options.headers,
    ...wire.headers,
  };
  if (wire.retryAfterSeconds !== undefined) headers["retry-after"] = String(wire.retryAfterSeconds);
  return {
    response: new Response(JSON.stringify(wire.body), { status: wire.status, headers }),
    wire,
  };
}

/** Logs what an operator should see: unexpected errors always, our own 5xx as warnings. */
export function logError(
  err: unknown,
  wire: WireError,
  options: { logger?: HttpLogger; requestId?: string },
): void {
  if (options.logger === undefined) return;
  if (wire.unexpected) {
    options.logger.error("unexpected error while handling a request", {
      requestId: options.requestId,
      // A string, so any logger (even a plain JSON one) keeps the stack.
      error: err instanceof Error ? (err.stack ?? `${err.name}: ${err.message}`) : String(err),
    });
  } else if (wire.status >= 500 && wire.status !== 503) {
    options.logger.warn(wire.body.error.message, {
      requestId: options.requestId,
      code: wire.body.error.code,
    });
  }
}

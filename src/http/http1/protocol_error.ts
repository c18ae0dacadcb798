/**
 * Errors of the HTTP framing itself (a malformed request line, a bad chunk size, a head too
 * large, a client too slow), and their answers: an OpenAI error body like every other error.
 *
 * @module
 */
import {
  RequestTimeoutError,
  ServiceUnavailableError,
  type SvcException,
  ValidationError,
} from "../../core/errors.ts";
import { toWireError } from "../../protocol/error_body.ts";

/**
 * A malformed request: a `ValidationError` whose `status` is the HTTP status to answer (400, or
 * 431, 501, 505 where HTTP has a more precise one).
 *
 * @example
 * ```ts
 * import { badRequest } from "./protocol_error.ts";
 * throw badRequest("The chunk size 'zz' is not hexadecimal.", "invalid_chunk_size");
 * ```
 */
export function badRequest(message: string, code: string, status = 400): ValidationError {
  return new ValidationError(message, { code, status });
}

/**
 * The client did not send its headers or body in time: 408.
 *
 * @example
 * ```ts
 * import { requestTimeout } from "./protocol_error.ts";
 * const err = requestTimeout("headers", 10000); // err.status === 408
 * ```
 */
export function requestTimeout(part: "headers" | "body", ms: number): RequestTimeoutError {
  return new RequestTimeoutError(
    `The request ${part} did not arrive within ${ms} ms; send the whole request promptly.`,
    { code: part === "headers" ? "header_timeout" : "body_timeout" },
  );
}

/** The answer to a connection over the server's limit: 503, retry in a second. */
export function tooManyConnections(max: number): ServiceUnavailableError {
  return new ServiceUnavailableError(
    `The server has its maximum of ${max} connections open; retry shortly.`,
    { code: "too_many_connections", retryAfterSeconds: 1 },
  );
}

/** The answer to a connection over the per-client limit: 503, retry once some have closed. */
export function tooManyClientConnections(max: number): ServiceUnavailableError {
  return new ServiceUnavailableError(
    `Your address already has this server's maximum of ${max} connections per client open; ` +
      "close some or retry shortly.",
    { code: "too_many_client_connections", retryAfterSeconds: 1 },
  );
}

/**
 * The JSON error response for a protocol error, with the status the error carries (unlike the
 * route errors, whose status comes from the error table by class).
 *
 * @example
 * ```ts
 * import { badRequest, protocolErrorResponse } from "./protocol_error.ts";
 * protocolErrorResponse(badRequest("no", "bad_request", 431)).status; // 431
 * ```
 */
export function protocolErrorResponse(err: SvcException): Response {
  const wire = toWireError(err);
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (wire.retryAfterSeconds !== undefined) headers["retry-after"] = String(wire.retryAfterSeconds);
  return new Response(JSON.stringify(wire.body), { status: err.status, headers });
}

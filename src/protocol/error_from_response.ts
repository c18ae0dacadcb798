/**
 * The one mapping of an HTTP error answer (from our own servers, an OpenAI-compatible API or a
 * cloud provider) to our typed errors: the error body's message, code and param, `Retry-After`,
 * and the class chosen by status. Used by the client library, the CLI's API clients, the remote
 * embedding providers and the gateway. Pure: web-standard `Response`/`Headers` only.
 *
 * @module
 */
import {
  AuthenticationError,
  ContextLengthError,
  ERROR_TABLE,
  errorMappingForStatus,
  RateLimitError,
  ServiceError,
  type SvcErrorOptions,
  type SvcException,
  ValidationError,
} from "../core/errors.ts";

/** Default length at which a server's message is cut. */
export const ERROR_MESSAGE_MAX_CHARS = 300;

/** What an error body says (the fields that are absent are null). */
export interface ErrorAnswer {
  /** The server's message, on one line and clipped; "(empty body)" when there was none. */
  message: string;
  /** OpenAI's `error.code`, if any. */
  code: string | null;
  /** OpenAI's `error.param`, if any. */
  param: string | null;
  /** OpenAI's `error.type`. */
  type: string | null;
}

/**
 * Reads an error body: `{"error":{message,code,param,type}}` (OpenAI, Zhipu, Svc),
 * `{"error":"text"}` (Ollama), `{"message"}`/`{"Message"}` (Cohere, AWS), `{"detail"}` as text or
 * a list of `{msg}` (Jina, FastAPI), else the text itself. White space is folded and the message
 * clipped to `maxChars` (default {@link ERROR_MESSAGE_MAX_CHARS}).
 *
 * @example
 * ```ts
 * import { parseErrorBody } from "@svc/cli";
 * parseErrorBody('{"error":{"message":"no such model","code":"model_not_found"}}').code;
 * // "model_not_found"
 * ```
 */
export function parseErrorBody(text: string, options: { maxChars?: number } = {}): ErrorAnswer {
  const max = options.maxChars ?? ERROR_MESSAGE_MAX_CHARS;
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { message: clip(text, max), code: null, param: null, type: null };
  }
  const body = (typeof json === "object" && json !== null ? json : {}) as Record<string, unknown>;
  const error = body.error;
  const inner = typeof error === "object" && error !== null
    ? error as Record<string, unknown>
    : undefined;
  const message = [inner?.message, error, body.message, body.Message, detailText(body.detail)]
    .find((c): c is string => typeof c === "string" && c !== "");
  return {
    message: clip(message ?? text, max),
    code: str(inner ? inner.code : body.code),
    param: str(inner?.param),
    type: str(inner?.type),
  };
}

/**
 * Seconds of a `Retry-After` header (seconds or an HTTP date, never negative); undefined when it
 * is absent or unreadable.
 *
 * @example
 * ```ts
 * import { retryAfterSeconds } from "@svc/cli";
 * retryAfterSeconds(new Headers({ "retry-after": "7" })); // 7
 * ```
 */
export function retryAfterSeconds(headers: Headers): number | undefined {
  const raw = headers.get("retry-after");
  if (raw === null || raw.trim() === "") return undefined;
  const seconds = Number(raw);
  if (Number.isFinite(seconds)) return Math.max(0, seconds);
  const date = Date.parse(raw);
  return Number.isNaN(date) ? undefined : Math.max(0, (date - Date.now()) / 1000);
}

/** Options of {@link errorFromStatus} and {@link errorFromResponse}. */
export interface ErrorFromStatusOptions {
  /** Who answered, named in the message: a URL, or e.g. "Jina AI at https://…". */
  source: string;
  /** What to check when the credentials are refused (401/403), e.g. "JINA_API_KEY". */
  keyHint?: string;
  /** Seconds from `Retry-After`, kept on 429/503 errors (0 or none: the class default, 1 s). */
  retryAfterSeconds?: number;
  /**
   * The server is a dependency, not the caller's counterpart (an embedding provider behind our
   * API): only refused credentials (401/403) and rate limits (429) keep their own class; every
   * other status is a {@link ServiceError} with code `upstream_http_<status>`.
   */
  upstream?: boolean;
}

/**
 * The typed error for an HTTP error answer. The message reads
 * `<server's message> (HTTP <status> from <source>)`; the error carries the status and the
 * server's code and param. The class comes from the error table's `readFrom` column
 * (`src/core/errors.ts`): 400/422 → ValidationError (ContextLengthError for
 * `context_length_exceeded`), 401/403 → AuthenticationError, 404 NotFoundError, 405, 409, 413,
 * 429 RateLimitError, 499 CancelledError, 503 ServiceUnavailableError, other 4xx ValidationError,
 * the rest ServiceError.
 *
 * @example
 * ```ts
 * import { errorFromStatus, parseErrorBody } from "@svc/cli";
 * const err = errorFromStatus(404, parseErrorBody('{"error":{"message":"no job"}}'), {
 *   source: "http://127.0.0.1:8000/v1/fine_tuning/jobs/x",
 * });
 * // err is a NotFoundError: "no job (HTTP 404 from http://127.0.0.1:8000/v1/fine_tuning/jobs/x)"
 * ```
 */
export function errorFromStatus(
  status: number,
  answer: ErrorAnswer,
  options: ErrorFromStatusOptions,
): SvcException {
  const message = `${answer.message} (HTTP ${status} from ${options.source})`;
  // A dependency's codes are its own vocabulary, not ours: they are not carried upstream.
  const opts = options.upstream ? {} : carried(status, answer);
  // "Retry-After: 0" leaves the class's default pause (1 s): a loop retrying on it never spins.
  const seconds = options.retryAfterSeconds;
  const retry = {
    ...opts,
    retryAfterSeconds: seconds !== undefined && seconds > 0 ? seconds : undefined,
  };
  const row = errorMappingForStatus(status);
  if (row.error === AuthenticationError) {
    const hint = options.keyHint ? `; check ${options.keyHint}` : "";
    return new AuthenticationError(message + hint, opts);
  }
  if (row.error === RateLimitError) return new RateLimitError(message, retry);
  if (options.upstream) return new ServiceError(message, { code: `upstream_http_${status}` });
  if (row.error === ValidationError && answer.code === "context_length_exceeded") {
    return new ContextLengthError(message, opts);
  }
  const ErrorClass = row.error as new (message: string, options: SvcErrorOptions) => SvcException;
  return new ErrorClass(message, row.retryable ? retry : opts);
}

/**
 * Reads an error answer's body (a failure to read leaves the status to go on) and maps it with
 * {@link errorFromStatus}, `Retry-After` included.
 *
 * @example
 * ```ts
 * import { errorFromResponse } from "@svc/cli";
 * const err = await errorFromResponse(
 *   Response.json({ error: { message: "slow down" } }, { status: 429, headers: { "retry-after": "3" } }),
 *   { source: "the chat server" },
 * );
 * // err is a RateLimitError with retryAfterSeconds 3
 * ```
 */
export async function errorFromResponse(
  response: Response,
  options: ErrorFromStatusOptions & { maxChars?: number },
): Promise<SvcException> {
  const text = await response.text().catch(() => "");
  return errorFromStatus(response.status, parseErrorBody(text, options), {
    ...options,
    retryAfterSeconds: options.retryAfterSeconds ?? retryAfterSeconds(response.headers),
  });
}

/**
 * The typed error for an `{"error":…}` event in the middle of a stream. Such an event carries no
 * status: its OpenAI `type` gives it (through {@link ERROR_TABLE}), else 502.
 *
 * @example
 * ```ts
 * import { errorFromStreamEvent } from "./error_from_response.ts";
 * errorFromStreamEvent({ error: { message: "stopped", type: "service_unavailable_error" } }, "url");
 * // a ServiceUnavailableError
 * ```
 */
export function errorFromStreamEvent(
  event: unknown,
  source: string,
  options: { maxChars?: number } = {},
): SvcException {
  const answer = parseErrorBody(JSON.stringify(event), options);
  const status = ERROR_TABLE.find((row) => row.type === answer.type)?.status ?? 502;
  return errorFromStatus(status, answer, { source: `${source} (in the stream)` });
}

function carried(status: number, answer: ErrorAnswer): SvcErrorOptions {
  const opts: SvcErrorOptions = { status };
  if (answer.code !== null) opts.code = answer.code;
  if (answer.param !== null) opts.param = answer.param;
  return opts;
}

function detailText(detail: unknown): string | undefined {
  if (typeof detail === "string") return detail;
  if (Array.isArray(detail)) {
    return detail.map((d) => (d as { msg?: unknown })?.msg ?? JSON.stringify(d)).join("; ");
  }
  return undefined;
}

function str(v: unknown): string | null {
  return typeof v === "string" && v !== "" ? v : typeof v === "number" ? String(v) : null;
}

function clip(text: string, max: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  if (flat === "") return "(empty body)";
  return flat.length > max ? `${flat.slice(0, max)}…` : flat;
}

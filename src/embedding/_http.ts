/**
 * The HTTP call every remote embedding provider makes: POST JSON with a timeout, and the mapping
 * of failures to our error classes (never a bare network exception).
 *
 * @module
 */

import {
  AuthenticationError,
  CancelledError,
  RateLimitError,
  ServiceError,
} from "../core/errors.ts";

/** Default per-request timeout. */
export const DEFAULT_TIMEOUT_MS = 60_000;

/** Options of {@link postJson}. */
export interface PostJsonOptions {
  /** Provider name for messages, e.g. "Jina". */
  provider: string;
  /** Variable (or option) holding the credentials, named in 401/403 messages. */
  keyVariable?: string;
  headers?: Record<string, string>;
  timeoutMs?: number;
  fetch?: typeof fetch;
  signal?: AbortSignal;
}

/** Joins a base URL and a path with exactly one slash between them. */
export function joinUrl(base: string, path: string): string {
  return `${base.replace(/\/+$/, "")}/${path.replace(/^\/+/, "")}`;
}

/**
 * POSTs `body` (an object, or text sent as is) and returns the parsed JSON answer.
 *
 * Errors: {@link AuthenticationError} (401/403), {@link RateLimitError} (429, with Retry-After),
 * {@link ServiceError} (other statuses, unreachable service naming the URL, timeout, an answer that
 * is not JSON), {@link CancelledError} (the caller's signal aborted). Messages carry the
 * provider's own error text.
 */
export async function postJson(
  url: string,
  body: unknown,
  options: PostJsonOptions,
): Promise<unknown> {
  const { provider } = options;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, timeoutMs);
  const onAbort = () => controller.abort();
  options.signal?.addEventListener("abort", onAbort, { once: true });
  const doFetch = options.fetch ?? fetch;
  try {
    let response: Response;
    try {
      response = await doFetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", ...options.headers },
        body: typeof body === "string" ? body : JSON.stringify(body),
        signal: controller.signal,
      });
    } catch (err) {
      if (options.signal?.aborted) throw new CancelledError(`${provider} request cancelled`);
      if (timedOut) {
        throw new ServiceError(
          `${provider} at ${url} did not answer within ${timeoutMs} ms; raise timeoutMs or ` +
            `check the service`,
          { cause: err, code: "upstream_timeout" },
        );
      }
      throw new ServiceError(
        `cannot reach ${provider} at ${url}: ${(err as Error).message}; check the base URL ` +
          `and that the service is running`,
        { cause: err, code: "upstream_unreachable" },
      );
    }
    let text: string;
    try {
      text = await response.text();
    } catch (err) {
      throw new ServiceError(`${provider} at ${url} broke off its answer: ${err}`, { cause: err });
    }
    if (!response.ok) throw statusError(response, text, url, options);
    try {
      return JSON.parse(text);
    } catch (err) {
      throw new ServiceError(
        `${provider} at ${url} answered with something that is not JSON: ${clip(text)}`,
        { cause: err, code: "upstream_bad_response" },
      );
    }
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener("abort", onAbort);
  }
}

function statusError(response: Response, text: string, url: string, options: PostJsonOptions) {
  const { provider } = options;
  const detail = providerMessage(text);
  const status = response.status;
  if (status === 401 || status === 403) {
    const fix = options.keyVariable ? `; check ${options.keyVariable}` : "";
    return new AuthenticationError(
      `${provider} rejected the credentials (HTTP ${status}): ${detail}${fix}`,
    );
  }
  if (status === 429) {
    const retryAfter = Number(response.headers.get("retry-after"));
    return new RateLimitError(`${provider} is rate limiting requests (HTTP 429): ${detail}`, {
      retryAfterSeconds: Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : undefined,
    });
  }
  return new ServiceError(`${provider} at ${url} failed with HTTP ${status}: ${detail}`, {
    code: `upstream_http_${status}`,
  });
}

/**
 * The error message inside a provider's error body: `error.message` (OpenAI, Zhipu), `error`
 * (Ollama), `message`/`Message` (Cohere, AWS), `detail` (Jina), else the text itself.
 */
export function providerMessage(text: string): string {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return clip(text) || "(empty body)";
  }
  const body = json as Record<string, unknown> | null;
  const error = body?.error as Record<string, unknown> | string | undefined;
  const candidates = [
    typeof error === "object" && error !== null ? error.message : error,
    body?.message,
    body?.Message,
    detailText(body?.detail),
  ];
  const found = candidates.find((c) => typeof c === "string" && c !== "");
  return clip(typeof found === "string" ? found : text);
}

function detailText(detail: unknown): string | undefined {
  if (typeof detail === "string") return detail;
  if (Array.isArray(detail)) {
    return detail.map((d) => (d as { msg?: unknown })?.msg ?? JSON.stringify(d)).join("; ");
  }
  return undefined;
}

function clip(text: string): string {
  const flat = text.trim().replace(/\s+/g, " ");
  return flat.length > 300 ? `${flat.slice(0, 300)}…` : flat;
}

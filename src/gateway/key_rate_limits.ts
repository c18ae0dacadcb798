/**
 * Per-key request and token rates, held across every gateway replica by the coordinator
 * (src/coord/): a request of a key with `rpm` or `tpm` is counted before it is forwarded, and
 * refused with a 429 once its minute's window is full; tokens are charged from each answer's
 * usage. Every answer to such a key carries OpenAI's `x-ratelimit-*` headers. While the
 * coordinator cannot be reached such a key's requests are refused with a 503
 * `coordination_unavailable` and Retry-After (limits fail closed); keys without limits go on.
 *
 * @module
 */

import { RateLimitError, ServiceUnavailableError } from "../core/errors.ts";
import {
  COORDINATION_UNAVAILABLE,
  type Coordinator,
  isCoordinationUnavailable,
  type RateDecision,
  type RateWindow,
} from "../coord/coordinator.ts";
import type { KeyPrincipal } from "./api_keys.ts";

/** Counts one request of `key`; its rate headers, or a 429 when a limit is reached. */
export async function admitKey(
  coordinator: Coordinator,
  key: KeyPrincipal,
): Promise<Record<string, string>> {
  if (key.rpm === null && key.tpm === null) return {};
  let decision: RateDecision;
  try {
    decision = await coordinator.admit(key.keyId, {
      ...(key.rpm !== null && { rpm: key.rpm }),
      ...(key.tpm !== null && { tpm: key.tpm }),
    });
  } catch (err) {
    if (!isCoordinationUnavailable(err)) throw err;
    throw new ServiceUnavailableError(
      "This API key has rate limits, and the gateway cannot count them now: its coordination " +
        "Redis cannot be reached. Retry shortly (keys without limits are still served).",
      { code: COORDINATION_UNAVAILABLE, retryAfterSeconds: 1, cause: err },
    );
  }
  const headers = rateLimitHeaders(decision);
  if (decision.allowed) return headers;
  const what = decision.limitedBy === "tokens"
    ? `${key.tpm} tokens per minute`
    : `${key.rpm} requests per minute`;
  throw new RateLimitError(
    `Rate limit reached for this API key: ${what}. Try again in ` +
      `${
        Math.ceil(decision.retryAfterMs / 1000)
      } s, or ask the gateway's admin for a higher limit.`,
    {
      code: "rate_limit_exceeded",
      retryAfterSeconds: decision.retryAfterMs / 1000,
      headers,
    },
  );
}

/** OpenAI's headers for the limits a decision covers. */
export function rateLimitHeaders(decision: RateDecision): Record<string, string> {
  const headers: Record<string, string> = {};
  const add = (kind: "requests" | "tokens", window: RateWindow | undefined) => {
    if (window === undefined) return;
    headers[`x-ratelimit-limit-${kind}`] = String(window.limit);
    headers[`x-ratelimit-remaining-${kind}`] = String(window.remaining);
    headers[`x-ratelimit-reset-${kind}`] = duration(window.resetMs);
  };
  add("requests", decision.requests);
  add("tokens", decision.tokens);
  return headers;
}

/** A reset time as OpenAI writes it: `1s`, `6m0s`, `120ms`. */
function duration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))}ms`;
  const seconds = Math.ceil(ms / 1000);
  return seconds < 60 ? `${seconds}s` : `${Math.floor(seconds / 60)}m${seconds % 60}s`;
}

/**
 * The limits of the HTTP/1.1 server: how many connections it holds and how long it waits for a
 * client at each step, so idle, slow or stalled clients cannot exhaust its sockets or memory.
 *
 * @module
 */

import { DEFAULT_MAX_BODY_BYTES } from "../body.ts";

/** Limits of one server; every field has a default in {@link DEFAULT_HTTP_LIMITS}. */
export interface HttpLimits {
  /** Most open connections; one more is answered 503 (`Connection: close`) and closed. */
  maxConnections: number;
  /**
   * Most open connections from one client address (an IPv6 /64 counts as one): one more is
   * answered 503 and closed, so a single peer cannot take every slot. Loopback peers are exempt
   * (a local proxy or the gateway is one address for many clients).
   */
  maxConnectionsPerClient: number;
  /** Time from a connection's start (or a request's first byte) to the end of its headers (408). */
  headerTimeoutMs: number;
  /** Time from the end of the headers to the end of the body (408). */
  bodyTimeoutMs: number;
  /** How long a keep-alive connection may wait idle for its next request before it is closed. */
  keepAliveTimeoutMs: number;
  /** Largest request head (request line and headers) in bytes (431). */
  maxHeaderBytes: number;
  /**
   * How long a write may stay blocked because the client stopped reading; then the connection
   * is closed and the response body cancelled (which cancels the work behind it).
   */
  writeStallTimeoutMs: number;
  /** Largest request body in bytes, on every endpoint (413 beyond). */
  maxBodyBytes: number;
}

/** The defaults: generous for real clients, short enough that a flood of idle sockets drains. */
export const DEFAULT_HTTP_LIMITS: Readonly<HttpLimits> = Object.freeze({
  maxConnections: 1024,
  // A quarter of the slots: room for a busy NAT or proxy, while three more peers are needed to
  // fill the server.
  maxConnectionsPerClient: 256,
  headerTimeoutMs: 10_000,
  bodyTimeoutMs: 60_000,
  keepAliveTimeoutMs: 5_000,
  maxHeaderBytes: 16 * 1024,
  writeStallTimeoutMs: 30_000,
  maxBodyBytes: DEFAULT_MAX_BODY_BYTES,
});

/** The command-line flag of each limit (`svc llm run`, `svc llm serve`). */
export const HTTP_LIMIT_FLAGS: Readonly<Record<keyof HttpLimits, string>> = Object.freeze({
  maxConnections: "max-connections",
  maxConnectionsPerClient: "max-connections-per-client",
  headerTimeoutMs: "header-timeout-ms",
  bodyTimeoutMs: "body-timeout-ms",
  keepAliveTimeoutMs: "keep-alive-timeout-ms",
  maxHeaderBytes: "max-header-bytes",
  writeStallTimeoutMs: "write-stall-timeout-ms",
  maxBodyBytes: "max-body-bytes",
});

/**
 * `limits` over the defaults; a value that is not a positive number is a TypeError (a bug in the
 * caller, since the CLI checks its flags).
 *
 * @example
 * ```ts
 * import { resolveHttpLimits } from "./limits.ts";
 * resolveHttpLimits({ maxConnections: 64 }).headerTimeoutMs; // 10000
 * ```
 */
export function resolveHttpLimits(limits: Partial<HttpLimits> = {}): HttpLimits {
  const out = { ...DEFAULT_HTTP_LIMITS };
  for (const key of Object.keys(DEFAULT_HTTP_LIMITS) as (keyof HttpLimits)[]) {
    const value = limits[key];
    if (value === undefined) continue;
    if (!(typeof value === "number" && value > 0)) {
      throw new TypeError(`HTTP limit ${key} must be a positive number, got ${value}`);
    }
    out[key] = value;
  }
  return out;
}

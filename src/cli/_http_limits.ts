/**
 * The HTTP limit flags shared by `svc llm run` (one engine) and `svc llm serve` (the gateway,
 * which passes the timeouts on to its engines): the option specs, their help lines, and parsing.
 *
 * @module
 */
import { DEFAULT_HTTP_LIMITS, HTTP_LIMIT_FLAGS, type HttpLimits } from "../http/http1/limits.ts";
import { intOption, type OptionSpec, type ParsedArgs } from "./args.ts";

const KEYS = Object.keys(HTTP_LIMIT_FLAGS) as (keyof HttpLimits)[];
const MAX: Record<keyof HttpLimits, number> = {
  maxConnections: 1_000_000,
  maxConnectionsPerClient: 1_000_000,
  headerTimeoutMs: 3_600_000,
  bodyTimeoutMs: 3_600_000,
  keepAliveTimeoutMs: 3_600_000,
  maxHeaderBytes: 1024 * 1024,
  writeStallTimeoutMs: 3_600_000,
  maxBodyBytes: 1024 * 1024 * 1024,
};
const ABOUT: Record<keyof HttpLimits, string> = {
  maxConnections: "most open connections; more get 503",
  maxConnectionsPerClient: "most from one address, loopback exempt; more get 503",
  headerTimeoutMs: "ms for a request's headers to arrive (408)",
  bodyTimeoutMs: "ms for a request's body to arrive (408)",
  keepAliveTimeoutMs: "ms an idle keep-alive connection stays open",
  maxHeaderBytes: "largest request head in bytes (431)",
  writeStallTimeoutMs: "ms a client may stop reading before its response is cut",
  maxBodyBytes: "largest request body in bytes, every endpoint (413)",
};

/** The option specs of the HTTP limit flags. */
export const HTTP_LIMIT_OPTIONS: OptionSpec = Object.fromEntries(
  KEYS.map((k) => [HTTP_LIMIT_FLAGS[k], { type: "string" as const }]),
);

/** Help lines of the HTTP limit flags (with their defaults). */
export const HTTP_LIMITS_HELP: string = KEYS.map((k) =>
  `  --${`${HTTP_LIMIT_FLAGS[k]} <n>`.padEnd(31)}${ABOUT[k]} (default ${DEFAULT_HTTP_LIMITS[k]})`
).join("\n");

/**
 * The limits given on the command line (only those given); a value that is not a whole number
 * in range is a ValidationError naming the flag.
 *
 * @example
 * ```ts
 * import { httpLimitsFrom } from "./_http_limits.ts";
 * httpLimitsFrom({ "max-connections": "64" }); // { maxConnections: 64 }
 * ```
 */
export function httpLimitsFrom(values: ParsedArgs["values"]): Partial<HttpLimits> {
  const limits: Partial<HttpLimits> = {};
  for (const key of KEYS) {
    const n = intOption(values, HTTP_LIMIT_FLAGS[key], { min: 1, max: MAX[key] });
    if (n !== undefined) limits[key] = n;
  }
  return limits;
}

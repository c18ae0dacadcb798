/**
 * The logging interface the HTTP layer writes to: the part of the core `Logger` it uses, so the
 * core logger (the default, with secret redaction) or a test spy fits.
 *
 * @module
 */
import { getLogger, type LogFields } from "../core/logging.ts";

/** What the HTTP layer logs through. */
export interface HttpLogger {
  /** Logs an error. */
  error(message: string, fields?: LogFields): void;
  /** Logs a warning. */
  warn(message: string, fields?: LogFields): void;
  /** Logs an informational line. */
  info?(message: string, fields?: LogFields): void;
}

/**
 * The default logger of the HTTP layer: the core logger named `http`.
 *
 * @example
 * ```ts
 * import { defaultHttpLogger } from "./logger.ts";
 * defaultHttpLogger().warn("slow engine", { model: "demo/chat" });
 * ```
 */
export function defaultHttpLogger(): HttpLogger {
  return getLogger("http");
}

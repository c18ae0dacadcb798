/**
 * Logging: one line per event on stderr (and optionally appended to a file), with secrets redacted
 * everywhere — by field name, by well-known token shapes, and by value for registered secrets.
 *
 * @example
 * ```ts
 * import { getLogger, registerSecret, setupLogger } from "@svc/cli";
 * setupLogger("info");
 * registerSecret("my-api-key-123");
 * getLogger("server").info("listening", { port: 8000, apiKey: "my-api-key-123" });
 * // 2025-01-01T00:00:00.000Z INFO  [server] listening port=8000 apiKey=[REDACTED]
 * ```
 *
 * @module
 */

import { ConfigurationError, ValidationError } from "./errors.ts";

/** Log levels, lowest first; `silent` turns logging off. */
export const LogLevel = {
  DEBUG: "debug",
  INFO: "info",
  WARN: "warn",
  ERROR: "error",
  SILENT: "silent",
} as const;
/** One of the values of {@link LogLevel}. */
export type LogLevel = typeof LogLevel[keyof typeof LogLevel];

/** Key/value context attached to one log event. */
export type LogFields = { [key: string]: unknown };

/** Options of {@link setupLogger}. */
export interface LoggerOptions {
  /** Lowest level that is written (default `info`). */
  level?: LogLevel | string;
  /** File to append every line to (created with its parent folders). */
  logFile?: string | null;
  /** Format of lines in the file: `text` (as on stderr, default) or `json` (one object a line). */
  fileFormat?: "text" | "json";
  /** Write lines to stderr (default true). */
  stderr?: boolean;
  /** Extra receiver of every (already redacted) text line, e.g. for tests or a UI. */
  sink?: ((line: string) => void) | null;
}

/** A named logger. Each call writes at most one line. */
export interface Logger {
  /** The logger's name, shown in brackets on each line. */
  readonly name: string;
  /** Logs detail useful when investigating. */
  debug(message: string, fields?: LogFields): void;
  /** Logs normal operation (startup, requests). */
  info(message: string, fields?: LogFields): void;
  /** Logs something unexpected that was handled. */
  warn(message: string, fields?: LogFields): void;
  /** Logs a failure. */
  error(message: string, fields?: LogFields): void;
  /** Whether an event at `level` would be written now (to skip building costly fields). */
  isEnabled(level: LogLevel): boolean;
}

const RANK: { [L in LogLevel]: number } = { debug: 10, info: 20, warn: 30, error: 40, silent: 99 };
const REDACTED = "[REDACTED]";
// Shorter values would mangle ordinary words in every line; such values are not real secrets.
const MIN_SECRET_LENGTH = 4;

interface State {
  level: LogLevel;
  logFile: string | null;
  fileFormat: "text" | "json";
  stderr: boolean;
  sink: ((line: string) => void) | null;
}

const state: State = { level: "info", logFile: null, fileFormat: "text", stderr: true, sink: null };
const loggers = new Map<string, Logger>();
const secrets = new Set<string>();
let secretsSorted: string[] = [];
const encoder = new TextEncoder();

/**
 * Parses a level name (case-insensitive; `warning` and `fatal`/`critical` are accepted aliases).
 *
 * @example
 * ```ts
 * parseLogLevel("WARNING"); // "warn"
 * ```
 */
export function parseLogLevel(text: string): LogLevel {
  const value = String(text).trim().toLowerCase();
  const alias: { [k: string]: LogLevel } = {
    warning: "warn",
    fatal: "error",
    critical: "error",
    off: "silent",
    none: "silent",
    trace: "debug",
  };
  const level = alias[value] ?? value;
  if (level in RANK) return level as LogLevel;
  throw new ValidationError(
    `unknown log level '${text}': use one of debug, info, warn, error, silent`,
    { param: "level" },
  );
}

/**
 * Configures every logger of the process: level, optional log file, stderr on/off.
 * Options not given fall back to their defaults, so `setupLogger("info")` also resets.
 *
 * @example
 * ```ts
 * setupLogger("debug", "/tmp/svc.log");
 * setupLogger({ level: "warn", logFile: null, fileFormat: "json" });
 * ```
 */
export function setupLogger(level: LogLevel | string, logFile?: string | null): Logger;
/** Options form of {@link setupLogger}. */
export function setupLogger(options: LoggerOptions): Logger;
export function setupLogger(
  levelOrOptions: LogLevel | string | LoggerOptions,
  logFile?: string | null,
): Logger {
  const options: LoggerOptions = typeof levelOrOptions === "object" && levelOrOptions !== null
    ? levelOrOptions
    : { level: levelOrOptions, logFile };
  const level = parseLogLevel(options.level ?? "info");
  const file = options.logFile ?? null;
  if (file !== null) prepareLogFile(file);
  state.level = level;
  state.logFile = file;
  state.fileFormat = options.fileFormat ?? "text";
  state.stderr = options.stderr ?? true;
  state.sink = options.sink ?? null;
  return getLogger("svc");
}

function prepareLogFile(file: string): void {
  try {
    const slash = file.lastIndexOf("/");
    if (slash > 0) Deno.mkdirSync(file.slice(0, slash), { recursive: true });
    // Appending nothing creates the file and proves we may write there, before any event.
    Deno.writeTextFileSync(file, "", { append: true });
  } catch (err) {
    throw new ConfigurationError(
      `cannot write log file '${file}': ${(err as Error).message}. ` +
        "Choose a writable path or run with --allow-write for its folder.",
      { cause: err, param: "logFile" },
    );
  }
}

/**
 * Returns the logger called `name` (the same object for the same name). Loggers follow the
 * settings of the latest {@link setupLogger} call, even when created before it.
 *
 * @example
 * ```ts
 * const log = getLogger("engine");
 * log.debug("loaded", { model: "demo", ms: 33 });
 * ```
 */
export function getLogger(name: string): Logger {
  let logger = loggers.get(name);
  if (logger === undefined) {
    const emit = (level: LogLevel) => (message: string, fields?: LogFields): void =>
      writeEvent(level, name, message, fields);
    logger = {
      name,
      debug: emit("debug"),
      info: emit("info"),
      warn: emit("warn"),
      error: emit("error"),
      isEnabled: (level: LogLevel): boolean =>
        state.level !== "silent" && RANK[level] >= RANK[state.level],
    };
    loggers.set(name, logger);
  }
  return logger;
}

/**
 * Registers a secret value (an API key, a token) so it is replaced by `[REDACTED]` wherever it
 * would appear in a log line. Values shorter than 4 characters are ignored.
 *
 * @example
 * ```ts
 * registerSecret("sk-local-0123456789");
 * ```
 */
export function registerSecret(value: string | null | undefined): void {
  if (typeof value !== "string" || value.length < MIN_SECRET_LENGTH) return;
  secrets.add(value);
  // Longest first, so a secret that contains another is replaced whole.
  secretsSorted = [...secrets].sort((a, b) => b.length - a.length);
}

/** Forgets every registered secret (for tests). */
export function clearSecrets(): void {
  secrets.clear();
  secretsSorted = [];
}

const SECRET_KEY =
  /(api[_-]?key|password|passwd|secret|credential|authorization|private[_-]?key|cookie|bearer)|(token|^auth)$/i;

/** Whether a field named `key` holds a secret by its name (`apiKey`, `hub_token`, `password`…). */
export function isSecretKey(key: string): boolean {
  // "promptTokens"/"max_tokens" are counts, not secrets: only a trailing singular "token" counts.
  return SECRET_KEY.test(key.replace(/[-_\s]/g, ""));
}

const TEXT_PATTERNS: [RegExp, string][] = [
  [/\b([Bb]earer)\s+[A-Za-z0-9._~+/=-]+/g, `$1 ${REDACTED}`],
  [/\b(Basic)\s+[A-Za-z0-9+/]{8,}={0,2}/g, `$1 ${REDACTED}`],
  [/\bsk-[A-Za-z0-9_-]{8,}/g, REDACTED],
  [/\bhf_[A-Za-z0-9]{8,}/g, REDACTED],
  [/\bgh[pousr]_[A-Za-z0-9]{16,}/g, REDACTED],
  [
    /((?:api[_-]?key|(?:access|refresh|auth|id)[_-]?token|password|passwd|secret)["']?\s*[=:]\s*["']?)[^\s"'&,;}]+/gi,
    `$1${REDACTED}`,
  ],
  // A bare "token" only in the `token=…` form (URL queries, key=value text): in prose, "token"
  // is an ordinary word here (token counts, token limits).
  [/(token=["']?)[^\s"'&,;}]+/gi, `$1${REDACTED}`],
  // Credentials inside URLs: https://user:password@host
  [/(\b[a-z][a-z0-9+.-]*:\/\/[^\s/:@]+:)[^\s/@]+@/gi, `$1${REDACTED}@`],
];

/**
 * Removes secrets from free text: registered secret values, `Bearer …` credentials, `sk-…`/`hf_…`
 * style keys, `api_key=…`-style pairs and passwords in URLs.
 *
 * @example
 * ```ts
 * redactSecrets("Authorization: Bearer abc.def"); // "Authorization: Bearer [REDACTED]"
 * ```
 */
export function redactSecrets(text: string): string {
  let out = text;
  for (const secret of secretsSorted) {
    if (out.includes(secret)) out = out.split(secret).join(REDACTED);
  }
  for (const [pattern, replacement] of TEXT_PATTERNS) out = out.replace(pattern, replacement);
  return out;
}

/**
 * Returns a copy of `value` fit for logging: fields with secret-looking names are replaced by
 * `[REDACTED]` at any depth, strings are passed through {@link redactSecrets}, errors become
 * `{name, message}`, cycles become `[Circular]`.
 *
 * @example
 * ```ts
 * redactFields({ user: "ann", token: "t-123456" }); // { user: "ann", token: "[REDACTED]" }
 * ```
 */
export function redactFields(value: unknown): unknown {
  return redactValue(value, new WeakSet());
}

function redactValue(value: unknown, seen: WeakSet<object>): unknown {
  if (typeof value === "string") return redactSecrets(value);
  if (typeof value === "bigint") return value.toString();
  if (typeof value !== "object" || value === null) {
    return typeof value === "function" || typeof value === "symbol" ? String(value) : value;
  }
  if (seen.has(value)) return "[Circular]";
  seen.add(value);
  if (value instanceof Error) {
    return { name: value.name, message: redactSecrets(value.message) };
  }
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? "Invalid Date" : value;
  if (Array.isArray(value)) return value.map((item) => redactValue(item, seen));
  if (value instanceof Map) return redactValue(Object.fromEntries(value), seen);
  if (value instanceof Set) return redactValue([...value], seen);
  if (ArrayBuffer.isView(value)) return `[${value.constructor.name} ${value.byteLength} bytes]`;
  const out: { [key: string]: unknown } = {};
  for (const [key, item] of Object.entries(value)) {
    out[key] = isSecretKey(key) && item !== null && item !== undefined && item !== ""
      ? REDACTED
      : redactValue(item, seen);
  }
  return out;
}

function formatValue(value: unknown): string {
  if (typeof value === "string") {
    return /^[^\s"=\\]+$/.test(value) ? value : JSON.stringify(value);
  }
  if (value === undefined) return "undefined";
  if (value instanceof Date) return value.toISOString();
  return JSON.stringify(value) ?? String(value);
}

function writeEvent(level: LogLevel, name: string, message: string, fields?: LogFields): void {
  if (state.level === "silent" || RANK[level] < RANK[state.level]) return;
  const timestamp = new Date().toISOString();
  const safeFields = fields === undefined ? {} : redactValue(fields, new WeakSet()) as LogFields;
  const text = redactSecrets(String(message));
  let line = `${timestamp} ${level.toUpperCase().padEnd(5)} [${name}] ${text}`;
  for (const [key, value] of Object.entries(safeFields)) line += ` ${key}=${formatValue(value)}`;
  // Registered secrets and token shapes are removed from the finished line, whatever put them
  // there; escaping newlines keeps the promise of one line per event.
  line = oneLine(redactSecrets(line));
  if (state.stderr) writeStderr(line + "\n");
  if (state.sink !== null) state.sink(line);
  if (state.logFile !== null) {
    const fileLine = state.fileFormat === "json"
      ? JSON.stringify({ time: timestamp, level, logger: name, message: text, ...safeFields })
      : line;
    try {
      Deno.writeTextFileSync(state.logFile, fileLine + "\n", { append: true });
    } catch (err) {
      writeStderr(`${timestamp} ERROR [logging] cannot append to ${state.logFile}: ${err}\n`);
    }
  }
}

function oneLine(text: string): string {
  return text.replace(/\r\n|\r|\n/g, "\\n");
}

function writeStderr(text: string): void {
  const bytes = encoder.encode(text);
  try {
    let written = 0;
    while (written < bytes.length) written += Deno.stderr.writeSync(bytes.subarray(written));
  } catch {
    // A closed stderr (broken pipe) must not crash the program that is logging.
  }
}

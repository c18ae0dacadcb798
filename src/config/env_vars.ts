/**
 * The table of Svc's environment variables: name, typed config field, kind, default and meaning,
 * plus the parser that turns a raw string into a validated value.
 *
 * @module
 */

import { ConfigurationError } from "../core/errors.ts";
import { SvcPorts } from "./ports.ts";

/** Devices the engine can run on (`auto` lets the engine choose). */
export type SvcDevice = "auto" | "webgpu" | "cpu" | "wasm";
/**
 * Log levels of SVC_LOG_LEVEL: the values of `LogLevel` in src/core/logging.ts. Aliases read as:
 * warning -> warn, critical/fatal -> error, off/none -> silent, trace -> debug.
 */
export type SvcLogLevel = "debug" | "info" | "warn" | "error" | "silent";

/** Every configuration value, typed, under its camelCase name. */
export interface SvcConfigValues {
  /** COMPAT_API_KEY: key for an OpenAI-compatible API. */
  compatApiKey?: string;
  /** COMPAT_BASE_URL: base URL of that API. */
  compatBaseUrl?: string;
  /** HUB_TOKEN: model-hub token. */
  hubToken?: string;
  /** HUB_ENDPOINT: model-hub endpoint (mirror). */
  hubEndpoint?: string;
  /** ENGINE_API_KEY: key a local inference engine requires. */
  engineApiKey?: string;
  /** SVC_CHAT_API_KEY: key for the gateway/engine or a remote fallback. */
  chatApiKey?: string;
  /** SVC_ADMIN_API_KEY: key of the gateway's management API and dashboard. */
  adminApiKey?: string;
  /** SVC_STATE_URL: the gateway's state store (sqlite:<path> or postgres://…). */
  stateUrl?: string;
  /** SVC_COORD_URL: what gateway replicas share (redis://…). */
  coordUrl?: string;
  /** SVC_BACKENDS: `svc llm gateway`'s backends, comma-separated base URLs. */
  backends?: string;
  /** SVC_MAX_STORED_RESPONSES: stored responses the gateway keeps per key (a whole number). */
  maxStoredResponses?: string;
  /** SVC_CHAT_MODEL: chat model name override. */
  chatModel?: string;
  /** SVC_CHAT_BASE_URL: chat endpoint override. */
  chatBaseUrl?: string;
  /** SVC_EMBEDDING_BASE_URL: embedding endpoint. */
  embeddingBaseUrl?: string;
  /** SVC_EMBEDDING_MODEL: embedding model name. */
  embeddingModel?: string;
  /** SVC_LLM_PORT: LLM port (default 8001). */
  llmPort: number;
  /** SVC_EMBEDDING_PORT: embedding port (default 8090). */
  embeddingPort: number;
  /** SVC_FORCE_CHINA_MIRROR: force the mainland-China hub mirror. */
  forceChinaMirror: boolean;
  /** SVC_HOME: base folder of Svc's output (logs, caches, models, engine state). */
  home?: string;
  /** SVC_LOG_LEVEL: log level (default info). */
  logLevel: SvcLogLevel;
  /** SVC_DEVICE: engine device (default auto). */
  device: SvcDevice;
  /** SVC_OFFLINE: never download from the hub. */
  offline: boolean;
}

/** Name of a field of {@link SvcConfigValues}. */
export type SvcConfigKey = keyof SvcConfigValues;

/** How a variable's raw text is checked and converted. */
export type EnvVarKind = "string" | "secret" | "url" | "port" | "boolean" | "logLevel" | "device";

/** One row of {@link ENV_VARIABLES}. */
export interface EnvVariable {
  /** Environment variable name, e.g. `SVC_LLM_PORT`. */
  readonly name: string;
  /** Field of the typed config, e.g. `llmPort`. */
  readonly field: SvcConfigKey;
  /** How the value is validated. Secrets are never printed. */
  readonly kind: EnvVarKind;
  /** Default value as it would be written in a `.env` file ("" when unset). */
  readonly defaultText: string;
  /** One-line meaning. */
  readonly description: string;
}

function row(
  name: string,
  field: SvcConfigKey,
  kind: EnvVarKind,
  defaultText: string,
  description: string,
): EnvVariable {
  return Object.freeze({ name, field, kind, defaultText, description });
}

/**
 * Every environment variable Svc reads, in the order of `.env.template`.
 *
 * @example
 * ```ts
 * import { ENV_VARIABLES } from "@svc/cli";
 * for (const v of ENV_VARIABLES) console.log(`${v.name} -> ${v.field}`);
 * ```
 */
export const ENV_VARIABLES: readonly EnvVariable[] = Object.freeze([
  row(
    "COMPAT_API_KEY",
    "compatApiKey",
    "secret",
    "",
    "Key for an OpenAI-compatible API (cloud or self-hosted)",
  ),
  row("COMPAT_BASE_URL", "compatBaseUrl", "url", "", "Base URL of that API (ends in /v1)"),
  row("HUB_TOKEN", "hubToken", "secret", "", "Model-hub token (needed to download private models)"),
  row(
    "HUB_ENDPOINT",
    "hubEndpoint",
    "url",
    "",
    "Model-hub endpoint (mirror); set automatically on mainland-China networks",
  ),
  row("ENGINE_API_KEY", "engineApiKey", "secret", "", "Key a local inference engine requires"),
  row(
    "SVC_CHAT_API_KEY",
    "chatApiKey",
    "secret",
    "",
    "Key for the gateway/engine, or for a remote fallback",
  ),
  row(
    "SVC_ADMIN_API_KEY",
    "adminApiKey",
    "secret",
    "",
    "Key of the gateway's management API and dashboard (also opens inference)",
  ),
  row(
    "SVC_STATE_URL",
    "stateUrl",
    "secret",
    "",
    "Gateway state: sqlite:<path> or postgres://user:pass@host/db (default <SVC_HOME>/state.db)",
  ),
  row(
    "SVC_COORD_URL",
    "coordUrl",
    "secret",
    "",
    "What gateway replicas share (rate limits, slots, circuits): redis://host:port; unset: one",
  ),
  row(
    "SVC_BACKENDS",
    "backends",
    "string",
    "",
    "svc llm gateway's backends: base URLs, comma-separated",
  ),
  row(
    "SVC_MAX_STORED_RESPONSES",
    "maxStoredResponses",
    "string",
    "",
    "Stored responses the gateway keeps per key, oldest evicted first (default 1000)",
  ),
  row("SVC_CHAT_MODEL", "chatModel", "string", "", "Overrides the auto-detected chat model"),
  row("SVC_CHAT_BASE_URL", "chatBaseUrl", "url", "", "Overrides the auto-detected chat endpoint"),
  row("SVC_EMBEDDING_BASE_URL", "embeddingBaseUrl", "url", "", "Embedding endpoint (ends in /v1)"),
  row("SVC_EMBEDDING_MODEL", "embeddingModel", "string", "", "Embedding model name"),
  row(
    "SVC_LLM_PORT",
    "llmPort",
    "port",
    String(SvcPorts.LLM_DEFAULT),
    "LLM port (8901 is the WSL2 fallback); updated by `svc llm serve`",
  ),
  row(
    "SVC_EMBEDDING_PORT",
    "embeddingPort",
    "port",
    String(SvcPorts.EMBEDDING_DEFAULT),
    "Embedding server port; updated by `svc llm serve`",
  ),
  row(
    "SVC_FORCE_CHINA_MIRROR",
    "forceChinaMirror",
    "boolean",
    "false",
    "true forces the mainland-China hub mirror",
  ),
  row("SVC_HOME", "home", "string", "", "Output base folder (default ./.svc or ~/.svc)"),
  row(
    "SVC_LOG_LEVEL",
    "logLevel",
    "logLevel",
    "info",
    "Log level: debug|info|warn|error|silent",
  ),
  row("SVC_DEVICE", "device", "device", "auto", "Engine device: auto|webgpu|cpu|wasm"),
  row("SVC_OFFLINE", "offline", "boolean", "false", "true: never download from the model hub"),
]);

const BY_NAME: ReadonlyMap<string, EnvVariable> = new Map(ENV_VARIABLES.map((v) => [v.name, v]));
const BY_FIELD: ReadonlyMap<SvcConfigKey, EnvVariable> = new Map(
  ENV_VARIABLES.map((v) => [v.field, v]),
);

/** The row of a variable name, or undefined for names Svc does not read. */
export function findEnvVariable(name: string): EnvVariable | undefined {
  return BY_NAME.get(name);
}

/** The row of a config field. */
export function envVariableOfField(field: SvcConfigKey): EnvVariable {
  const found = BY_FIELD.get(field);
  if (found === undefined) throw new ConfigurationError(`unknown configuration field ${field}`);
  return found;
}

const TRUE_WORDS = new Set(["true", "1", "yes", "on"]);
const FALSE_WORDS = new Set(["false", "0", "no", "off"]);
const DEVICES: readonly SvcDevice[] = ["auto", "webgpu", "cpu", "wasm"];
const LOG_LEVELS: readonly SvcLogLevel[] = ["debug", "info", "warn", "error", "silent"];
const LOG_LEVEL_ALIASES: Readonly<Record<string, SvcLogLevel>> = {
  warning: "warn",
  critical: "error",
  fatal: "error",
  off: "silent",
  none: "silent",
  trace: "debug",
};

/**
 * Parses a boolean word: true/false/1/0/yes/no/on/off, case-insensitive; undefined otherwise.
 *
 * @example
 * ```ts
 * import { parseBooleanWord } from "@svc/cli";
 * console.log(parseBooleanWord("Yes")); // true
 * ```
 */
export function parseBooleanWord(text: string): boolean | undefined {
  const word = text.trim().toLowerCase();
  if (TRUE_WORDS.has(word)) return true;
  if (FALSE_WORDS.has(word)) return false;
  return undefined;
}

/**
 * Validates and converts the raw text of a variable. `origin` says where the text came from, for
 * the error message (e.g. "environment variable", ".env file /x/.env"). Throws
 * `ConfigurationError` naming the variable, the value and what is expected (secrets accept any
 * text, so their values are never printed).
 *
 * @example
 * ```ts
 * import { ENV_VARIABLES, parseEnvValue } from "@svc/cli";
 * const port = ENV_VARIABLES.find((v) => v.name === "SVC_LLM_PORT")!;
 * console.log(parseEnvValue(port, "8002")); // 8002
 * ```
 */
export function parseEnvValue(
  variable: EnvVariable,
  raw: string,
  origin = "environment variable",
): string | number | boolean {
  const text = raw.trim();
  const fail = (expected: string): never => {
    // Secrets accept any text, so they never reach here and are never printed.
    throw new ConfigurationError(
      `${origin} ${variable.name} is ${JSON.stringify(raw)}: expected ${expected}; fix or unset it`,
      { param: variable.name, code: "invalid_config_value" },
    );
  };
  switch (variable.kind) {
    case "string":
    case "secret":
      return text;
    case "url": {
      let url: URL;
      try {
        url = new URL(text);
      } catch {
        return fail("an absolute http(s) URL such as http://127.0.0.1:8000/v1");
      }
      if (url.protocol !== "http:" && url.protocol !== "https:") {
        return fail("an http:// or https:// URL");
      }
      // Callers append paths; a trailing slash would double it.
      return text.replace(/\/+$/, "");
    }
    case "port": {
      const port = /^\d{1,5}$/.test(text) ? Number(text) : NaN;
      if (!(port >= 1 && port <= 65535)) return fail("a port number from 1 to 65535");
      return port;
    }
    case "boolean": {
      const value = parseBooleanWord(text);
      if (value === undefined) return fail("a boolean (true/false, 1/0, yes/no, on/off)");
      return value as boolean;
    }
    case "logLevel": {
      const level = LOG_LEVEL_ALIASES[text.toLowerCase()] ?? text.toLowerCase();
      if (!(LOG_LEVELS as readonly string[]).includes(level)) {
        return fail(`one of ${LOG_LEVELS.join(", ")}`);
      }
      return level;
    }
    case "device": {
      const device = text.toLowerCase();
      if (!(DEVICES as readonly string[]).includes(device)) {
        return fail(`one of ${DEVICES.join(", ")}`);
      }
      return device;
    }
  }
}

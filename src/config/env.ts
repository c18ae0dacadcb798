/**
 * The one place that reads Svc's environment variables into a typed, validated, frozen config.
 *
 * Precedence, highest first: explicit options > process environment > `.env` file > defaults.
 * An empty value counts as unset at every level.
 *
 * @module
 */

import { ConfigurationError } from "../core/errors.ts";
import { readEnvFileSync } from "./env_file.ts";
import {
  ENV_VARIABLES,
  parseEnvValue,
  type SvcConfigKey,
  type SvcConfigValues,
} from "./env_vars.ts";

/** Where a config value came from. */
export type ConfigSource = "option" | "env" | "file" | "default";

/** Explicit values (e.g. from CLI flags): typed values, or strings parsed like the env's. */
export type ConfigOverrides = {
  [K in SvcConfigKey]?: SvcConfigValues[K] | string;
};

/** A map standing in for the process environment (tests, embedding applications). */
export type EnvMap = Record<string, string | undefined>;

/** Options of {@link loadConfig}. */
export interface LoadConfigOptions {
  /** Explicit values; they win over everything else. */
  overrides?: ConfigOverrides;
  /** Use this map instead of the process environment (which is then not read at all). */
  env?: Readonly<EnvMap>;
  /** `.env` file to read: a path, `null` for none; default `.env` in the current folder. */
  envFile?: string | null;
}

/** The validated configuration; frozen. */
export interface SvcConfig extends Readonly<SvcConfigValues> {
  /** Where each field's value came from. */
  readonly sources: Readonly<Record<SvcConfigKey, ConfigSource>>;
  /** The `.env` file that was read, or null when none was. */
  readonly envFile: string | null;
}

/**
 * Reads one variable from `options.env` when given, else from the process environment. Without
 * env permission it throws `ConfigurationError` naming `--allow-env` (rather than prompting).
 *
 * @example
 * ```ts
 * import { readEnvVariable } from "@svc/cli";
 * console.log(readEnvVariable("HOME", { env: { HOME: "/home/me" } })); // "/home/me"
 * ```
 */
export function readEnvVariable(
  name: string,
  options: { env?: Readonly<EnvMap> } = {},
): string | undefined {
  if (options.env !== undefined) return options.env[name];
  const state = Deno.permissions.querySync({ name: "env", variable: name }).state;
  if (state !== "granted") {
    throw new ConfigurationError(
      `no permission to read environment variable ${name}: run with --allow-env ` +
        `(or --allow-env=${name})`,
      { param: name, code: "permission_denied" },
    );
  }
  return Deno.env.get(name);
}

/**
 * Sets one variable in `options.env` when given, else in the process environment (naming
 * `--allow-env` when that is not permitted).
 *
 * @example
 * ```ts
 * import { setEnvVariable } from "@svc/cli";
 * const env: Record<string, string | undefined> = {};
 * setEnvVariable("HUB_ENDPOINT", "https://hf-mirror.com", { env });
 * ```
 */
export function setEnvVariable(
  name: string,
  value: string,
  options: { env?: EnvMap } = {},
): void {
  if (options.env !== undefined) {
    options.env[name] = value;
    return;
  }
  try {
    Deno.env.set(name, value);
  } catch (err) {
    throw new ConfigurationError(
      `no permission to set environment variable ${name}: run with --allow-env`,
      { param: name, code: "permission_denied", cause: err },
    );
  }
}

function defaultEnvFile(): string | null {
  try {
    const path = `${Deno.cwd()}/.env`;
    // The default file is optional: without read permission we skip it instead of prompting.
    return Deno.permissions.querySync({ name: "read", path }).state === "granted" ? path : null;
  } catch {
    return null;
  }
}

/**
 * Loads the configuration. Precedence, highest first: `options.overrides` > the process
 * environment (or `options.env`) > the `.env` file > defaults; empty values count as unset.
 * Every value is validated: a bad one (port "abc" or 70000, boolean "maybe", a URL that does not
 * parse, an unknown device) raises `ConfigurationError` naming the variable, the value, where
 * it came from and what is expected.
 *
 * @example
 * ```ts
 * import { loadConfig } from "@svc/cli";
 * const config = loadConfig({ env: { SVC_LLM_PORT: "8901" }, envFile: null });
 * console.log(config.llmPort, config.sources.llmPort); // 8901 "env"
 * ```
 */
export function loadConfig(options: LoadConfigOptions = {}): SvcConfig {
  const filePath = options.envFile === undefined ? defaultEnvFile() : options.envFile;
  const fileValues = filePath === null ? null : readEnvFileSync(filePath);
  const values: Record<string, unknown> = {};
  const sources: Partial<Record<SvcConfigKey, ConfigSource>> = {};

  for (const variable of ENV_VARIABLES) {
    const override = options.overrides?.[variable.field];
    let raw: string | undefined;
    let source: ConfigSource = "default";
    let origin = "";
    if (override !== undefined && override !== "") {
      raw = String(override);
      source = "option";
      origin = `option ${variable.field} (${variable.name})`;
    } else {
      const fromEnv = readEnvVariable(variable.name, { env: options.env });
      const fromFile = fileValues?.[variable.name];
      if (fromEnv !== undefined && fromEnv !== "") {
        raw = fromEnv;
        source = "env";
        origin = "environment variable";
      } else if (fromFile !== undefined && fromFile !== "") {
        raw = fromFile;
        source = "file";
        origin = `${filePath} entry`;
      }
    }
    if (raw === undefined) {
      raw = variable.defaultText === "" ? undefined : variable.defaultText;
      origin = "default of";
    }
    if (raw !== undefined) {
      values[variable.field] = parseEnvValue(variable, raw, origin);
    }
    sources[variable.field] = source;
  }

  return Object.freeze({
    ...(values as unknown as SvcConfigValues),
    sources: Object.freeze(sources as Record<SvcConfigKey, ConfigSource>),
    envFile: fileValues === null ? null : filePath,
  });
}

/**
 * A copy of the config that is safe to print: secrets (API keys, tokens) become "***".
 *
 * @example
 * ```ts
 * import { loadConfig, redactConfig } from "@svc/cli";
 * console.log(redactConfig(loadConfig({ env: { HUB_TOKEN: "hf_x" }, envFile: null })).hubToken);
 * ```
 */
export function redactConfig(config: SvcConfig): Record<string, unknown> {
  const copy: Record<string, unknown> = {};
  for (const variable of ENV_VARIABLES) {
    const value = config[variable.field];
    if (value === undefined) continue;
    copy[variable.field] = variable.kind === "secret" ? "***" : value;
  }
  return copy;
}

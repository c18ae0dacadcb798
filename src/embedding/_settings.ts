/**
 * Reads provider keys and URLs: an explicit option wins, else the environment variable, read
 * through `readEnvVariable` of src/config (the one place that touches `Deno.env`).
 *
 * @module
 */

import { type EnvMap, readEnvVariable } from "../config/env.ts";
import { ConfigurationError } from "../core/errors.ts";
import { registerSecret } from "../core/logging.ts";

/** The explicit value when given (non-empty), else the variable's value, else undefined. */
export function resolveSetting(
  explicit: string | undefined,
  variable: string,
  env?: EnvMap,
): string | undefined {
  if (explicit !== undefined && explicit !== "") return explicit;
  const value = readEnvVariable(variable, { env });
  return value === undefined || value.trim() === "" ? undefined : value.trim();
}

/**
 * Like {@link resolveSetting} for a secret that must be there: throws a `ConfigurationError`
 * naming the variable to set. The key is registered with the logger so it is never printed.
 */
export function requireKey(
  explicit: string | undefined,
  variable: string,
  options: { provider: string; env?: EnvMap; option?: string },
): string {
  const key = resolveSetting(explicit, variable, options.env);
  if (key === undefined) {
    throw new ConfigurationError(
      `${options.provider} needs an API key: set ${variable} or pass the ` +
        `${options.option ?? "apiKey"} option`,
      { param: variable, code: "missing_api_key" },
    );
  }
  registerSecret(key);
  return key;
}

/**
 * Which state store a command uses (`--state <url>`, else SVC_STATE_URL, else the SQLite file
 * `<SVC_HOME>/state.db`) and which coordinator (`--coord <url>`, else SVC_COORD_URL, else this
 * process alone).
 *
 * @module
 */
import { readEnvVariable } from "../config/env.ts";
import { ConfigurationError } from "../core/errors.ts";
import { intOption, type ParsedArgs } from "./args.ts";
import type { OutputPaths } from "../config/output_paths.ts";
import { defaultStateUrl, openStateStore } from "../state/open_state_store.ts";
import type { StateStore } from "../state/state_store.ts";
import type { Coordinator } from "../coord/coordinator.ts";
import { openCoordinator } from "../coord/open_coordinator.ts";

/** The state store URL of `--state`, SVC_STATE_URL or the default under `paths`. */
export function stateUrlOf(flag: string | undefined, paths: OutputPaths): string {
  return flag ?? (readEnvVariable("SVC_STATE_URL") || undefined) ?? defaultStateUrl(paths.base);
}

/** Opens the state store the command line names (see {@link stateUrlOf}). */
export function openCliStateStore(
  flag: string | undefined,
  paths: OutputPaths,
): Promise<StateStore> {
  return openStateStore(stateUrlOf(flag, paths));
}

/** Opens the coordinator of `--coord`, else SVC_COORD_URL, else an in-process one. */
export function openCliCoordinator(flag: string | undefined): Promise<Coordinator> {
  return openCoordinator(flag ?? (readEnvVariable("SVC_COORD_URL") || undefined));
}

/** The help line of `--max-stored-responses` (serve and gateway). */
export const MAX_STORED_RESPONSES_HELP = `  --max-stored-responses <n>
                           stored responses (for previous_response_id) kept per key, the oldest
                           evicted first; the static keys and callers without a key count as
                           one key (default 1000) [env: SVC_MAX_STORED_RESPONSES]`;

const MAX_STORED = 10_000_000;

/**
 * `--max-stored-responses`, else SVC_MAX_STORED_RESPONSES (`fromEnv`: the environment or .env),
 * else undefined (the store's default). A value that is not a whole number in range is an error
 * naming where it came from.
 */
export function maxStoredResponsesOf(
  values: ParsedArgs["values"],
  fromEnv: string | undefined,
): number | undefined {
  const flag = intOption(values, "max-stored-responses", { min: 1, max: MAX_STORED });
  if (flag !== undefined || fromEnv === undefined || fromEnv.trim() === "") return flag;
  const n = Number(fromEnv.trim());
  if (!Number.isInteger(n) || n < 1 || n > MAX_STORED) {
    throw new ConfigurationError(
      `SVC_MAX_STORED_RESPONSES is ${JSON.stringify(fromEnv)}: expected a whole number from 1 to ` +
        `${MAX_STORED}; fix or unset it`,
      { param: "SVC_MAX_STORED_RESPONSES", code: "invalid_config_value" },
    );
  }
  return n;
}

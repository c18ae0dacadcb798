/**
 * Which state store a command uses (`--state <url>`, else SVC_STATE_URL, else the SQLite file
 * `<SVC_HOME>/state.db`) and which coordinator (`--coord <url>`, else SVC_COORD_URL, else this
 * process alone).
 *
 * @module
 */
import { readEnvVariable } from "../config/env.ts";
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

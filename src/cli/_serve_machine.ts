/**
 * What `svc llm serve` checks on this machine before it starts: no other serve of its state file,
 * and each port named on the command line free.
 *
 * @module
 */
import { ConfigurationError, ConflictError } from "../core/errors.ts";
import { SvcPorts } from "../config/ports.ts";
import {
  alreadyRunning,
  checkRecordedPid,
  isServeLockHeld,
  readServeState,
  type ServeState,
} from "./serve_state.ts";
import type { ServeSettings } from "./_serve_settings.ts";

/**
 * The flags agree; now what runs on this machine: no other serve of this state file (its record
 * unreadable is no obstacle when no serve holds the lock), and each port named is free.
 */
export async function checkMachine(s: ServeSettings): Promise<void> {
  if (await isServeLockHeld(s.statePath)) throw await alreadyRunning(s.statePath);
  refuseRecordedServe(await readServeState(s.statePath).catch(() => null));
  await checkPorts(s);
}

/** A serve the record names that still runs (one of an older version, which took no lock). */
export function refuseRecordedServe(previous: ServeState | null): void {
  if (
    previous?.pid !== undefined && previous.pid !== Deno.pid &&
    checkRecordedPid(previous.pid, previous.pidStart).status === "ours"
  ) {
    throw new ConflictError(
      `svc llm serve is already running (pid ${previous.pid}, gateway ${
        previous.gatewayUrl ?? "?"
      }); stop it with 'svc llm stop' first`,
    );
  }
}

// Each port named on the command line is checked here, the error naming its own flag.
export async function checkPorts(s: ServeSettings): Promise<void> {
  for (
    const [flag, value] of [["port", s.port], ["llm-port", s.llmPort], [
      "embedding-port",
      s.embeddingPort,
    ]] as const
  ) {
    if (value !== undefined && value !== 0 && !(await SvcPorts.isAvailable(value, s.host))) {
      throw new ConfigurationError(
        `port ${value} on ${s.host} is already in use; stop what runs there or pass ` +
          `--${flag} <other>`,
        { code: "port_in_use", param: flag },
      );
    }
  }
}

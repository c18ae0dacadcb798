/**
 * The configuration file of `svc llm serve` (`<SVC_HOME>/engines/serve.env`, `.env` format): the
 * ports, models, URLs and pids of the running gateway and its engines, read by `svc llm status`
 * and `svc llm stop`. `SVC_LLM_PORT` / `SVC_EMBEDDING_PORT` there are the ports actually used.
 *
 * @module
 */
import process from "node:process";
import { dirname, join } from "node:path";
import { readEnvFile, updateEnvFile } from "../config/env_file.ts";
import { ConfigurationError, ConflictError } from "../core/errors.ts";
import { OutputPaths } from "../config/output_paths.ts";

/** What the file holds. */
export interface ServeState {
  /** Pid of the `svc llm serve` process (absent once it has stopped). */
  pid?: number;
  host?: string;
  gatewayPort?: number;
  /** `http://host:port/v1` of the gateway. */
  gatewayUrl?: string;
  llmPort?: number;
  embeddingPort?: number;
  chatModel?: string;
  embeddingModel?: string;
  /** `http://host:port/v1` of the embedding engine. */
  embeddingUrl?: string;
  llmPid?: number;
  embeddingPid?: number;
  /** Start times of the processes of `pid`, `llmPid`, `embeddingPid` (see {@link processStartTime}). */
  pidStart?: string;
  llmPidStart?: string;
  embeddingPidStart?: string;
  logFile?: string;
  startedAt?: string;
}

const KEYS: Record<keyof ServeState, string> = {
  pid: "SVC_SERVE_PID",
  host: "SVC_SERVE_HOST",
  gatewayPort: "SVC_GATEWAY_PORT",
  gatewayUrl: "SVC_CHAT_BASE_URL",
  llmPort: "SVC_LLM_PORT",
  embeddingPort: "SVC_EMBEDDING_PORT",
  chatModel: "SVC_CHAT_MODEL",
  embeddingModel: "SVC_EMBEDDING_MODEL",
  embeddingUrl: "SVC_EMBEDDING_BASE_URL",
  llmPid: "SVC_LLM_PID",
  embeddingPid: "SVC_EMBEDDING_PID",
  pidStart: "SVC_SERVE_PID_START",
  llmPidStart: "SVC_LLM_PID_START",
  embeddingPidStart: "SVC_EMBEDDING_PID_START",
  logFile: "SVC_SERVE_LOG_FILE",
  startedAt: "SVC_SERVE_STARTED_AT",
};
const NUMERIC = new Set<keyof ServeState>([
  "pid",
  "gatewayPort",
  "llmPort",
  "embeddingPort",
  "llmPid",
  "embeddingPid",
]);

/**
 * Default path of the file: `serve.env` in the `engines` output folder.
 *
 * @example
 * ```ts
 * import { defaultServeStatePath } from "./serve_state.ts";
 * console.log(defaultServeStatePath()); // e.g. /home/me/project/.svc/engines/serve.env
 * ```
 */
export function defaultServeStatePath(): string {
  return join(OutputPaths.resolve().engines, "serve.env");
}

/**
 * Reads the file; null when it does not exist. A file that is not a `.env` file, or holds a pid
 * or port that is not a number, is a ConfigurationError naming it and saying to remove it.
 *
 * @example
 * ```ts
 * import { readServeState } from "./serve_state.ts";
 * const state = await readServeState("/tmp/none.env"); // null
 * ```
 */
export async function readServeState(path: string): Promise<ServeState | null> {
  let raw: Record<string, string> | null;
  try {
    raw = await readEnvFile(path);
  } catch (err) {
    if (!(err instanceof ConfigurationError)) throw err;
    const why = err.message.replace(/^.*?:(\d+): /, "line $1: ").replace(
      /; expected KEY=VALUE$/,
      "",
    );
    throw unreadableState(path, why);
  }
  if (raw === null) return null;
  const out: Record<string, unknown> = {};
  for (const [field, key] of Object.entries(KEYS) as [keyof ServeState, string][]) {
    const value = raw[key];
    if (value === undefined || value === "") continue;
    if (NUMERIC.has(field) && !/^[0-9]{1,15}$/.test(value)) {
      throw unreadableState(path, `${key} is '${value}', not a number`);
    }
    out[field] = NUMERIC.has(field) ? Number(value) : value;
  }
  return out as ServeState;
}

function unreadableState(path: string, why: string): ConfigurationError {
  return new ConfigurationError(
    `the state file ${path} is unreadable (${why}); remove it if no 'svc llm serve' is running`,
    { code: "invalid_state_file" },
  );
}

/**
 * Takes the lock every `svc llm serve` holds on `<state file>.lock` for its whole life, from
 * before it starts anything: a second serve with the same state file is refused (ConflictError)
 * even while the first still loads its models. The OS drops the lock when its holder exits or
 * dies, so a crashed serve never blocks the next one. Close the returned file to release it.
 *
 * @example
 * ```ts
 * import { claimServeLock } from "./serve_state.ts";
 * const lock = await claimServeLock("/tmp/serve.env");
 * lock.close();
 * ```
 */
export async function claimServeLock(statePath: string): Promise<Deno.FsFile> {
  await Deno.mkdir(dirname(statePath), { recursive: true });
  const file = await Deno.open(`${statePath}.lock`, { read: true, write: true, create: true });
  let locked = false;
  try {
    locked = await file.tryLock(true);
  } finally {
    if (!locked) file.close();
  }
  if (!locked) throw await alreadyRunning(statePath);
  return file;
}

/**
 * The error that refuses a second `svc llm serve` of this state file: what the record says of
 * the running one (its pid, its gateway or that it is still starting) and to stop it first.
 *
 * @example
 * ```ts
 * import { alreadyRunning } from "./serve_state.ts";
 * console.log((await alreadyRunning("/tmp/serve.env")).message);
 * ```
 */
export async function alreadyRunning(statePath: string): Promise<ConflictError> {
  const state = await readServeState(statePath).catch(() => null);
  return new ConflictError(
    `svc llm serve is already running (${state?.pid !== undefined ? `pid ${state.pid}, ` : ""}${
      state?.gatewayUrl ? `gateway ${state.gatewayUrl}` : "still starting"
    }; state file ${statePath}); stop it with 'svc llm stop' first`,
  );
}

/**
 * True when a `svc llm serve` holds the lock of this state file (see {@link claimServeLock}).
 *
 * @example
 * ```ts
 * import { isServeLockHeld } from "./serve_state.ts";
 * await isServeLockHeld("/tmp/none.env"); // false
 * ```
 */
export async function isServeLockHeld(statePath: string): Promise<boolean> {
  let file: Deno.FsFile;
  try {
    file = await Deno.open(`${statePath}.lock`, { read: true });
  } catch {
    return false;
  }
  try {
    const free = await file.tryLock(true);
    if (free) await file.unlock();
    return !free;
  } catch {
    return false;
  } finally {
    file.close();
  }
}

/**
 * Sets fields of the file (`null` removes one), keeping every other line.
 *
 * @example
 * ```ts
 * import { updateServeState } from "./serve_state.ts";
 * await updateServeState("/tmp/serve.env", { llmPort: 8001, pid: null });
 * ```
 */
export async function updateServeState(
  path: string,
  values: { [K in keyof ServeState]?: ServeState[K] | null },
): Promise<void> {
  const out: Record<string, string | number | null> = {};
  for (const [field, value] of Object.entries(values)) {
    if (value !== undefined) out[KEYS[field as keyof ServeState]] = value;
  }
  await updateEnvFile(path, out);
}

/**
 * True when a process with this pid exists. Needs --allow-run: without it this throws
 * Deno.errors.NotCapable (naming the flag) rather than answer "gone" for a process that may run.
 *
 * @example
 * ```ts
 * import { isProcessAlive } from "./serve_state.ts";
 * isProcessAlive(Deno.pid); // true
 * ```
 */
export function isProcessAlive(pid: number | undefined): boolean {
  if (pid === undefined || !Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    if (err instanceof Deno.errors.NotCapable) throw err;
    // EPERM: it exists but belongs to someone else.
    return (err as { code?: string }).code === "EPERM";
  }
}

/**
 * When the process started, as `/proc/<pid>/stat` gives it (clock ticks since boot): with the pid
 * it names one process, even after the pid is reused. Undefined where there is no `/proc`, no
 * such process, or no `--allow-run` (Deno lets only `--allow-all` read `/proc/<pid>`, so `cat`
 * reads it).
 *
 * @example
 * ```ts
 * import { processStartTime } from "./serve_state.ts";
 * processStartTime(Deno.pid); // e.g. "8311620" on Linux
 * ```
 */
export function processStartTime(pid: number | null | undefined): string | undefined {
  if (pid === null || pid === undefined || !Number.isInteger(pid) || pid <= 0) return undefined;
  try {
    const out = new Deno.Command("cat", { args: [`/proc/${pid}/stat`], stderr: "null" })
      .outputSync();
    if (!out.success) return undefined;
    const stat = new TextDecoder().decode(out.stdout);
    // Field 22; field 2 (the command name, in parentheses) may itself hold spaces.
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
  } catch {
    return undefined;
  }
}

/** What {@link checkRecordedPid} found. */
export type RecordedPid =
  | { status: "ours" | "gone" }
  | { status: "foreign"; why: string };

/**
 * Whether a pid from the state file still is the process that was recorded: `gone` when no such
 * process runs, `foreign` when one runs but is not provably ours (its start time differs from the
 * recorded one, or there is none to compare), `ours` otherwise. Without `/proc` (not Linux) a
 * living pid counts as ours: there is nothing to compare.
 *
 * @example
 * ```ts
 * import { checkRecordedPid, processStartTime } from "./serve_state.ts";
 * checkRecordedPid(Deno.pid, processStartTime(Deno.pid)); // { status: "ours" }
 * ```
 */
export function checkRecordedPid(
  pid: number | undefined,
  recordedStart: string | undefined,
): RecordedPid {
  if (!isProcessAlive(pid)) return { status: "gone" };
  if (Deno.build.os !== "linux") return { status: "ours" };
  const start = processStartTime(pid);
  if (start === undefined) {
    return { status: "foreign", why: "its start time is unreadable (needs --allow-run)" };
  }
  if (recordedStart === undefined) {
    return { status: "foreign", why: "no start time was recorded with it" };
  }
  if (start !== recordedStart) {
    return {
      status: "foreign",
      why: "its start time differs from the recorded one (the pid was reused)",
    };
  }
  return { status: "ours" };
}

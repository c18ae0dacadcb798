/**
 * `svc llm stop`: sends SIGTERM to the `svc llm serve` process recorded in its configuration file
 * (it drains requests and stops its engines), waits for it to exit, and kills what is left after
 * the timeout (the serve process and any engine pid still alive).
 *
 * @module
 */
import { intOption, parseCommandArgs } from "./args.ts";
import {
  checkRecordedPid,
  defaultServeStatePath,
  readServeState,
  type ServeState,
  updateServeState,
} from "./serve_state.ts";
import { sleep } from "../core/sleep.ts";

/** Help text of `svc llm stop`. */
export const LLM_STOP_HELP = `svc llm stop — stop what 'svc llm serve' started

Usage: svc llm stop [--timeout <seconds>] [--state-file <path>]

Sends SIGTERM (requests drain, engines stop), waits up to --timeout seconds (default 30), then
kills what is left. Only processes that are provably the recorded ones (same pid and start time)
are signalled. Exit code 0 also when nothing was running.
Permissions: --allow-read=<SVC_HOME> --allow-write=<SVC_HOME> (the state file) --allow-env
--allow-run (signals the processes, reads their start times with 'cat').`;

/** Runs `svc llm stop`; resolves with the exit code. */
export async function llmStop(args: string[]): Promise<number> {
  const { values } = parseCommandArgs(args, "svc llm stop", {
    timeout: { type: "string" },
    "state-file": { type: "string" },
  });
  if (values.help) {
    console.log(LLM_STOP_HELP);
    return 0;
  }
  const timeoutMs = (intOption(values, "timeout", { min: 0, max: 3600 }) ?? 30) * 1000;
  const path = (values["state-file"] as string | undefined) ?? defaultServeStatePath();
  const state = await readServeState(path);
  const serve = ours(state, "pid", "pidStart", "the svc llm serve process", path);
  const engines = [
    ours(state, "llmPid", "llmPidStart", "the chat engine", path),
    ours(state, "embeddingPid", "embeddingPidStart", "the embedding engine", path),
  ].filter((p): p is Recorded => p !== undefined);
  if (serve === undefined) {
    // A serve process that died without cleaning up may have left its engines behind.
    for (const p of engines) kill(p.pid, "SIGTERM");
    if (state !== null) {
      await updateServeState(path, { pid: null, llmPid: null, embeddingPid: null });
    }
    console.log(
      engines.length > 0
        ? `svc: the server had exited; stopped ${engines.length} engine process(es) it left`
        : "svc: not running; nothing to stop",
    );
    return 0;
  }
  // A serve still loading its engines stops them too.
  kill(serve.pid, "SIGTERM");
  const deadline = Date.now() + timeoutMs;
  while (serve.alive() && Date.now() < deadline) {
    await sleep(100);
  }
  let forced = false;
  for (const p of [serve, ...engines]) {
    if (p.alive()) {
      kill(p.pid, "SIGKILL");
      forced = true;
    }
  }
  if (forced) await updateServeState(path, { pid: null, llmPid: null, embeddingPid: null });
  console.log(
    forced
      ? `svc: stopped (pid ${serve.pid}), killed after ${timeoutMs / 1000} s without exiting`
      : `svc: stopped (pid ${serve.pid}); requests were drained`,
  );
  return 0;
}

interface Recorded {
  pid: number;
  /** Still running and still the recorded process. */
  alive(): boolean;
}

// The recorded pid when it is still the process that was recorded; a pid that now belongs to
// another process is reported and left alone.
function ours(
  state: ServeState | null,
  pidKey: "pid" | "llmPid" | "embeddingPid",
  startKey: "pidStart" | "llmPidStart" | "embeddingPidStart",
  what: string,
  path: string,
): Recorded | undefined {
  const pid = state?.[pidKey];
  const start = state?.[startKey];
  const found = checkRecordedPid(pid, start);
  if (found.status === "foreign") {
    console.log(`svc: pid ${pid} in ${path} is not ${what} any more (${found.why}); not signalled`);
  }
  if (found.status !== "ours") return undefined;
  return { pid: pid!, alive: () => checkRecordedPid(pid, start).status === "ours" };
}

function kill(pid: number, signal: Deno.Signal): void {
  try {
    Deno.kill(pid, signal);
  } catch {
    // Already gone.
  }
}

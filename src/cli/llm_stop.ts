/**
 * `svc llm stop`: sends SIGTERM to the `svc llm serve` process recorded in its configuration file
 * (it drains requests and stops its engines), waits for it to exit, and kills what is left after
 * the timeout (the serve process and any engine pid still alive).
 *
 * @module
 */
import { intOption, parseCommandArgs } from "./args.ts";
import {
  defaultServeStatePath,
  isProcessAlive,
  readServeState,
  updateServeState,
} from "./serve_state.ts";

/** Help text of `svc llm stop`. */
export const LLM_STOP_HELP = `svc llm stop — stop what 'svc llm serve' started

Usage: svc llm stop [--timeout <seconds>] [--state-file <path>]

Sends SIGTERM (requests drain, engines stop), waits up to --timeout seconds (default 30), then
kills what is left. Exit code 0 also when nothing was running.`;

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
  const engines = [state?.llmPid, state?.embeddingPid].filter(isProcessAlive) as number[];
  if (state?.pid === undefined || !isProcessAlive(state.pid)) {
    // A serve process that died without cleaning up may have left its engines behind.
    for (const pid of engines) kill(pid, "SIGTERM");
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
  kill(state.pid, "SIGTERM");
  const deadline = Date.now() + timeoutMs;
  while (isProcessAlive(state.pid) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
  }
  let forced = false;
  for (const pid of [state.pid, ...engines]) {
    if (isProcessAlive(pid)) {
      kill(pid, "SIGKILL");
      forced = true;
    }
  }
  if (forced) await updateServeState(path, { pid: null, llmPid: null, embeddingPid: null });
  console.log(
    forced
      ? `svc: stopped (pid ${state.pid}), killed after ${timeoutMs / 1000} s without exiting`
      : `svc: stopped (pid ${state.pid}); requests were drained`,
  );
  return 0;
}

function kill(pid: number, signal: Deno.Signal): void {
  try {
    Deno.kill(pid, signal);
  } catch {
    // Already gone.
  }
}

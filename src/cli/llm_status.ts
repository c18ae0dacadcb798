/**
 * `svc llm status`: reads the configuration file of `svc llm serve`, checks that its process is
 * alive, and asks the gateway's management API for the engines' live state.
 *
 * @module
 */
import { loadConfig } from "../config/env.ts";
import { formatTable } from "./_format.ts";
import { parseCommandArgs } from "./args.ts";
import { checkRecordedPid, defaultServeStatePath, readServeState } from "./serve_state.ts";

/** Help text of `svc llm status`. */
export const LLM_STATUS_HELP = `svc llm status — is 'svc llm serve' running, and what does it serve

Usage: svc llm status [--json] [--state-file <path>]

Exit code 0 when it runs (or is still starting), 3 when it does not. Asks the gateway's management API with
SVC_ADMIN_API_KEY, else SVC_CHAT_API_KEY.
Permissions: --allow-read=<SVC_HOME> --allow-env --allow-net=127.0.0.1 (the gateway)
--allow-run (reads the recorded process's start time with 'cat').`;

/** Exit code when nothing runs (as `systemctl status` uses). */
export const NOT_RUNNING_EXIT_CODE = 3;

/** Runs `svc llm status`; resolves with the exit code. */
export async function llmStatus(args: string[]): Promise<number> {
  const { values } = parseCommandArgs(args, "svc llm status", {
    json: { type: "boolean" },
    "state-file": { type: "string" },
  });
  if (values.help) {
    console.log(LLM_STATUS_HELP);
    return 0;
  }
  const path = (values["state-file"] as string | undefined) ?? defaultServeStatePath();
  const state = await readServeState(path);
  const found = checkRecordedPid(state?.pid, state?.pidStart);
  const running = found.status === "ours";
  // Recorded at start-up; the gateway's address once the engines are ready.
  const starting = running && !state?.gatewayUrl;
  let engines: Record<string, unknown>[] = [];
  let cluster: Record<string, unknown> | null = null;
  if (running && state?.gatewayUrl) {
    // The management API takes the admin key; a gateway without one, the chat key (loopback).
    const config = loadConfig();
    const key = config.adminApiKey ?? config.chatApiKey;
    const headers: Record<string, string> = key ? { authorization: `Bearer ${key}` } : {};
    const base = state.gatewayUrl;
    const [list, status] = await Promise.all([
      getJson(`${base}/management/engines`, headers),
      getJson(`${base}/management/status`, headers),
    ]);
    engines = (list?.data as Record<string, unknown>[] | undefined) ?? [];
    cluster = status;
  }
  if (values.json) {
    console.log(
      JSON.stringify({ running, starting, stateFile: path, state, cluster, engines }, null, 2),
    );
    return running ? 0 : NOT_RUNNING_EXIT_CODE;
  }
  if (!running) {
    console.log(
      state?.pid === undefined
        ? `svc: not running (no running server recorded in ${path})`
        : found.status === "foreign"
        ? `svc: not running (pid ${state.pid} recorded in ${path} is not the svc llm serve ` +
          `process any more: ${found.why})`
        : `svc: not running (the process ${state.pid} recorded in ${path} has exited)`,
    );
    return NOT_RUNNING_EXIT_CODE;
  }
  if (starting) {
    console.log(`svc: starting (pid ${state!.pid}) — the engines are loading`);
    console.log(`  state file: ${path}`);
    return 0;
  }
  const ready = cluster === null ? "not answering" : cluster.ready ? "ready" : "not ready";
  console.log(`svc: running (pid ${state!.pid}) — gateway ${state!.gatewayUrl} (${ready})`);
  // A deleted engine stays in the management list for a while (state stopped); it is not served.
  const live = engines.filter((e) => e.state !== "stopped");
  if (live.length > 0) {
    const rows = live.map((e) => [
      String(e.id),
      String(e.kind),
      (e.models as string[] | undefined)?.join(", ") || String(e.model ?? "-"),
      // One in the gateway's process has no address of its own.
      e.placement === "gateway" ? "(in the gateway)" : String(e.base_url),
      String(e.state),
      String(e.pid ?? "-"),
      [e.random_weights ? "RANDOM weights (demo model)" : "", e.message ?? ""]
        .filter((note) => note !== "").join("; "),
    ]);
    const table = formatTable(["ENGINE", "KIND", "MODELS", "URL", "STATE", "PID", "NOTE"], rows);
    console.log(table.split("\n").map((line) => `  ${line}`).join("\n"));
  }
  console.log(`  state file: ${path}`);
  return 0;
}

async function getJson(
  url: string,
  headers: Record<string, string>,
): Promise<Record<string, unknown> | null> {
  try {
    const res = await fetch(url, { headers, signal: AbortSignal.timeout(3000) });
    if (!res.ok) {
      await res.body?.cancel();
      return null;
    }
    return await res.json();
  } catch {
    return null;
  }
}

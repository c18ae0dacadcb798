/**
 * `svc llm serve --background`: starts serve again without the flag, detached, waits until it is
 * ready, prints its endpoints from its log and returns; its failure is the log's last line.
 *
 * @module
 */
import { join } from "node:path";
import { existsSync } from "node:fs";
import { ServiceError } from "../core/errors.ts";
import { localPath, runnableModule } from "../core/module_location.ts";
import { OutputPaths } from "../config/output_paths.ts";
import { sleep } from "../core/sleep.ts";
import type { ParsedArgs } from "./args.ts";
import { checkMachine } from "./_serve_machine.ts";
import type { ServeOutput } from "./_serve_output.ts";
import { READY_TIMEOUT_MS, serveSettings } from "./_serve_settings.ts";
import { readServeState } from "./serve_state.ts";

/**
 * Runs serve in the background; resolves with 0 once it is ready. `self` is how to run serve
 * again (default: the main module + `llm serve`).
 */
export async function serveInBackground(
  args: string[],
  values: ParsedArgs["values"],
  self: string[] | undefined,
  out: ServeOutput,
): Promise<number> {
  const s = serveSettings(values);
  await checkMachine(s);
  const logFile = join(await OutputPaths.resolve().ensure("logs"), "serve.log");
  await Deno.writeTextFile(logFile, "");
  const command = self ?? [runnableModule(Deno.mainModule), "llm", "serve"];
  const config = localPath(new URL("../../deno.json", import.meta.url));
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--no-prompt",
      ...(config !== undefined && existsSync(config) ? ["--config", config] : []),
      "--allow-read",
      "--allow-write",
      "--allow-env",
      "--allow-ffi",
      "--allow-sys",
      "--allow-run",
      "--allow-net",
      ...command,
      ...args.filter((a) => a !== "--background"),
      "--detached-child",
      "--log-file",
      logFile,
    ],
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  child.unref();
  let exited: Deno.CommandStatus | null = null;
  child.status.then((status) => (exited = status));
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    const state = await readServeState(s.statePath).catch(() => null);
    // The child prints the endpoints (random weights and all) to the log last: show those lines.
    const log = (await Deno.readTextFile(logFile).catch(() => "")).split("\n");
    if (state?.pid === child.pid && log.some((l) => l.startsWith("svc: state "))) {
      out.say(`svc: running in the background (pid ${child.pid}); logs: ${logFile}`);
      for (const line of log.filter((l) => /^svc: (gateway|chat|embedding|browser) |!!!/.test(l))) {
        out.say(line);
      }
      out.say(`svc: stop it with 'svc llm stop'`);
      return 0;
    }
    if (exited !== null) {
      const why = await lastErrorLine(logFile);
      throw new ServiceError(why ?? `the background server exited (code ${exited!.code})`);
    }
    await sleep(100);
  }
  try {
    Deno.kill(child.pid, "SIGTERM");
  } catch { /* gone */ }
  throw new ServiceError(`the background server was not ready in time; see ${logFile}`);
}

async function lastErrorLine(logFile: string): Promise<string | undefined> {
  const text = await Deno.readTextFile(logFile).catch(() => "");
  const line = text.split("\n").filter((l) => l.startsWith("svc: ")).at(-1);
  return line?.slice("svc: ".length);
}

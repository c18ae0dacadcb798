/**
 * The `svc` command line: `svc llm run | serve | stop | status | chat | model …`, `svc ports`.
 *
 * @module
 */

import { SvcException } from "./src/core/errors.ts";
import { setupLogger } from "./src/core/logging.ts";
import { llmRun } from "./src/cli/llm_run.ts";

const HELP = `svc — local OpenAI-compatible inference: gateway, engines, embeddings

Usage: svc <command> [options]     (svc <command> --help for details)

  llm run        serve one model (engine server on ${"port 8001"}, embeddings on 8090)

Environment: see .env.template (SVC_*, HUB_*, ENGINE_API_KEY, COMPAT_*).`;

type Command = (args: string[]) => Promise<number>;

const COMMANDS: Record<string, Command> = {
  "llm run": llmRun,
};

/**
 * Runs the CLI with `args` and returns the process exit code. Errors are printed as one line
 * naming what was wrong and what to do; the exit code comes from the error class.
 */
export async function main(args: string[]): Promise<number> {
  setupLogger(Deno.env.get("SVC_LOG_LEVEL") ?? "info");
  if (args.length === 0 || args[0] === "--help" || args[0] === "-h" || args[0] === "help") {
    console.log(HELP);
    return 0;
  }
  const name = [args.slice(0, 2).join(" "), args[0]].find((n) => n in COMMANDS);
  if (!name) {
    console.error(
      `svc: unknown command '${args.slice(0, 2).join(" ")}'. Run 'svc --help' for the list.`,
    );
    return 64;
  }
  try {
    return await COMMANDS[name](args.slice(name.split(" ").length));
  } catch (err) {
    if (err instanceof SvcException) {
      console.error(`svc: ${err.message}`);
      return err.exitCode;
    }
    if (err instanceof Deno.errors.NotCapable || err instanceof Deno.errors.PermissionDenied) {
      console.error(`svc: missing permission: ${err.message}`);
      return 77;
    }
    console.error(
      `svc: unexpected error: ${err instanceof Error ? err.stack ?? err.message : err}`,
    );
    return 70;
  }
}

if (import.meta.main) {
  Deno.exit(await main(Deno.args));
}

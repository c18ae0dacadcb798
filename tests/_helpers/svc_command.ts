// `deno run cli.ts …` as a real subprocess with every permission `svc llm serve` needs, for tests
// that start the CLI's long-running commands.
import { fileURLToPath } from "node:url";

const SVC = fileURLToPath(new URL("../../cli.ts", import.meta.url));
const CONFIG = fileURLToPath(new URL("../../deno.json", import.meta.url));

/** What `svc llm serve` needs: it starts engine processes and downloads nothing in tests. */
export const SVC_ALL_PERMISSIONS: readonly string[] = [
  "--allow-read",
  "--allow-write",
  "--allow-env",
  "--allow-ffi",
  "--allow-sys",
  "--allow-run",
  "--allow-net",
];

/** Options of {@link svcCommand}. */
export interface SvcCommandOptions {
  env: Record<string, string>;
  /** Permission flags (default {@link SVC_ALL_PERMISSIONS}). */
  perms?: readonly string[];
  stdout?: "piped" | "null";
  stderr?: "piped" | "null";
}

/** A `deno run` of cli.ts with `args`, stdin closed. */
export function svcCommand(args: string[], options: SvcCommandOptions): Deno.Command {
  return new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--no-prompt",
      "--quiet",
      `--config=${CONFIG}`,
      ...(options.perms ?? SVC_ALL_PERMISSIONS),
      SVC,
      ...args,
    ],
    env: options.env,
    stdin: "null",
    stdout: options.stdout ?? "piped",
    stderr: options.stderr ?? "piped",
  });
}

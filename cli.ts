/**
 * The `svc` command line.
 *
 * @module
 */

/** Runs the CLI with `args` and returns the process exit code. */
export function main(args: string[]): Promise<number> {
  console.error(`svc: unknown command '${args.join(" ")}'. Run 'svc --help'.`);
  return Promise.resolve(64);
}

if (import.meta.main) {
  Deno.exit(await main(Deno.args));
}

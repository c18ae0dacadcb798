// Mistakes on the command line are one line naming what was wrong and what to do, a non-zero exit,
// and nothing started: same ports, bad hosts, numbers that are not plain decimals, limits of 0.
import { assertEquals, assertMatch } from "../_assert.ts";
import { runCli, withHome } from "./_run_cli.ts";

const PERMS = ["--allow-read", "--allow-write", "--allow-env", "--allow-run", "--allow-net"];

async function refused(args: string[], code: number, pattern: RegExp): Promise<void> {
  await withHome(async (home) => {
    const r = await runCli(args, { perms: PERMS, home });
    assertEquals(r.code, code, `${args.join(" ")}: ${r.stdout}${r.stderr}`);
    assertEquals(r.stderr.trim().split("\n").length, 1, r.stderr);
    assertMatch(r.stderr, pattern);
  });
}

const SERVE = ["llm", "serve", "--model", "demo/chat", "--offline"];

Deno.test("svc llm serve: one port given to two servers is refused naming both flags", async () => {
  await refused(
    [...SERVE, "--port", "9632", "--llm-port", "9632"],
    78,
    /^svc: --port and --llm-port are both 9632; give them different ports/,
  );
  await refused(
    [...SERVE, "--port", "0", "--with-embedding", "--llm-port", "9633", "--embedding-port", "9633"],
    78,
    /^svc: --llm-port and --embedding-port are both 9633; give them different ports/,
  );
});

Deno.test("svc llm serve: a host that is no address of this machine is named as such, not as a port in use", async () => {
  for (const host of ["999.1.1.1", "example.invalid"]) {
    await refused(
      [...SERVE, "--host", host, "--port", "9634"],
      78,
      new RegExp(`^svc: host '${host.replaceAll(".", "\\.")}' is not a valid address.*--host`),
    );
  }
  await refused(
    [...SERVE, "--host", "192.0.2.1", "--port", "9634"],
    78,
    /^svc: host 192\.0\.2\.1 is not an address of this machine; pass --host/,
  );
});

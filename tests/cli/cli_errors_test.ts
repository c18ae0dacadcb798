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

Deno.test("an SVC_HOME or --root that is a file, or that the system refuses, is one line naming it, no stack", async () => {
  await withHome(async (home) => {
    const file = `${home}/afile`;
    await Deno.writeTextFile(file, "");
    const cases: [string[], Record<string, string>, RegExp][] = [
      ...[["list"], ["show", "demo/chat"], ["delete", "demo/chat"], ["download", "demo/chat"]].map((
        words,
      ): [string[], Record<string, string>, RegExp] => [
        ["llm", "model", ...words],
        { SVC_HOME: file },
        /^svc: SVC_HOME \S+afile is not a writable folder: not a directory.*; set SVC_HOME to a folder you can write$/m,
      ]),
      [
        ["install", "--root", file],
        {},
        /^svc: --root \S+afile is not a writable folder: not a directory.*; pass --root with a folder you can write$/m,
      ],
      // The OS refuses (here even root): a file system error, not a missing Deno flag.
      [
        ["llm", "model", "download", "demo/chat"],
        { SVC_HOME: "/sys/svc-test" },
        /^svc: SVC_HOME \/sys\/svc-test is not a writable folder: (operation not permitted|permission denied|read-only file system)/m,
      ],
    ];
    for (const [args, env, pattern] of cases) {
      // Deno asks --allow-all for /sys: with it, the OS answers.
      const perms = env.SVC_HOME?.startsWith("/sys") ? ["--allow-all"] : PERMS;
      const r = await runCli(args, { perms, home, env });
      const where = `${args.join(" ")}: ${r.stderr}`;
      assertEquals(r.code === 73 || r.code === 77, true, where);
      assertMatch(r.stderr, pattern);
      assertEquals(/unexpected error|missing permission|^\s+at /m.test(r.stderr), false, where);
      assertEquals(r.stderr.trim().split("\n").filter((l) => l.startsWith("svc:")).length, 1);
    }
  });
});

Deno.test("numbers on the command line are plain decimals: empty, hex, exponent or binary values are refused; a negative one is out of range, on one line", async () => {
  const run = ["llm", "run", "--model", "demo/chat", "--offline"];
  for (const value of ["", "0x10", "1e3", "0b11", " 7"]) {
    await refused(
      [...run, "--port", value],
      65,
      /^svc: --port (has an empty value|is '.*'): expected a whole number from 0 to 65535/,
    );
  }
  await refused(
    ["llm", "stop", "--timeout", ""],
    65,
    /^svc: --timeout has an empty value: expected a whole number/,
  );
  for (const flag of ["--port", "--prefix-cache-mib", "--max-prompt-tokens"]) {
    await refused(
      [...run, flag, "-1"],
      65,
      new RegExp(`^svc: ${flag} is '-1': expected a whole number from`),
    );
  }
  // A text value starting with a dash: how to pass it.
  await refused(
    ["llm", "serve", "--model", "-x", "--offline"],
    65,
    /^svc: svc llm serve: the value of --model starts with a dash \('-x'\); pass it as --model=-x/,
  );
});

Deno.test("limits of 0 that would refuse every request are refused at start-up", async () => {
  for (const flag of ["--max-queue", "--max-n", "--max-prompt-tokens", "--max-embedding-inputs"]) {
    await refused(
      ["llm", "run", "--model", "demo/chat", "--offline", "--port", "0", flag, "0"],
      65,
      new RegExp(`^svc: ${flag} is '0': expected a whole number from 1 to`),
    );
  }
});

Deno.test("svc help <command> prints that command's help; 'svc serve' suggests 'svc llm serve'; --no-rerank alone is refused", async () => {
  await withHome(async (home) => {
    const help = await runCli(["help", "llm", "serve"], { perms: [], home });
    assertEquals(help.code, 0, help.stderr);
    assertMatch(help.stdout, /^svc llm serve — /);
    for (const [typed, meant] of [["serve", "llm serve"], ["chat", "llm chat"]]) {
      const r = await runCli([typed], { perms: [], home });
      assertEquals(r.code, 64);
      assertMatch(r.stderr, new RegExp(`Did you mean 'svc ${meant}'\\?`));
    }
  });
  await refused(
    [...SERVE, "--port", "0", "--no-rerank"],
    78,
    /^svc: --no-rerank is for the embedding engine, which runs only with --with-embedding/,
  );
});

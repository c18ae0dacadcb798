// cli.ts dispatch as a subprocess with no permissions at all: help, groups, unknown commands.
import { assert, assertEquals, assertMatch } from "../_assert.ts";
import { runCli, withHome } from "./_run_cli.ts";

const COMMANDS = [
  ["llm", "serve"],
  ["llm", "status"],
  ["llm", "stop"],
  ["llm", "run"],
  ["llm", "chat"],
  ["llm", "model", "download"],
  ["llm", "model", "list"],
  ["llm", "model", "show"],
  ["llm", "model", "delete"],
  ["llm", "fine-tune"],
  ["ports"],
];

Deno.test("svc --help lists every command and needs no permissions", async () => {
  await withHome(async (home) => {
    const result = await runCli(["--help"], { perms: [], home });
    assertEquals(result.code, 0, result.stderr);
    for (const words of COMMANDS) assertMatch(result.stdout, new RegExp(`svc ${words.join(" ")} `));
  });
});

Deno.test("every command's --help says which permissions it needs", async () => {
  await withHome(async (home) => {
    for (const words of COMMANDS) {
      const result = await runCli([...words, "--help"], { perms: [], home });
      assertEquals(result.code, 0, `${words.join(" ")}: ${result.stderr}`);
      assertMatch(result.stdout, new RegExp(`^svc ${words.join(" ")} — `));
      assertMatch(result.stdout, /Permissions: .*--allow-/);
    }
  });
});

Deno.test("svc with an unknown command or a bare group exits 64; a group's --help lists its commands", async () => {
  await withHome(async (home) => {
    const unknown = await runCli(["llm", "dance"], { perms: [], home });
    assertEquals(unknown.code, 64);
    assertMatch(unknown.stderr, /unknown command 'llm dance'.*svc --help/);
    const group = await runCli(["llm", "model"], { perms: [], home });
    assertEquals(group.code, 64);
    assertMatch(group.stdout, /svc llm model download/);
    assert(!group.stdout.includes("svc ports"), "only the group's commands");
    const groupHelp = await runCli(["llm", "model", "--help"], { perms: [], home });
    assertEquals(groupHelp.code, 0);
    assertMatch(groupHelp.stdout, /Usage: svc llm model <command>/);
  });
});

Deno.test("svc suggests the closest command for a typo and exits 64", async () => {
  await withHome(async (home) => {
    for (
      const [typed, meant] of [
        [["llm", "serv"], "svc llm serve"],
        [["lm", "status"], "svc llm status"],
        [["llm", "modle", "list"], "svc llm model list"],
        [["prots"], "svc ports"],
      ]
    ) {
      const result = await runCli(typed as string[], { perms: [], home });
      assertEquals(result.code, 64, result.stderr);
      assertMatch(
        result.stderr,
        new RegExp(
          `unknown command '${(typed as string[]).join(" ")}'\\. Did you mean '${meant}'\\?`,
        ),
      );
    }
    const far = await runCli(["llm", "dance"], { perms: [], home });
    assert(!far.stderr.includes("Did you mean"), far.stderr);
  });
});

Deno.test("a mistyped flag gets the closest known flag suggested, exit code non-zero", async () => {
  await withHome(async (home) => {
    const result = await runCli(["llm", "chat", "--promt", "hi"], { perms: [], home });
    assertEquals(result.code, 65, result.stderr);
    assertMatch(result.stderr, /Unknown option '--promt'\. Did you mean '--prompt'\?/);
  });
});

Deno.test("svc llm serve accepts --allow-fallback-adapter (the flag --device webgpu suggests)", async () => {
  await withHome(async (home) => {
    const result = await runCli(["llm", "serve", "--allow-fallback-adapter", "--help"], {
      perms: [],
      home,
    });
    assertEquals(result.code, 0, result.stderr);
    assertMatch(result.stdout, /--allow-fallback-adapter/);
  });
});

Deno.test("svc --version prints the version in deno.json and needs no permissions", async () => {
  const { version } = JSON.parse(
    await Deno.readTextFile(new URL("../../deno.json", import.meta.url)),
  );
  await withHome(async (home) => {
    const result = await runCli(["--version"], { perms: [], home });
    assertEquals(result.code, 0, result.stderr);
    assertEquals(result.stdout.trim(), `svc ${version}`);
  });
});

Deno.test("svc --help has an Environment section and the global --log-level / -v; flags show the variable that sets them", async () => {
  await withHome(async (home) => {
    const top = await runCli(["--help"], { perms: [], home });
    assertMatch(top.stdout, /^Environment .*:$/m);
    for (
      const name of ["SVC_LLM_PORT", "SVC_DEVICE", "SVC_LOG_LEVEL", "SVC_OFFLINE", "HUB_TOKEN"]
    ) {
      assertMatch(top.stdout, new RegExp(`^  ${name} `, "m"));
    }
    assertMatch(top.stdout, /--log-level <level> .*\[env: SVC_LOG_LEVEL\]/);
    assertMatch(top.stdout, /-v, --verbose/);
    const serve = await runCli(["llm", "serve", "--help"], { perms: [], home });
    for (
      const [flag, name] of [["llm-port", "SVC_LLM_PORT"], ["device", "SVC_DEVICE"], [
        "offline",
        "SVC_OFFLINE",
      ], ["embedding-port", "SVC_EMBEDDING_PORT"]]
    ) {
      assertMatch(serve.stdout, new RegExp(`--${flag} .*\\[env: ${name}\\]`));
    }
    const run = await runCli(["llm", "run", "--help"], { perms: [], home });
    assertMatch(run.stdout, /--device .*\[env: SVC_DEVICE\]/);

    // The global flags are taken anywhere before `--`, a bad level named.
    for (
      const args of [["-v", "llm", "run", "--help"], [
        "llm",
        "run",
        "--log-level",
        "warn",
        "--help",
      ]]
    ) {
      const ok = await runCli(args, { perms: [], home });
      assertEquals(ok.code, 0, `${args.join(" ")}: ${ok.stderr}`);
    }
    const bad = await runCli(["--log-level", "loud", "llm", "status"], { perms: [], home });
    assertEquals(bad.code, 64);
    assertMatch(
      bad.stderr,
      /^svc: --log-level is 'loud': expected one of debug, info, warn, error/,
    );
  });
});

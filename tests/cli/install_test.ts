// `svc install`: the script it writes, what it runs from a checkout and from JSR, and its errors.
// (tests/package/install_test.ts runs the installed command with no deno on PATH.)
import { join } from "node:path";
import { assert, assertEquals, assertMatch } from "../_assert.ts";
import { ROOT, runCli, withHome } from "./_run_cli.ts";
import { INSTALL_MARKER, launcherScript, runArgs } from "../../src/cli/install.ts";

const PERMS = (root: string) => ["--allow-read", `--allow-write=${root}`, "--allow-env"];

Deno.test("svc install --help says what it writes and which permissions it needs", async () => {
  await withHome(async (home) => {
    const result = await runCli(["install", "--help"], { perms: [], home });
    assertEquals(result.code, 0, result.stderr);
    assertMatch(result.stdout, /^svc install — /);
    assertMatch(result.stdout, /Permissions: .*--allow-/);
    const list = await runCli(["--help"], { perms: [], home });
    assertMatch(list.stdout, /svc install /);
  });
});

Deno.test("svc install writes an executable script that runs this Deno by its full path", async () => {
  await withHome(async (home) => {
    const root = join(home, "root");
    const result = await runCli(["install", "--root", root], { perms: PERMS(root), home });
    assertEquals(result.code, 0, result.stderr);
    const file = join(root, "bin", "svc");
    assertMatch(result.stdout, new RegExp(`installed ${file} `));
    assertMatch(result.stdout, /is not on PATH; add it/);
    const script = await Deno.readTextFile(file);
    assert(script.startsWith("#!/bin/sh\n"), script);
    assert(script.includes(INSTALL_MARKER));
    assert(script.includes(`deno=${Deno.execPath()}\n`), script);
    assert(script.includes(`--config ${join(ROOT, "deno.json")} ${join(ROOT, "cli.ts")} "$@"`));
    assertMatch(script, new RegExp(`exec npx -y deno@${Deno.version.deno} run -A `));
    assertEquals((await Deno.stat(file)).mode! & 0o777, 0o755);
    // Its own script is replaced without --force (an update).
    const again = await runCli(["install", "--root", root], { perms: PERMS(root), home });
    assertEquals(again.code, 0, again.stderr);
  });
});

Deno.test("svc install leaves another file alone unless --force, and checks --name", async () => {
  await withHome(async (home) => {
    const root = join(home, "root");
    await Deno.mkdir(join(root, "bin"), { recursive: true });
    const file = join(root, "bin", "svc");
    await Deno.writeTextFile(file, '#!/bin/sh\nexec deno run -A cli.ts "$@"\n');
    const refused = await runCli(["install", "--root", root], { perms: PERMS(root), home });
    assertEquals(refused.code, 75);
    assertMatch(refused.stderr, /was not written by 'svc install'.*pass --force/);
    assertEquals(await Deno.readTextFile(file), '#!/bin/sh\nexec deno run -A cli.ts "$@"\n');
    const forced = await runCli(["install", "--root", root, "--force"], {
      perms: PERMS(root),
      home,
    });
    assertEquals(forced.code, 0, forced.stderr);
    assert((await Deno.readTextFile(file)).includes(INSTALL_MARKER));
    const named = await runCli(["install", "--root", root, "--name", "../x"], {
      perms: PERMS(root),
      home,
    });
    assertEquals(named.code, 65);
    assertMatch(named.stderr, /--name '\.\.\/x' is not a plain command name/);
    const unknown = await runCli(["install", "--rot", root], { perms: PERMS(root), home });
    assertEquals(unknown.code, 65);
    assertMatch(unknown.stderr, /Did you mean '--root'\?/);
  });
});

Deno.test("svc install from JSR or a URL runs that package version, with no config of the cwd", () => {
  assertEquals(runArgs(new URL("https://jsr.io/@svc/cli/0.1.0/cli.ts")), [
    "run",
    "-A",
    "--no-config",
    "--unstable-no-legacy-abort",
    "jsr:@svc/cli@0.1.0/cli",
  ]);
  assertEquals(runArgs(new URL("https://example.com/svc/cli.ts")).slice(-2), [
    "--import-map=https://example.com/svc/deno.json",
    "https://example.com/svc/cli.ts",
  ]);
  const local = runArgs(new URL(`file://${join(ROOT, "cli.ts")}`));
  assertEquals(local, ["run", "-A", "--config", join(ROOT, "deno.json"), join(ROOT, "cli.ts")]);
});

Deno.test("svc install's scripts quote paths for sh and cmd.exe", () => {
  const sh = launcherScript("/opt/it's/deno", ["run", "/a b/cli.ts"], "linux");
  assert(sh.includes(`deno='/opt/it'\\''s/deno'\n`), sh);
  assert(sh.includes(`exec "$deno" run '/a b/cli.ts' "$@"`), sh);
  const cmd = launcherScript("C:\\Deno 2\\deno.exe", ["run", "C:\\100%\\cli.ts"], "windows");
  assert(cmd.startsWith("@echo off\r\n"), cmd);
  assert(cmd.includes(`if not exist "C:\\Deno 2\\deno.exe" goto npx\r\n`), cmd);
  assert(cmd.includes(`"C:\\Deno 2\\deno.exe" "run" "C:\\100%%\\cli.ts" %*\r\n`), cmd);
  assert(cmd.includes(`npx -y deno@${Deno.version.deno} "run" "C:\\100%%\\cli.ts" %*`), cmd);
});

// The README's install line works on a machine whose Deno came from npm: the `svc` it installs
// runs from any folder with a PATH on which no `deno` can be found (`deno install -g` writes a
// script that calls `deno` by name, and fails there with "deno: not found").
import { join } from "node:path";
import { assert, assertEquals, assertMatch } from "../_assert.ts";
import { ROOT } from "../cli/_run_cli.ts";
import { NOT_RUNNING_EXIT_CODE } from "../../src/cli/llm_status.ts";

const README = await Deno.readTextFile(join(ROOT, "README.md"));
const { version } = JSON.parse(await Deno.readTextFile(join(ROOT, "deno.json")));

/** A PATH with the system's tools (sh, cat; node and npm where installed) and no `deno`. */
const CLEAN_PATH = ["/usr/bin", "/bin"].filter((dir) => !exists(join(dir, "deno"))).join(":");

function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}

async function run(command: string, args: string[], options: Deno.CommandOptions = {}) {
  const output = await new Deno.Command(command, {
    ...options,
    args,
    stdout: "piped",
    stderr: "piped",
  })
    .output();
  const text = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: output.code, stdout: text(output.stdout), stderr: text(output.stderr) };
}

/** The environment of the installed svc: PATH without deno, the caches, its own SVC_HOME. */
function cleanEnv(home: string): Record<string, string> {
  const env: Record<string, string> = { PATH: CLEAN_PATH, SVC_HOME: home, NO_COLOR: "1" };
  for (const name of ["HOME", "DENO_DIR", "XDG_CACHE_HOME", "TMPDIR"]) {
    const value = Deno.env.get(name);
    if (value !== undefined) env[name] = value;
  }
  return env;
}

/** Runs the README's install line (with `--root root`) as Deno from npm runs it. */
async function installInto(root: string): Promise<string> {
  // e.g. `npx -y deno@2.9.6 run -A cli.ts install`: the same command with this Deno.
  const line = README.match(/`npx -y deno@[\d.]+ (run [^`]*cli\.ts install)`/)?.[1];
  if (line === undefined) {
    throw new Error("README.md has no `npx -y deno@<version> run … cli.ts install` line");
  }
  const install = await run(Deno.execPath(), [...line.split(" "), "--root", root], { cwd: ROOT });
  assertEquals(install.code, 0, `${line}:\n${install.stderr}`);
  return join(root, "bin", "svc");
}

Deno.test("the README's install line gives an svc that runs with no deno on PATH", async () => {
  const root = await Deno.makeTempDir({ prefix: "svc_install_" });
  try {
    const svc = await installInto(root);
    const env = cleanEnv(root);
    const which = await run("/bin/sh", ["-c", "command -v deno"], { clearEnv: true, env });
    assert(which.code !== 0, `deno is on the test's PATH (${CLEAN_PATH}): ${which.stdout}`);
    const options = { cwd: root, clearEnv: true, env };
    const versionOut = await run(svc, ["--version"], options);
    assertEquals(versionOut.code, 0, versionOut.stderr);
    assertEquals(versionOut.stdout.trim(), `svc ${version}`);
    const status = await run(svc, ["llm", "status"], options);
    assertEquals(status.code, NOT_RUNNING_EXIT_CODE, status.stderr);
    assertMatch(status.stdout, /^svc: not running \(no running server recorded in /);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test({
  name: "the installed svc runs the same Deno version through npx when its Deno is gone",
  // Node.js and npm are what the README promises; a machine without them has nothing to fall to.
  ignore: !exists("/usr/bin/npx") && !exists("/bin/npx"),
  fn: async () => {
    const root = await Deno.makeTempDir({ prefix: "svc_install_npx_" });
    try {
      const svc = await installInto(root);
      // As when npm's cache, where `npx -y deno@…` had put Deno, was cleared since.
      const script = await Deno.readTextFile(svc);
      assertMatch(script, /^deno=.*$/m);
      await Deno.writeTextFile(svc, script.replace(/^deno=.*$/m, "deno=/nonexistent/deno"));
      const out = await run(svc, ["--version"], { cwd: root, clearEnv: true, env: cleanEnv(root) });
      assertEquals(out.code, 0, out.stderr);
      assertEquals(out.stdout.trim(), `svc ${version}`);
    } finally {
      await Deno.remove(root, { recursive: true });
    }
  },
});

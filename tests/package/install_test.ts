// The README's install line works: `deno install` of the CLI into a temporary root gives an `svc`
// that runs from any folder.
import { dirname, join } from "node:path";
import { assertEquals } from "../_assert.ts";
import { ROOT } from "../cli/_run_cli.ts";

const README = await Deno.readTextFile(join(ROOT, "README.md"));
const { version } = JSON.parse(await Deno.readTextFile(join(ROOT, "deno.json")));

async function run(command: string, args: string[], options: Deno.CommandOptions) {
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

Deno.test("the README's install line installs an svc whose --version prints deno.json's", async () => {
  // The line as the README writes it, e.g. `deno install -g -A -n svc --config deno.json cli.ts`.
  const line = README.match(/`deno (install -g [^`]*)`/)?.[1];
  if (line === undefined) throw new Error("README.md has no `deno install -g …` line");
  const root = await Deno.makeTempDir({ prefix: "svc_install_" });
  try {
    const [verb, ...flags] = line.split(" ");
    const install = await run(Deno.execPath(), [verb, "--root", root, ...flags], { cwd: ROOT });
    assertEquals(install.code, 0, `${line}:\n${install.stderr}`);
    // The installed script calls `deno` by name: put this one first on PATH. Run it elsewhere.
    const path = `${dirname(Deno.execPath())}:${Deno.env.get("PATH") ?? ""}`;
    const svc = await run(join(root, "bin", "svc"), ["--version"], {
      cwd: root,
      env: { PATH: path },
    });
    assertEquals(svc.code, 0, svc.stderr);
    assertEquals(svc.stdout.trim(), `svc ${version}`);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

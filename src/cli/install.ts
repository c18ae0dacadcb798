/**
 * `svc install`: writes an `svc` command, a small script that runs this same Deno by its full
 * path. Unlike `deno install -g`, whose script calls `deno` by name, it works on a machine where
 * Deno came from npm (`npx -y deno@2.9.6`) and no `deno` is on PATH.
 *
 * @module
 */
import packageConfig from "../../deno.json" with { type: "json" };
import { existsSync } from "node:fs";
import { delimiter, dirname, join, resolve } from "node:path";
import { ConflictError, ValidationError } from "../core/errors.ts";
import { localPath } from "../core/module_location.ts";
import { remoteImportFlags } from "../gateway/engines/engine_command.ts";
import { parseCommandArgs } from "./args.ts";

/** Help text of `svc install`. */
export const INSTALL_HELP = `svc install — install an 'svc' command that needs no 'deno' on PATH

Usage: svc install [--root <dir>] [--name <name>] [--force]

  --root <dir>    install into <dir>/bin (default: $DENO_INSTALL_ROOT, else ~/.deno)
  --name <name>   the command's name (default: svc)
  --force, -f     replace a file that 'svc install' did not write (e.g. an old 'deno install')

Writes <root>/bin/svc (svc.cmd on Windows): a script that runs the Deno running this command
by its full path, so it works where Deno came from npm and nothing named 'deno' is on PATH; should
that file be gone (npm's cache cleared), it runs the same Deno version through 'npx -y'. From a
checkout it runs the checkout's cli.ts with its deno.json (install again after moving it); from
JSR, jsr:${packageConfig.name}@${packageConfig.version}/cli. Run it as
  npx -y deno@${Deno.version.deno} run -A cli.ts install             (in the repository folder)
  npx -y deno@${Deno.version.deno} run -A jsr:${packageConfig.name}/cli install    (from JSR)
Permissions: --allow-read --allow-write=<root>/bin --allow-env (DENO_INSTALL_ROOT, HOME, PATH).`;

/** The line that marks a script as written by `svc install` (so a new install may replace it). */
export const INSTALL_MARKER = "written by 'svc install'";

/**
 * The arguments the installed command gives Deno before its own: `run`, the permissions, and
 * cli.ts at `cliUrl` — a file with its deno.json beside it, or the package version on JSR.
 *
 * @example
 * ```ts
 * import { runArgs } from "./install.ts";
 * runArgs(new URL("https://jsr.io/@svc/cli/0.1.0/cli.ts")).at(-1); // "jsr:@svc/cli@0.1.0/cli"
 * ```
 */
export function runArgs(cliUrl: URL): string[] {
  const path = localPath(cliUrl);
  if (path !== undefined) {
    const config = join(dirname(path), "deno.json");
    return ["run", "-A", ...(existsSync(config) ? ["--config", config] : []), path];
  }
  // Loaded from a URL, the package's deno.json is not the config: name its unstable features, and
  // keep a deno.json of the folder the user happens to be in out of it.
  const unstable = (packageConfig.unstable ?? []).map((feature) => `--unstable-${feature}`);
  const main = cliUrl.hostname === "jsr.io"
    ? `jsr:${packageConfig.name}@${packageConfig.version}/cli`
    : cliUrl.href;
  // Off JSR, the package's deno.json beside cli.ts maps our bare specifiers (as for the engines).
  // (-A already allows imports: --allow-import next to it is an error.)
  const importMap = remoteImportFlags(cliUrl).filter((flag) => flag.startsWith("--import-map="));
  return ["run", "-A", "--no-config", ...unstable, ...importMap, main];
}

/**
 * The installed command's text: run `deno` (an absolute path) with `args` and the command's own
 * arguments; when that file is gone, the same Deno version through `npx -y`.
 *
 * @example
 * ```ts
 * import { launcherScript } from "./install.ts";
 * launcherScript("/opt/deno", ["run", "-A", "/src/cli.ts"], "linux").startsWith("#!/bin/sh"); // true
 * ```
 */
export function launcherScript(
  deno: string,
  args: string[],
  os: typeof Deno.build.os = Deno.build.os,
): string {
  const version = Deno.version.deno;
  const about = `svc ${packageConfig.version}, ${INSTALL_MARKER}: runs Deno ${version} by its ` +
    `full path (no 'deno' on PATH needed), else the same version through npx.`;
  if (os === "windows") {
    // cmd.exe: double quotes, and a literal % doubled.
    const q = (s: string) => `"${s.replaceAll("%", "%%")}"`;
    const line = args.map(q).join(" ");
    return [
      "@echo off",
      `rem ${about}`,
      `if not exist ${q(deno)} goto npx`,
      `${q(deno)} ${line} %*`,
      "exit /b %errorlevel%",
      ":npx",
      `npx -y deno@${version} ${line} %*`,
      "",
    ].join("\r\n");
  }
  const q = (s: string) => /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replaceAll("'", `'\\''`)}'`;
  const line = args.map(q).join(" ");
  return [
    "#!/bin/sh",
    `# ${about}`,
    `deno=${q(deno)}`,
    `if [ -x "$deno" ]; then exec "$deno" ${line} "$@"; fi`,
    `exec npx -y deno@${version} ${line} "$@"`,
    "",
  ].join("\n");
}

function defaultRoot(): string {
  const root = Deno.env.get("DENO_INSTALL_ROOT");
  if (root) return root;
  const home = Deno.env.get("HOME") || Deno.env.get("USERPROFILE");
  if (!home) {
    throw new ValidationError(
      "svc install: neither DENO_INSTALL_ROOT nor HOME is set; pass --root <dir> (the command goes to <dir>/bin)",
    );
  }
  return join(home, ".deno");
}

async function readIfExists(path: string): Promise<string | undefined> {
  try {
    return await Deno.readTextFile(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return undefined;
    if (err instanceof Deno.errors.IsADirectory) {
      throw new ConflictError(`svc install: ${path} is a folder; remove it or pass another --name`);
    }
    throw err;
  }
}

/** Runs `svc install`; resolves with the exit code. */
export async function install(args: string[]): Promise<number> {
  const { values } = parseCommandArgs(args, "svc install", {
    root: { type: "string" },
    name: { type: "string" },
    force: { type: "boolean", short: "f" },
  });
  if (values.help) {
    console.log(INSTALL_HELP);
    return 0;
  }
  const name = (values.name as string | undefined) ?? "svc";
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(name)) {
    throw new ValidationError(
      `svc install: --name '${name}' is not a plain command name (letters, digits, '.', '_', '-')`,
      { param: "name" },
    );
  }
  const windows = Deno.build.os === "windows";
  const bin = join(resolve((values.root as string | undefined) ?? defaultRoot()), "bin");
  const file = join(bin, windows ? `${name}.cmd` : name);
  const deno = Deno.execPath();
  const run = runArgs(new URL("../../cli.ts", import.meta.url));
  const existing = await readIfExists(file);
  if (existing !== undefined && !existing.includes(INSTALL_MARKER) && !values.force) {
    throw new ConflictError(
      `svc install: ${file} exists and was not written by 'svc install' (an earlier ` +
        `'deno install' of svc?); pass --force to replace it`,
    );
  }
  try {
    await Deno.mkdir(bin, { recursive: true });
    await Deno.writeTextFile(file, launcherScript(deno, run), { mode: 0o755 });
    if (!windows) await Deno.chmod(file, 0o755); // the mode applies only to a new file
  } catch (err) {
    if (
      !(err instanceof Deno.errors.PermissionDenied || err instanceof Deno.errors.NotADirectory ||
        err instanceof Deno.errors.AlreadyExists)
    ) {
      throw err;
    }
    throw new ValidationError(
      `svc install: cannot write ${file} (${err.message}); pass --root <a folder you may write>`,
      { param: "root" },
    );
  }
  console.log(`svc: installed ${file} (runs ${deno}, Deno ${Deno.version.deno}, ${run.at(-1)})`);
  const onPath = (Deno.env.get("PATH") ?? "").split(delimiter).some((dir) =>
    dir !== "" && resolve(dir) === bin
  );
  if (!onPath) {
    console.log(
      windows
        ? `svc: ${bin} is not on PATH; add it to run '${name}' by name`
        : `svc: ${bin} is not on PATH; add it, e.g. export PATH="${bin}:$PATH"`,
    );
  }
  return 0;
}

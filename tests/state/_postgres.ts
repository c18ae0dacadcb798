// A throwaway PostgreSQL server for the state-store tests: initdb into a temporary folder, run as
// the `postgres` user (PostgreSQL refuses root) on a free loopback port, trust authentication.
// Started once per test module on first use, stopped when the module's tests end. Tests that need
// it are ignored (with POSTGRES_MISSING as the reason) where the binaries are absent.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { freePort } from "../_helpers/free_port.ts";

// Debian installs each major version under /usr/lib/postgresql/<version>/bin: newest first.
const BIN_DIRS = [
  ...versionDirs("/usr/lib/postgresql").map((v) => `/usr/lib/postgresql/${v}/bin`),
  "/usr/local/bin",
  "/usr/bin",
];

function versionDirs(root: string): string[] {
  try {
    return [...Deno.readDirSync(root)].map((e) => e.name).sort((a, b) => Number(b) - Number(a));
  } catch {
    return [];
  }
}

function findBin(name: string): string | undefined {
  for (const dir of BIN_DIRS) {
    const path = join(dir, name);
    if (existsSync(path)) return path;
  }
  return undefined;
}

function hasUser(name: string): boolean {
  try {
    return Deno.readTextFileSync("/etc/passwd").split("\n").some((l) => l.startsWith(`${name}:`));
  } catch {
    return false;
  }
}

const initdb = findBin("initdb");
const pgCtl = findBin("pg_ctl");
const isRoot = Deno.uid?.() === 0;

/** Why the PostgreSQL variant cannot run here; undefined when it can. */
export const POSTGRES_MISSING: string | undefined = !initdb || !pgCtl
  ? "PostgreSQL binaries (initdb, pg_ctl) not found; install Debian's postgresql to run these"
  : !hasUser("postgres")
  ? "no 'postgres' system user to run PostgreSQL as"
  : undefined;

interface Server {
  dir: string;
  port: number;
}

let server: Promise<Server> | undefined;

async function run(args: string[]): Promise<void> {
  const cmd = isRoot ? ["runuser", "-u", "postgres", "--", ...args] : args;
  const out = await new Deno.Command(cmd[0], {
    args: cmd.slice(1),
    stdout: "piped",
    stderr: "piped",
  })
    .output();
  if (!out.success) {
    throw new Error(`${args.join(" ")} failed: ${new TextDecoder().decode(out.stderr)}`);
  }
}

async function start(): Promise<Server> {
  const dir = await Deno.makeTempDir({ prefix: "svc-pg-" });
  if (isRoot) await run0(["chown", "postgres", dir]);
  const data = join(dir, "data");
  await run([initdb!, "-D", data, "-A", "trust", "-U", "postgres", "--no-sync"]);
  const port = freePort();
  await run([
    pgCtl!,
    "-D",
    data,
    "-l",
    join(dir, "log"),
    "-w",
    "-o",
    `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`,
    "start",
  ]);
  globalThis.addEventListener("unload", () => {
    const args = [pgCtl!, "-D", data, "-m", "immediate", "stop"];
    const cmd = isRoot ? ["runuser", "-u", "postgres", "--", ...args] : args;
    new Deno.Command(cmd[0], { args: cmd.slice(1), stdout: "null", stderr: "null" }).outputSync();
    Deno.removeSync(dir, { recursive: true });
  });
  return { dir, port };
}

async function run0(cmd: string[]): Promise<void> {
  const out = await new Deno.Command(cmd[0], { args: cmd.slice(1) }).output();
  if (!out.success) throw new Error(`${cmd.join(" ")} failed`);
}

let databases = 0;

/** A URL of a new, empty database on the shared test server. */
export async function freshPostgresUrl(): Promise<string> {
  const { port } = await (server ??= start());
  const name = `svc_test_${Deno.pid}_${++databases}`;
  const postgres = (await import("postgres")).default;
  const admin = postgres(`postgres://postgres@127.0.0.1:${port}/postgres`, {
    onnotice: () => {},
  });
  try {
    await admin.unsafe(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end({ timeout: 5 });
  }
  return `postgres://postgres@127.0.0.1:${port}/${name}`;
}

// Runs `cli.ts` as a real subprocess with narrow permissions, in a temporary folder with its own
// SVC_HOME, a cleared environment (so a developer's variables never leak in) and no network
// region probes.
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository root. */
export const ROOT: string = fileURLToPath(new URL("../../", import.meta.url));
const CLI = join(ROOT, "cli.ts");
const CONFIG = join(ROOT, "deno.json");
const EMPTY_DEFAULT_PORTS = join(ROOT, "tests", "cli", "_empty_default_ports.ts");

/** What the command did. */
export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Options of {@link runCli}. */
export interface RunCliOptions {
  /** Deno permission flags, e.g. `["--allow-env", "--allow-net=127.0.0.1"]`. */
  perms: string[];
  /** SVC_HOME (required: tests never touch the real home). */
  home: string;
  /** More environment variables. */
  env?: Record<string, string>;
  /** Text written to stdin (then closed); default: stdin closed at once. */
  stdin?: string;
  /** Called with the live process once started (signals); the result still resolves. */
  onStart?: (child: Deno.ChildProcess, output: { stdout: () => string }) => void;
  /** The module run and the flags before it (default: this checkout's cli.ts and deno.json). */
  main?: { module: string; flags: string[] };
  /**
   * Nothing answers on this host's default Svc ports (8000, 8001, 8901, 8090) for the command,
   * whatever else runs on the machine (a preload refuses its connections there): for tests of
   * what the CLI finds, or fails to find, when it searches them.
   */
  emptyDefaultPorts?: boolean;
}

/** Runs `deno run <perms> cli.ts <args>` and collects its exit code and output. */
export async function runCli(args: string[], options: RunCliOptions): Promise<CliResult> {
  const passThrough: Record<string, string> = {};
  for (const name of ["PATH", "HOME", "DENO_DIR", "XDG_CACHE_HOME", "TMPDIR"]) {
    const value = Deno.env.get(name);
    if (value !== undefined) passThrough[name] = value;
  }
  const command = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--no-prompt",
      "--quiet",
      ...(options.main?.flags ?? [`--config=${CONFIG}`]),
      ...(options.emptyDefaultPorts ? [`--preload=${EMPTY_DEFAULT_PORTS}`] : []),
      ...options.perms,
      options.main?.module ?? CLI,
      ...args,
    ],
    cwd: options.home,
    clearEnv: true,
    env: {
      ...passThrough,
      NO_COLOR: "1",
      SVC_HOME: options.home,
      SVC_OFFLINE: "true",
      SVC_FORCE_CHINA_MIRROR: "false",
      SVC_LOG_LEVEL: "error",
      ...options.env,
    },
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  });
  const child = command.spawn();
  const decoder = new TextDecoder();
  let stdout = "";
  let stderr = "";
  const readAll = async (stream: ReadableStream<Uint8Array>, add: (s: string) => void) => {
    for await (const chunk of stream) add(decoder.decode(chunk, { stream: true }));
  };
  const reading = Promise.all([
    readAll(child.stdout, (s) => (stdout += s)),
    readAll(child.stderr, (s) => (stderr += s)),
  ]);
  const writer = child.stdin.getWriter();
  if (options.stdin !== undefined) await writer.write(new TextEncoder().encode(options.stdin));
  await writer.close();
  options.onStart?.(child, { stdout: () => stdout });
  const [status] = await Promise.all([child.status, reading]);
  return { code: status.code, stdout, stderr };
}

/** Runs `fn` with a fresh temporary SVC_HOME, removed afterwards. */
export async function withHome<T>(fn: (home: string) => Promise<T>): Promise<T> {
  const home = await Deno.makeTempDir({ prefix: "svc-cli-test-" });
  try {
    return await fn(home);
  } finally {
    await Deno.remove(home, { recursive: true }).catch(() => {});
  }
}

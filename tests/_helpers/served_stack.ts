// The whole stack as a user starts it: `svc llm serve --with-embedding` (gateway + demo/chat +
// demo/embed engines, real processes on free loopback ports), for the reliability tests that
// attack it. `stillServes` and `rssBytes` are the two facts those tests assert afterwards: a
// normal request is answered quickly, and memory came back.
import { join } from "node:path";
import { readServeState, type ServeState } from "../../src/cli/serve_state.ts";
import { linkSharedHub } from "../gateway/_child_home.ts";
import { svcCommand } from "./svc_command.ts";

/** A running `svc llm serve`. */
export interface ServedStack {
  /** The state file's content once everything is ready (gatewayUrl, llmPid, ...). */
  readonly state: ServeState;
  readonly stateFile: string;
  /** The gateway's pid (the `svc llm serve` process). */
  readonly pid: number;
  /** stderr so far (for assertion messages). */
  stderr(): string;
  /** Kills the whole stack and removes its folder. */
  stop(): Promise<void>;
}

/**
 * Starts `svc llm serve --with-embedding` on demo models with `extra` flags appended, and waits
 * until the state file says both engines are up.
 */
export async function startServedStack(extra: string[] = []): Promise<ServedStack> {
  const dir = await Deno.makeTempDir({ prefix: "svc-stack-" });
  const stateFile = join(dir, "serve.env");
  // A home of its own, so engines one test registers are never restored by another's gateway; the
  // generated demo models are shared through a link.
  const home = join(dir, "home");
  await Deno.mkdir(home);
  await linkSharedHub(home);
  const child = svcCommand([
    ...[
      "llm",
      "serve",
      "--model",
      "demo/chat",
      "--with-embedding",
      "--embedding-model",
      "demo/embed",
    ],
    ...["--port", "0", "--llm-port", "0", "--embedding-port", "0"],
    ...["--device", "cpu", "--offline", "--state-file", stateFile],
    ...extra,
  ], {
    env: { SVC_HOME: home, SVC_LOG_LEVEL: "warn", SVC_CHAT_API_KEY: "", NO_COLOR: "1" },
  }).spawn();
  let stderr = "";
  const draining = Promise.all([
    child.stdout.pipeTo(new WritableStream()),
    child.stderr.pipeThrough(new TextDecoderStream()).pipeTo(
      new WritableStream({ write: (s) => void (stderr += s) }),
    ),
  ]);
  const stop = async () => {
    try {
      child.kill("SIGKILL");
    } catch { /* already exited */ }
    await child.status;
    await draining;
    // The engines stop on their own when their gateway dies; wait so no test leaks them.
    const s = await readServeState(stateFile).catch(() => null);
    for (const pid of [s?.llmPid, s?.embeddingPid]) {
      if (pid !== undefined) await waitForExit(pid);
    }
    await Deno.remove(dir, { recursive: true });
  };
  try {
    const deadline = Date.now() + 120_000;
    while (true) {
      const s = await readServeState(stateFile).catch(() => null);
      if (s?.gatewayUrl && s.llmPid && s.embeddingPid && await answers(s.gatewayUrl)) {
        return { state: s, stateFile, pid: child.pid, stderr: () => stderr, stop };
      }
      if (Date.now() > deadline) throw new Error(`svc llm serve did not start: ${stderr}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  } catch (err) {
    await stop();
    throw err;
  }
}

async function answers(gatewayUrl: string): Promise<boolean> {
  const res = await fetch(`${gatewayUrl}/models`).catch(() => null);
  if (res === null) return false;
  const body = await res.json().catch(() => null);
  return res.ok && Array.isArray(body?.data) && body.data.length >= 2;
}

async function waitForExit(pid: number): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    try {
      Deno.kill(pid, "SIGCONT"); // signal 0 is not offered; SIGCONT is harmless
    } catch {
      return;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * How long a normal chat request through `gatewayUrl` (a `.../v1` URL) takes, in ms; throws
 * unless it is answered 200.
 */
export async function timeNormalChat(gatewayUrl: string, model = "demo/chat"): Promise<number> {
  const started = performance.now();
  const res = await fetch(`${gatewayUrl}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model, messages: [{ role: "user", content: "hi" }], max_tokens: 2 }),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`normal chat got ${res.status}: ${text}`);
  return performance.now() - started;
}

/**
 * Resident memory of a process, from /proc (Linux). Read by `cat`: Deno lets only --allow-all
 * read /proc directly, and the tests run with --allow-run.
 */
export function rssBytes(pid: number): Promise<number> {
  return procStatusBytes(pid, "VmRSS");
}

/** The most resident memory a process has had so far (`VmHWM`), as {@link rssBytes} reads it. */
export function peakRssBytes(pid: number): Promise<number> {
  return procStatusBytes(pid, "VmHWM");
}

async function procStatusBytes(pid: number, field: string): Promise<number> {
  const out = await new Deno.Command("cat", { args: [`/proc/${pid}/status`] }).output();
  const status = new TextDecoder().decode(out.stdout);
  const kib = new RegExp(`^${field}:\\s+(\\d+) kB$`, "m").exec(status);
  if (kib === null) throw new Error(`no ${field} for pid ${pid}`);
  return Number(kib[1]) * 1024;
}

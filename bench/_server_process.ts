/**
 * Runs a benchmark server ({@link ServeSpec}) as a subprocess, so its CPU time and memory are its
 * own and the client load runs beside it as a separate process, the way a real client would.
 *
 * @module
 */

import { fileURLToPath } from "node:url";
import type { ServerReport, ServeSpec } from "./_serve.ts";
import { stopChild } from "./_proc.ts";

/** Permissions the server subprocess runs with (those of `deno task bench`, minus --allow-run). */
const PERMISSIONS = [
  "--allow-read",
  "--allow-write",
  "--allow-env",
  "--allow-ffi",
  "--allow-sys",
  "--allow-net=127.0.0.1,localhost",
];

/** A running server subprocess. */
export class ServerProcess {
  readonly baseUrl: string;
  readonly pid: number;
  /** Resident memory right after the model loaded, MiB. */
  readonly loadedRssMiB: number;
  #controlUrl: string;
  #child: Deno.ChildProcess;

  private constructor(
    child: Deno.ChildProcess,
    ready: { baseUrl: string; controlUrl: string; pid: number },
    loadedRssMiB: number,
  ) {
    this.#child = child;
    this.baseUrl = ready.baseUrl;
    this.#controlUrl = ready.controlUrl;
    this.pid = ready.pid;
    this.loadedRssMiB = loadedRssMiB;
  }

  /**
   * Starts the subprocess and waits (up to `timeoutMs`) until its server answers. What it writes
   * to stderr goes to `logFile` (appended) when given, else to this process's stderr.
   */
  static async start(
    spec: ServeSpec,
    options: { logFile?: string; timeoutMs?: number } = {},
  ): Promise<ServerProcess> {
    const timeoutMs = options.timeoutMs ?? 180_000;
    const script = fileURLToPath(new URL("./_serve.ts", import.meta.url));
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", ...PERMISSIONS, script, JSON.stringify(spec)],
      stdin: "null",
      stdout: "piped",
      stderr: options.logFile ? "piped" : "inherit",
    }).spawn();
    if (options.logFile) {
      const file = await Deno.open(options.logFile, { create: true, append: true });
      child.stderr.pipeTo(file.writable).catch(() => {});
    }
    const line = await firstLine(child.stdout, timeoutMs).catch(async (err) => {
      try {
        child.kill("SIGKILL");
      } catch { /* already gone */ }
      await child.status;
      throw new Error(`the ${spec.target} server for ${spec.model} did not start: ${err}`);
    });
    const ready = JSON.parse(line);
    return new ServerProcess(child, ready, ready.rssMiB);
  }

  /** Session counters, CPU time and memory of the server process. */
  async report(): Promise<ServerReport> {
    return await (await fetch(`${this.#controlUrl}/stats`)).json();
  }

  /** Starts a new memory peak and loop-lag record (the counters are cumulative: diff reports). */
  async reset(): Promise<ServerReport> {
    return await (await fetch(`${this.#controlUrl}/reset`, { method: "POST" })).json();
  }

  /** Stops the server (SIGTERM, then SIGKILL after 10 s). */
  stop(): Promise<void> {
    return stopChild(this.#child);
  }
}

/** Reads the first line of `stream`, then keeps draining it in the background. */
async function firstLine(stream: ReadableStream<Uint8Array>, timeoutMs: number): Promise<string> {
  const reader = stream.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = "";
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no ready line after ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    while (!buffered.includes("\n")) {
      const { value, done } = await Promise.race([reader.read(), timeout]);
      if (done) throw new Error("the process exited before it was ready");
      buffered += value;
    }
  } finally {
    clearTimeout(timer);
  }
  // Keep reading so the child never blocks on a full pipe.
  (async () => {
    try {
      while (!(await reader.read()).done) { /* discard */ }
    } catch { /* closed */ }
  })();
  return buffered.slice(0, buffered.indexOf("\n"));
}

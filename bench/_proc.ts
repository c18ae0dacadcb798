/**
 * Process measurements taken from inside a process (Deno denies reading /proc/<pid> without
 * --allow-all): CPU time of all its threads, and a sampler of its resident memory that keeps the
 * peak.
 *
 * @module
 */

import process from "node:process";

/**
 * User + system CPU seconds used so far by this process, all threads (ONNX Runtime's included).
 *
 * @example
 * ```ts
 * const before = cpuSeconds();
 * ```
 */
export function cpuSeconds(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
}

/** Resident memory of this process now, MiB. */
export function rssMiB(): number {
  return Deno.memoryUsage().rss / 2 ** 20;
}

/**
 * Samples this process's resident memory every `intervalMs` and keeps the peak since the last
 * reset.
 *
 * @example
 * ```ts
 * const sampler = new RssSampler(50);
 * sampler.reset();
 * // … run a load …
 * console.log(sampler.peakMiB);
 * sampler.stop();
 * ```
 */
export class RssSampler {
  #peak = 0;
  #timer: ReturnType<typeof setInterval>;

  constructor(intervalMs = 50) {
    this.#timer = setInterval(() => this.#sample(), intervalMs);
    this.#sample();
  }

  /** Peak resident memory since the last reset, MiB. */
  get peakMiB(): number {
    this.#sample();
    return this.#peak;
  }

  /** Starts a new peak from the current value. */
  reset(): void {
    this.#peak = 0;
    this.#sample();
  }

  /** Stops sampling. */
  stop(): void {
    clearInterval(this.#timer);
  }

  #sample(): void {
    this.#peak = Math.max(this.#peak, rssMiB());
  }
}

/**
 * Measures how late a 10 ms timer fires: the time this process's event loop is blocked (by
 * synchronous work such as a native call) and cannot serve sockets.
 *
 * @example
 * ```ts
 * const lag = new LoopLagSampler();
 * // … run a load …
 * console.log(lag.summary().p99);
 * lag.stop();
 * ```
 */
export class LoopLagSampler {
  #intervalMs: number;
  #samples: number[] = [];
  #expected: number;
  #timer: ReturnType<typeof setInterval>;

  constructor(intervalMs = 10) {
    this.#intervalMs = intervalMs;
    this.#expected = performance.now() + intervalMs;
    this.#timer = setInterval(() => {
      const now = performance.now();
      this.#samples.push(Math.max(0, now - this.#expected));
      this.#expected = now + this.#intervalMs;
      if (this.#samples.length > 100_000) this.#samples.splice(0, 50_000);
    }, intervalMs);
  }

  /** Drops the samples so far. */
  reset(): void {
    this.#samples = [];
  }

  /** Lateness percentiles since the last reset, ms. */
  summary(): { p50: number; p99: number; max: number } {
    const sorted = [...this.#samples].sort((a, b) => a - b);
    const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
    return sorted.length === 0
      ? { p50: NaN, p99: NaN, max: NaN }
      : { p50: at(0.5), p99: at(0.99), max: sorted[sorted.length - 1] };
  }

  /** Stops measuring. */
  stop(): void {
    clearInterval(this.#timer);
  }
}

/**
 * CPU seconds the whole machine has been busy (all processes, all cores), from /proc/stat; NaN
 * where it cannot be read. Read through `cat` because Deno denies /proc/stat to `readTextFile`
 * without --allow-all (the bench already has --allow-run).
 *
 * @example
 * ```ts
 * const busy = await systemBusySeconds();
 * ```
 */
export async function systemBusySeconds(): Promise<number> {
  try {
    const { stdout, success } = await new Deno.Command("cat", { args: ["/proc/stat"] }).output();
    if (!success) return NaN;
    const line = new TextDecoder().decode(stdout).split("\n").find((l) => l.startsWith("cpu "));
    if (!line) return NaN;
    // user nice system idle iowait irq softirq steal …: busy is all but idle and iowait.
    const [user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).slice(1)
      .map(Number);
    return (user + nice + system + irq + softirq + (steal || 0)) / CLOCK_TICKS;
  } catch {
    return NaN;
  }
}

/**
 * User + system CPU seconds of another process (from `/proc/<pid>/stat`, read with `cat` as
 * above); NaN when it cannot be read.
 */
export async function processCpuSeconds(pid: number): Promise<number> {
  try {
    const { stdout, success } = await new Deno.Command("cat", { args: [`/proc/${pid}/stat`] })
      .output();
    if (!success) return NaN;
    // Fields after the parenthesised command name: state is field 3, utime 14, stime 15.
    const text = new TextDecoder().decode(stdout);
    const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return NaN;
  }
}

/** Clock ticks per second of /proc/stat (USER_HZ, 100 on Linux). */
const CLOCK_TICKS = 100;

/** Stops a child process: SIGTERM, then SIGKILL if it is still there after 10 s. */
export async function stopChild(child: Deno.ChildProcess): Promise<void> {
  try {
    child.kill("SIGTERM");
  } catch {
    return;
  }
  const timer = setTimeout(() => {
    try {
      child.kill("SIGKILL");
    } catch { /* gone */ }
  }, 10_000);
  await child.status;
  clearTimeout(timer);
}

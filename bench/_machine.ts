/**
 * What machine the benchmark ran on, for the header of RESULTS.md.
 *
 * @module
 */

/** A description of the machine and runtime. */
export interface MachineInfo {
  cpuModel: string;
  cores: number;
  memoryGiB: number;
  os: string;
  deno: string;
  v8: string;
  device: string;
  /** 1/5/15-minute load averages when the run started (other users of the machine). */
  loadAverage: number[];
  date: string;
}

/**
 * Reads the CPU model (from /proc/cpuinfo when readable), core count, memory, OS and Deno
 * version. `device` is what the engine runs on (e.g. "cpu (onnxruntime-node)").
 *
 * @example
 * ```ts
 * const machine = await describeMachine("cpu (onnxruntime-node)");
 * console.log(machine.cpuModel, machine.cores);
 * ```
 */
export async function describeMachine(device: string): Promise<MachineInfo> {
  return {
    cpuModel: await cpuModel(),
    cores: navigator.hardwareConcurrency,
    memoryGiB: safe(() => Deno.systemMemoryInfo().total / 2 ** 30, NaN),
    os: `${Deno.build.os} ${safe(() => Deno.osRelease(), "?")} ${Deno.build.arch}`,
    deno: Deno.version.deno,
    v8: Deno.version.v8,
    device,
    loadAverage: safe(() => Deno.loadavg(), []),
    date: new Date().toISOString(),
  };
}

async function cpuModel(): Promise<string> {
  const line = (await readCpuInfo()).split("\n").find((l) => /^model name\s*:/.test(l));
  return line ? line.split(":").slice(1).join(":").trim() : `unknown ${Deno.build.arch} CPU`;
}

/** /proc/cpuinfo; Deno denies it to readTextFile without --allow-all, so `cat` is the fallback. */
async function readCpuInfo(): Promise<string> {
  try {
    return await Deno.readTextFile("/proc/cpuinfo");
  } catch {
    try {
      const { stdout } = await new Deno.Command("cat", { args: ["/proc/cpuinfo"] }).output();
      return new TextDecoder().decode(stdout);
    } catch {
      return ""; // not Linux, or no --allow-run
    }
  }
}

function safe<T>(read: () => T, fallback: T): T {
  try {
    return read();
  } catch {
    return fallback;
  }
}

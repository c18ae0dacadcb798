/**
 * System utilities: CPU count, memory, and whether a real (hardware) WebGPU adapter exists.
 *
 * @example
 * ```ts
 * import { checkGpuAvailable, getCpuCount, getMemoryInfo } from "@svc/cli";
 * console.log(getCpuCount(), getMemoryInfo().total, await checkGpuAvailable());
 * ```
 *
 * @module
 */

import { ConfigurationError, isAccessRefused } from "./errors.ts";

/** Memory of the machine in bytes. */
export interface MemoryInfo {
  /** Installed memory. */
  total: number;
  /** Memory not used at all. */
  free: number;
  /** Memory a new program can get without swapping (free plus reclaimable caches). */
  available: number;
}

/** What we know of a WebGPU adapter. */
export interface GpuInfo {
  /** Vendor name or PCI id, as the driver reports it. */
  vendor: string;
  /** GPU architecture (may be empty). */
  architecture: string;
  /** Device id (may be empty). */
  device: string;
  /** Human-readable adapter name, e.g. `NVIDIA H100` or `llvmpipe (LLVM 15…)`. */
  description: string;
  /** True for a fallback or software adapter (llvmpipe, lavapipe, SwiftShader…). */
  isFallback: boolean;
}

/** The parts of `navigator.gpu` we use; injectable for tests. */
export interface GpuLike {
  /** Resolves to the default adapter, or null when there is none. */
  requestAdapter(options?: { powerPreference?: string }): Promise<AdapterLike | null>;
}

/** The parts of a `GPUAdapter` we read. */
export interface AdapterLike {
  /** `GPUAdapterInfo` fields. */
  info?: {
    vendor?: string;
    architecture?: string;
    device?: string;
    description?: string;
    isFallbackAdapter?: boolean;
  };
  /** Older WebGPU implementations put the flag on the adapter itself. */
  isFallbackAdapter?: boolean;
}

/** Options of {@link checkGpuAvailable} and {@link getGpuInfo}. */
export interface GpuProbeOptions {
  /** Give up on the adapter request after this long (default 5000 ms): some drivers hang. */
  timeoutMs?: number;
  /** The WebGPU entry point (default `navigator.gpu`). */
  gpu?: GpuLike | null;
}

const SOFTWARE_RENDERERS = /llvmpipe|lavapipe|softpipe|swiftshader|microsoft basic render/i;

/**
 * Number of logical CPUs this process may use (at least 1).
 *
 * @example
 * ```ts
 * const threads = getCpuCount();
 * ```
 */
export function getCpuCount(): number {
  const count = globalThis.navigator?.hardwareConcurrency;
  return typeof count === "number" && count >= 1 ? Math.floor(count) : 1;
}

/**
 * Memory of the machine in bytes: `total`, `free` and `available`.
 * Needs `--allow-sys` (raises `ConfigurationError` naming the flag otherwise).
 *
 * @example
 * ```ts
 * const gib = getMemoryInfo().total / 2 ** 30;
 * ```
 */
export function getMemoryInfo(): MemoryInfo {
  let info: Deno.SystemMemoryInfo;
  try {
    info = Deno.systemMemoryInfo();
  } catch (err) {
    if (isAccessRefused(err)) {
      throw new ConfigurationError(
        "reading memory information needs permission: run with --allow-sys " +
          "(or --allow-sys=systemMemoryInfo)",
        { cause: err },
      );
    }
    throw err;
  }
  return { total: info.total, free: info.free, available: info.available };
}

/**
 * Describes the default WebGPU adapter, or returns null when there is none (no `navigator.gpu`,
 * no adapter, an error, or no answer within `timeoutMs`).
 *
 * @example
 * ```ts
 * const gpu = await getGpuInfo();
 * if (gpu && !gpu.isFallback) console.log(`GPU: ${gpu.description}`);
 * ```
 */
export async function getGpuInfo(options: GpuProbeOptions = {}): Promise<GpuInfo | null> {
  const gpu = options.gpu === undefined
    ? (globalThis.navigator as { gpu?: GpuLike } | undefined)?.gpu
    : options.gpu;
  if (gpu === undefined || gpu === null) return null;
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const timeout = new Promise<null>((resolve) => {
      timer = setTimeout(() => resolve(null), options.timeoutMs ?? 5000);
    });
    const adapter = await Promise.race([
      gpu.requestAdapter({ powerPreference: "high-performance" }),
      timeout,
    ]);
    if (adapter === null || adapter === undefined) return null;
    const info = adapter.info ?? {};
    const described = {
      vendor: String(info.vendor ?? ""),
      architecture: String(info.architecture ?? ""),
      device: String(info.device ?? ""),
      description: String(info.description ?? ""),
    };
    const software = SOFTWARE_RENDERERS.test(Object.values(described).join(" "));
    const fallback = info.isFallbackAdapter === true || adapter.isFallbackAdapter === true;
    return { ...described, isFallback: fallback || software };
  } catch {
    // A broken driver or a missing permission means: no usable GPU.
    return null;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * True when a WebGPU adapter exists that is not a fallback or software adapter.
 *
 * @example
 * ```ts
 * const device = (await checkGpuAvailable()) ? "webgpu" : "cpu";
 * ```
 */
export async function checkGpuAvailable(options: GpuProbeOptions = {}): Promise<boolean> {
  const info = await getGpuInfo(options);
  return info !== null && !info.isFallback;
}

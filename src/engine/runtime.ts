/**
 * Chooses the ONNX Runtime flavour for this process and loads transformers.js on top of it.
 *
 * - `cpu`: onnxruntime-node, the native addon transformers.js picks under Deno by itself.
 * - `webgpu` / `wasm`: onnxruntime-web, injected through `Symbol.for("onnxruntime")` before
 *   transformers.js is first imported: transformers.js reads that symbol instead of importing
 *   onnxruntime-node. The injection is per process, so one process runs either the native or the
 *   web runtime, never both.
 *
 * @module
 */

import { ConfigurationError } from "../core/errors.ts";
import { getGpuInfo, type GpuInfo } from "../core/system.ts";
import { getLogger } from "../core/logging.ts";
import type { Device, ModelKind } from "../core/inference_types.ts";
import { tuneAllocator } from "./allocator_tuning.ts";

/** transformers.js, as loaded by {@link loadRuntime}. */
export type Transformers = typeof import("@huggingface/transformers");

/** A device after `auto` was resolved. */
export type ResolvedDevice = Exclude<Device, "auto">;

/** What {@link resolveDevice} decided and why. */
export interface DeviceChoice {
  /** The device chosen. */
  device: ResolvedDevice;
  /** Why it was chosen. */
  reason: string;
  /** The GPU adapter found; null when none. */
  gpu: GpuInfo | null;
}

/** Options of {@link resolveDevice}. */
export interface ResolveDeviceOptions {
  /** Accept a software WebGPU adapter (llvmpipe, lavapipe) for `webgpu`; used for CI correctness. */
  allowFallbackAdapter?: boolean;
  /** Finds the WebGPU adapter; injectable for tests. */
  probeGpu?: () => Promise<GpuInfo | null>;
}

/**
 * Resolves `auto` and checks that the requested device can run here.
 * `auto` picks webgpu when a hardware adapter exists, else native cpu (wasm only when the native
 * addon cannot load, which {@link loadRuntime} handles).
 */
export async function resolveDevice(
  requested: Device,
  options: ResolveDeviceOptions = {},
): Promise<DeviceChoice> {
  const probe = options.probeGpu ?? getGpuInfo;
  if (requested === "cpu" || requested === "wasm") {
    return { device: requested, reason: `${requested} was requested`, gpu: null };
  }
  const gpu = await probe();
  if (requested === "webgpu") {
    if (gpu && (!gpu.isFallback || options.allowFallbackAdapter)) {
      return { device: "webgpu", reason: `webgpu was requested; adapter: ${describe(gpu)}`, gpu };
    }
    const found = gpu ? `only a software adapter (${describe(gpu)})` : "no WebGPU adapter";
    throw new ConfigurationError(
      `device 'webgpu' was requested but this machine has ${found}. Use --device cpu, or ` +
        `--allow-fallback-adapter to run WebGPU on a software adapter (slow; for testing).`,
      { param: "device" },
    );
  }
  if (gpu && !gpu.isFallback) {
    return { device: "webgpu", reason: `auto: found GPU adapter ${describe(gpu)}`, gpu };
  }
  const why = gpu ? `only a software WebGPU adapter (${describe(gpu)})` : "no WebGPU adapter";
  return { device: "cpu", reason: `auto: ${why}, using native CPU (onnxruntime-node)`, gpu };
}

function describe(gpu: GpuInfo): string {
  return [gpu.vendor, gpu.architecture, gpu.description].filter(Boolean).join(" ") || "unknown";
}

/** The runtime loaded in this process. */
export interface Runtime {
  transformers: Transformers;
  /** The flavour of ONNX Runtime in use. */
  flavour: "native" | "web";
  /** `device` to pass to transformers.js `from_pretrained` for `device`. */
  deviceOption(device: ResolvedDevice): "cpu" | "auto";
  /** `session_options` to pass to transformers.js for a model of `kind` on `device`. */
  sessionOptions(device: ResolvedDevice, kind: ModelKind): {
    executionProviders?: string[];
    extra?: Record<string, unknown>;
  };
  /** The WebGPU device of the sessions created so far (undefined when none runs on WebGPU). */
  gpuDevice(): Promise<GPUDevice | undefined>;
}

// ORT's pool threads spin between runs by default; on a small machine that takes the cores the
// server's own thread needs to tokenize, sample and stream between runs. Chat sessions never spin.
const NO_SPINNING = {
  intra_op: { allow_spinning: "0" },
  inter_op: { allow_spinning: "0" },
};
// Embedding and rerank runs are short (a few ms at one client), so waking sleeping pool threads
// between operators is a large share of each: their threads spin during a run and stop when it
// returns (bench/RESULTS.md, issue 26: one short text 0.85-0.89x the time of NO_SPINNING; decode
// steps measured no change, so chat keeps NO_SPINNING).
const SPIN_DURING_RUN = {
  intra_op: { allow_spinning: "1" },
  inter_op: { allow_spinning: "1" },
  force_spinning_stop: "1",
};

let loaded: Promise<Runtime> | undefined;
let loadedFlavour: Runtime["flavour"] | undefined;

/**
 * Loads transformers.js with the ONNX Runtime that `device` needs. Call it before anything else
 * imports transformers.js; asking for the other flavour later in the same process is an error.
 */
export function loadRuntime(device: ResolvedDevice): Promise<Runtime> {
  const flavour = device === "cpu" ? "native" : "web";
  if (loadedFlavour !== undefined && loadedFlavour !== flavour) {
    return Promise.reject(
      new ConfigurationError(
        `this process already runs the ${loadedFlavour} ONNX Runtime; device '${device}' needs the ` +
          `${flavour} one. Serve models on different device kinds from separate engine processes.`,
      ),
    );
  }
  loadedFlavour = flavour;
  tuneAllocator();
  loaded ??= flavour === "native" ? loadNative() : loadWeb();
  return loaded;
}

async function loadNative(): Promise<Runtime> {
  const transformers = await import("@huggingface/transformers");
  return {
    transformers,
    flavour: "native",
    deviceOption: () => "cpu",
    sessionOptions: (_device, kind) => ({
      extra: { session: kind === "chat" ? NO_SPINNING : SPIN_DURING_RUN },
    }),
    gpuDevice: () => Promise.resolve(undefined),
  };
}

async function loadWeb(): Promise<Runtime> {
  const ort = await import("onnxruntime-web/webgpu");
  // onnxruntime-web fetches its .wasm next to itself; point it at the package folder so it never
  // reaches for a CDN.
  const distUrl = new URL("./", import.meta.resolve("onnxruntime-web/webgpu")).href;
  ort.env.wasm.wasmPaths = distUrl;
  ort.env.wasm.numThreads = 1;
  ort.env.logLevel = "error";
  // transformers.js' node build hands sessions a file path; the web runtime wants bytes, and the
  // bytes of external weight files too (it cannot open files next to the model by itself).
  const create = ort.InferenceSession.create.bind(ort.InferenceSession);
  const createFromPath = async (model: unknown, options?: { externalData?: unknown[] }) => {
    if (typeof model !== "string") return create(model as never, options as never);
    const [bytes, externalData] = await Promise.all([
      Deno.readFile(model),
      options?.externalData ? Promise.resolve(options.externalData) : readExternalData(model),
    ]);
    const withData = externalData.length > 0 ? { ...options, externalData } : options;
    return create(bytes, withData as never);
  };
  Object.defineProperty(ort.InferenceSession, "create", { value: createFromPath });
  (globalThis as Record<symbol, unknown>)[Symbol.for("onnxruntime")] = ort;
  const transformers = await import("@huggingface/transformers");
  getLogger("engine.runtime").debug("onnxruntime-web injected", { wasmPaths: distUrl });
  return {
    transformers,
    flavour: "web",
    deviceOption: () => "auto",
    // With no usable adapter ORT drops webgpu and runs the WASM provider.
    sessionOptions: (device) => ({
      executionProviders: device === "webgpu" ? ["webgpu", "wasm"] : ["wasm"],
    }),
    // Set by onnxruntime-web when it starts its WebGPU provider (typed as a promise, set as a device).
    gpuDevice: () => Promise.resolve(ort.env.webgpu.device as Promise<GPUDevice | undefined>),
  };
}

/**
 * The external weight files of the ONNX file at `path`, as onnxruntime-web's `externalData`:
 * `model.onnx_data` (with `_1`, `_2`… chunks) or `model.onnx.data`, named as the model refers to
 * them.
 */
export async function readExternalData(
  path: string,
): Promise<{ path: string; data: Uint8Array }[]> {
  const slash = path.lastIndexOf("/");
  const dir = slash >= 0 ? path.slice(0, slash) : ".";
  const file = path.slice(slash + 1);
  const names: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    const rest = entry.name.startsWith(file) ? entry.name.slice(file.length) : null;
    if (entry.isFile && rest !== null && /^(_data(_\d+)?|\.data)$/.test(rest)) {
      names.push(entry.name);
    }
  }
  return await Promise.all(
    names.sort().map(async (name) => ({ path: name, data: await Deno.readFile(`${dir}/${name}`) })),
  );
}

/**
 * A thin, serialized wrapper over one ONNX Runtime session loaded by transformers.js, and the
 * {@link ModelSession} contract the engines run models through.
 *
 * We run sessions ourselves (not through transformers.js' generate/pipeline) so the engine owns
 * batching and the decode loop. Runs are serialized: onnxruntime-web must never run two inferences
 * of one session at once, and for the native runtime one run at a time keeps all cores on it.
 * The engines normally use a session in a worker (worker_session.ts), because onnxruntime-node's
 * `run()` blocks the thread that calls it.
 *
 * @module
 */

import type { Transformers } from "./runtime.ts";
import {
  type DecodeLoop,
  decodeLoopOf,
  type DecodeLoopSpec,
  runSamplingLoop,
} from "./decode_loop.ts";
import { halfBitsToFloat32 } from "../core/float16.ts";
import { type LogitsScoring, type PackedLogprobs, packedLogprobs } from "./decoding/log_softmax.ts";
import { GpuCacheCopies, type GpuTensorClass } from "./gpu_cache_copies.ts";

/** Element types we feed and read. */
export type TensorType = "int64" | "float32" | "float16" | "bool";

/** Name, element type and shape (numbers, or symbolic names like `batch_size`) of a model input. */
export interface TensorInfo {
  name: string;
  type: string;
  shape: readonly (number | string)[];
}

/**
 * A plain tensor: typed data plus dimensions. float16 data is always raw bits in a Uint16Array
 * (onnxruntime-node rejects Float16Array, which onnxruntime-common builds where it exists).
 */
export interface PlainTensor {
  type: TensorType;
  // deno-lint-ignore no-explicit-any
  data: any;
  dims: readonly number[];
  /**
   * Set instead of `data` for an output left on the GPU between decode steps (WebGPU): fed back
   * as it is, never read here.
   */
  device?: DeviceTensor;
}

/** An onnxruntime-web tensor whose data is in a GPU buffer. */
export interface DeviceTensor {
  readonly location: string;
  /** Its GPU buffer (while not disposed, read back or not). */
  readonly gpuBuffer?: unknown;
  getData(releaseData?: boolean): Promise<ArrayBufferView>;
  dispose(): void;
}

/** A model session as the engines use it: in this thread or in a worker. */
export interface ModelSession {
  readonly inputNames: readonly string[];
  readonly outputNames: readonly string[];
  /** Element type and shape of every input, in input order. */
  readonly inputs: readonly TensorInfo[];
  /** True when the model takes an input of this name. */
  has(name: string): boolean;
  /** Runs the model once; inputs the model does not take are dropped. */
  run(feeds: Record<string, PlainTensor>): Promise<Record<string, PlainTensor>>;
  /** Frees the session (and its worker). */
  release(): Promise<void>;
  /**
   * Decoding next to the session, step after step, posting only token ids (see decode_loop.ts).
   * Sessions in a worker have it; the scheduler runs steps itself without.
   */
  decodeLoop?(spec: DecodeLoopSpec): DecodeLoop;
  /**
   * One run whose logits are scored where the session lives (see {@link runScored}): only the
   * scores come back, not positions × vocabulary floats. Sessions in a worker have it.
   */
  runScored?(feeds: Record<string, PlainTensor>, scoring: LogitsScoring): Promise<ScoredRun>;
  /** Copies of cache columns made on the GPU (WebGPU sessions in this thread only). */
  readonly deviceCopies?: DeviceCacheCopies;
}

/** A run's outputs but its logits, and the scores of the logits. */
export interface ScoredRun {
  outputs: Record<string, PlainTensor>;
  scores: PackedLogprobs;
}

/**
 * Runs `session` and scores the `logits` output as `scoring` asks (a prompt's own
 * log-probabilities): in the session's worker when it has one, so the server's thread neither
 * receives tens of MB of logits nor spends a log-softmax over each position's vocabulary.
 *
 * @example
 * ```ts ignore
 * const { scores } = await runScored(session, feeds, { targets: Int32Array.of(5, 9), top: 2 });
 * ```
 */
export async function runScored(
  session: ModelSession,
  feeds: Record<string, PlainTensor>,
  scoring: LogitsScoring,
): Promise<ScoredRun> {
  if (session.runScored) return await session.runScored(feeds, scoring);
  return scoreOutputs(await session.run(feeds), scoring);
}

/** Replaces a run's `logits` output by its scores (the worker's half of {@link runScored}). */
export function scoreOutputs(
  outputs: Record<string, PlainTensor>,
  scoring: LogitsScoring,
): ScoredRun {
  const { logits, ...rest } = outputs;
  return { outputs: rest, scores: packedLogprobs(floatValues(logits), logits.dims, scoring) };
}

/** A cache tensor `[batch, heads, length, headDim]` in memory, float32 or float16 bits. */
export interface CacheColumnsSource {
  data: Float32Array | Uint16Array;
  dims: readonly number[];
}

/** A block of columns of every cache tensor, in one GPU buffer: `[heads, count, headDim]` each. */
export interface GpuBlock {
  readonly count: number;
  /** Frees the buffer (once the copies that read it are on their way). */
  destroy(): void;
}

/**
 * Cache copies made on the GPU, for the prefix cache (prefix_cache.ts) of a WebGPU session: blocks
 * are copied out of a cache the session still holds there, and a hit is put together there from
 * its blocks, so it uploads nothing. A cache fed from memory went to the GPU at ~24 MB/s on an
 * H200 (seconds for a long conversation; bench/RESULTS.md); a copy within the GPU does not cross
 * the bus.
 */
export interface DeviceCacheCopies {
  /**
   * Columns `[start, start + count)` of row `row` of every cache tensor the last run returned
   * (read back into `sources`), copied on the GPU; null when one of them is not there any more.
   */
  slice(
    sources: readonly CacheColumnsSource[],
    row: number,
    start: number,
    count: number,
  ): GpuBlock | null;
  /**
   * The first `count` columns of cache tensor `layer` of each part, one part after the other, into
   * a GPU buffer that the next run takes wherever it is fed `twin` (a batch-1 cache in memory with
   * the same values).
   */
  concat(
    parts: readonly { block: GpuBlock; count: number }[],
    layer: number,
    twin: CacheColumnsSource,
  ): void;
}

/** The part of an ONNX Runtime session we use. */
interface OrtSession {
  inputNames: readonly string[];
  outputNames: readonly string[];
  inputMetadata?: readonly { name: string; isTensor: boolean; type?: string; shape?: unknown[] }[];
  run(feeds: Record<string, unknown>): Promise<Record<string, OrtOutput>>;
  release?(): Promise<void>;
}

/** An output as onnxruntime returns it: on the CPU (`data`) or on the GPU. */
type OrtOutput = PlainTensor & Partial<DeviceTensor>;

const NOTHING_KEPT: ReadonlySet<string> = new Set();

/** Options of an {@link OnnxSession}. */
export interface OnnxSessionOptions {
  /**
   * Outputs that stay on the GPU after they are read back, until the next run ends: fed again as
   * the very array they were read into, they go in from there instead of being uploaded again.
   * For a decoder's cache (`present.*`), so the step after a prefill, a prefill's next chunk and
   * the next decode loop of an unchanged batch take it from the GPU. Callers never write into an
   * array a run returned (the engine copies the cache into new arrays whenever it changes).
   */
  reuseOnGpu?: (outputName: string) => boolean;
  /** The session's GPU device (WebGPU): with it, the session offers {@link DeviceCacheCopies}. */
  gpuDevice?: Promise<GPUDevice | undefined>;
}

/**
 * Serialized access to one session, in the calling thread. A WebGPU session created with its
 * outputs on the GPU (`preferredOutputLocation`, see load_model.ts) keeps the key/value cache
 * there during a decode loop; every other output is read back after each run.
 */
export class OnnxSession implements ModelSession {
  readonly inputNames: readonly string[];
  readonly outputNames: readonly string[];
  readonly inputs: readonly TensorInfo[];
  #session: OrtSession;
  #Tensor: Transformers["Tensor"];
  #tail: Promise<unknown> = Promise.resolve();
  #released: Promise<void> | undefined;
  #reuseOnGpu: (outputName: string) => boolean;
  /**
   * Arrays whose values are also in a GPU buffer, which the next run takes instead of uploading
   * the array: outputs of the last run read back but kept there, and prefix-cache hits put
   * together there. Forgotten when a run ends. A long conversation's cache uploaded again cost
   * seconds on an H200 (bench/RESULTS.md).
   */
  #onGpu = new Map<ArrayBufferView, DeviceTensor>();
  readonly deviceCopies?: GpuCacheCopies;

  constructor(
    session: unknown,
    tensorClass: Transformers["Tensor"],
    options: OnnxSessionOptions = {},
  ) {
    this.#session = session as OrtSession;
    this.#Tensor = tensorClass;
    this.#reuseOnGpu = options.reuseOnGpu ?? (() => false);
    if (options.gpuDevice) {
      this.deviceCopies = new GpuCacheCopies(options.gpuDevice, this.#onGpu);
    }
    this.inputNames = this.#session.inputNames;
    this.outputNames = this.#session.outputNames;
    const metadata = new Map((this.#session.inputMetadata ?? []).map((m) => [m.name, m]));
    this.inputs = this.inputNames.map((name) => {
      const m = metadata.get(name);
      const shape = (m?.shape ?? []).map((d) => typeof d === "number" ? d : String(d));
      return { name, type: m?.type ?? "unknown", shape };
    });
  }

  /** True when the model takes an input of this name. */
  has(name: string): boolean {
    return this.inputNames.includes(name);
  }

  /** Runs the session once; inputs the model does not take are dropped. */
  run(feeds: Record<string, PlainTensor>): Promise<Record<string, PlainTensor>> {
    // Feeds are built when the run's turn comes: what is still on the GPU changes with each run.
    return this.#serialized(() => this.#runOnce(this.#ortFeeds(feeds), NOTHING_KEPT));
  }

  /**
   * Decoding in this thread (decode_loop.ts): between steps the cache stays where the session
   * put it (on the GPU for WebGPU), and only the last step's cache is read back.
   */
  decodeLoop(spec: DecodeLoopSpec): DecodeLoop {
    const kept = new Set(spec.presentNames);
    let held: DeviceTensor[] = [];
    const runner = {
      run: async (feeds: Record<string, PlainTensor>) => {
        const out = await this.#runOnce(this.#ortFeeds(feeds), kept);
        for (const t of held) t.dispose(); // fed to this step, replaced by its outputs
        held = Object.values(out).flatMap((t) => t.device ?? []);
        return out;
      },
    };
    const control = new Int32Array(1);
    return decodeLoopOf(control, (onTokens) =>
      this.#serialized(async () => {
        try {
          const end = await runSamplingLoop(runner, spec, control, onTokens);
          const cache = await this.#readBack(end.cache);
          held = [];
          return { ...end, cache };
        } finally {
          for (const t of held) t.dispose();
        }
      }));
  }

  /** Frees the native session (once, however often called). */
  release(): Promise<void> {
    this.#released ??= this.#tail.then(() => {
      this.#forgetOnGpu();
      return this.#session.release?.();
    });
    return this.#released;
  }

  /** Runs `f` after every run before it. */
  #serialized<T>(f: () => Promise<T>): Promise<T> {
    const result = this.#tail.then(f);
    this.#tail = result.catch(() => undefined);
    return result;
  }

  #ortFeeds(feeds: Record<string, PlainTensor>): Record<string, unknown> {
    this.deviceCopies?.submit(); // what a hit put together on the GPU, before this run reads it
    const ortFeeds: Record<string, unknown> = {};
    for (const name of this.inputNames) {
      const t = feeds[name];
      if (!t) throw new Error(`missing model input '${name}'`);
      if (t.device) {
        ortFeeds[name] = t.device;
        continue;
      }
      const onGpu = this.#onGpu.get(t.data);
      if (onGpu) {
        const gpuTensor = onGpu.constructor as unknown as GpuTensorClass;
        ortFeeds[name] = gpuTensor.fromGpuBuffer(onGpu.gpuBuffer, {
          dataType: t.type,
          dims: t.dims,
        });
        continue;
      }
      const tensor = new this.#Tensor(t.type, t.data, [...t.dims]).ort_tensor as unknown as {
        cpuData: ArrayBufferView;
      };
      // As transformers.js does: onnxruntime-node reads float16 only from a Uint16Array.
      if (t.type === "float16") tensor.cpuData = asRawHalf(tensor.cpuData);
      ortFeeds[name] = tensor;
    }
    return ortFeeds;
  }

  /** One run; outputs named in `kept` stay on the GPU if the session put them there. */
  async #runOnce(
    ortFeeds: Record<string, unknown>,
    kept: ReadonlySet<string>,
  ): Promise<Record<string, PlainTensor>> {
    let outputs: Record<string, OrtOutput>;
    try {
      outputs = await this.#session.run(ortFeeds);
    } finally {
      this.#forgetOnGpu(); // fed to this run, or not wanted by it
    }
    const plain: Record<string, PlainTensor> = {};
    for (const [name, t] of Object.entries(outputs)) {
      const dims = [...t.dims];
      if (!onDevice(t)) plain[name] = plainTensor(t.type, t.data, dims);
      else plain[name] = { type: t.type, data: undefined, dims, device: t };
    }
    const read = Object.entries(plain).filter(([name, t]) => t.device && !kept.has(name));
    return { ...plain, ...await this.#readBack(Object.fromEntries(read)) };
  }

  /**
   * `tensors` with every one left on the GPU read back: its buffer freed, or kept for the next
   * run where {@link OnnxSessionOptions.reuseOnGpu} says so. All at once: each read waits for
   * Deno's next `mapAsync` poll (~12 ms), so 60 cache tensors read one by one cost ~0.7 s and
   * read together ~12 ms.
   */
  async #readBack(tensors: Record<string, PlainTensor>): Promise<Record<string, PlainTensor>> {
    const entries = await Promise.all(
      Object.entries(tensors).map(async ([name, t]) => {
        if (!t.device) return [name, t] as const;
        const reuse = this.#reuseOnGpu(name);
        const read = plainTensor(t.type, await t.device.getData(!reuse), t.dims);
        if (reuse) this.#onGpu.set(read.data, t.device);
        return [name, read] as const;
      }),
    );
    return Object.fromEntries(entries);
  }

  #forgetOnGpu(): void {
    // Copies still to be sent may read these buffers: they go first.
    this.deviceCopies?.submit();
    for (const t of this.#onGpu.values()) t.dispose();
    this.#onGpu.clear();
  }
}

function onDevice(t: OrtOutput): t is OrtOutput & DeviceTensor {
  return t.location === "gpu-buffer";
}

function plainTensor(type: TensorType, data: unknown, dims: readonly number[]): PlainTensor {
  return { type, data: type === "float16" ? asRawHalf(data as ArrayBufferView) : data, dims };
}

/** float16 data as raw bits, whatever typed array holds it. */
function asRawHalf(data: ArrayBufferView): Uint16Array {
  return data instanceof Uint16Array
    ? data
    : new Uint16Array(data.buffer, data.byteOffset, data.byteLength / 2);
}

/** Float32 values of a float32 or float16 tensor (a view for float32, a converted copy else). */
export function floatValues(t: PlainTensor): Float32Array {
  if (t.type === "float32") return t.data as Float32Array;
  if (t.type !== "float16") throw new TypeError(`expected a float tensor, got ${t.type}`);
  return halfBitsToFloat32(t.data as Uint16Array);
}

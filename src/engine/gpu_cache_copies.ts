/**
 * The prefix cache's copies on the GPU of a WebGPU session ({@link DeviceCacheCopies}): blocks
 * copied out of a cache the session still holds there, and hits put together from blocks, with
 * `copyBufferToBuffer` on onnxruntime-web's own device, so the session can take them as inputs.
 *
 * Copies are recorded as they are asked for and sent in one submission before the session runs
 * again or lets a buffer they read go ({@link GpuCacheCopies.submit}): the queue then orders them
 * before any later use of those buffers, ours or onnxruntime's.
 *
 * @module
 */

import type {
  CacheColumnsSource,
  DeviceCacheCopies,
  DeviceTensor,
  GpuColumns,
} from "./onnx_session.ts";

/** The static part of onnxruntime-web's Tensor we use: a tensor over a GPU buffer. */
export interface GpuTensorClass {
  fromGpuBuffer(
    buffer: unknown,
    options: { dataType: string; dims: readonly number[]; dispose?: () => void },
  ): DeviceTensor;
}

/** Columns of one cache tensor in a buffer of their own: `[heads, count, headDim]`. */
class Columns implements GpuColumns {
  constructor(
    readonly buffer: GPUBuffer,
    readonly heads: number,
    readonly count: number,
    /** Bytes of one column of one head (`headDim` elements). */
    readonly columnBytes: number,
    private readonly copies: GpuCacheCopies,
  ) {}

  destroy(): void {
    this.copies.submit(); // copies that read this buffer go first
    this.buffer.destroy();
  }
}

/** {@link DeviceCacheCopies} of one session; `onGpu` is the session's map of arrays fed from the GPU. */
export class GpuCacheCopies implements DeviceCacheCopies {
  #device: GPUDevice | null = null;
  #onGpu: Map<ArrayBufferView, DeviceTensor>;
  #encoder: GPUCommandEncoder | null = null;
  /** onnxruntime-web's Tensor class, from the first tensor of the session's seen here. */
  #tensorClass: GpuTensorClass | null = null;

  constructor(device: Promise<GPUDevice | undefined>, onGpu: Map<ArrayBufferView, DeviceTensor>) {
    // A session on the GPU has its device before its first run; until then nothing is on the GPU.
    device.then((d) => this.#device = d ?? null, () => {});
    this.#onGpu = onGpu;
  }

  slice(source: CacheColumnsSource, row: number, start: number, count: number): GpuColumns | null {
    const held = this.#onGpu.get(source.data);
    const gpuBuffer = held?.gpuBuffer as GPUBuffer | undefined;
    if (this.#device === null || held === undefined || gpuBuffer === undefined) return null;
    const [, heads, width, headDim] = source.dims;
    const columnBytes = headDim * source.data.BYTES_PER_ELEMENT;
    const runBytes = count * columnBytes; // one head's columns
    if (runBytes % 4 !== 0 || count === 0) return null; // copies move whole 4-byte words
    const buffer = this.#buffer(heads * runBytes);
    const encoder = this.#recording();
    for (let h = 0; h < heads; h++) {
      const from = ((row * heads + h) * width + start) * columnBytes;
      encoder.copyBufferToBuffer(gpuBuffer, from, buffer, h * runBytes, runBytes);
    }
    this.#tensorClass ??= held.constructor as unknown as GpuTensorClass;
    return new Columns(buffer, heads, count, columnBytes, this);
  }

  concat(parts: readonly { columns: GpuColumns; count: number }[], twin: CacheColumnsSource): void {
    const all = parts.map((p) => ({ columns: p.columns as Columns, count: p.count }));
    if (this.#device === null || this.#tensorClass === null || all.length === 0) return;
    const { heads, columnBytes } = all[0].columns;
    const tokens = all.reduce((n, p) => n + p.count, 0);
    const buffer = this.#buffer(heads * tokens * columnBytes);
    const encoder = this.#recording();
    for (let h = 0; h < heads; h++) {
      let at = h * tokens * columnBytes;
      for (const { columns, count } of all) {
        const from = h * columns.count * columnBytes;
        encoder.copyBufferToBuffer(columns.buffer, from, buffer, at, count * columnBytes);
        at += count * columnBytes;
      }
    }
    const tensor = this.#tensorClass.fromGpuBuffer(buffer, {
      dataType: twin.data instanceof Uint16Array ? "float16" : "float32",
      dims: twin.dims,
      dispose: () => buffer.destroy(),
    });
    this.#onGpu.set(twin.data, tensor);
  }

  /** Sends the copies recorded so far. */
  submit(): void {
    if (this.#encoder === null) return;
    this.#device!.queue.submit([this.#encoder.finish()]);
    this.#encoder = null;
  }

  #recording(): GPUCommandEncoder {
    return this.#encoder ??= this.#device!.createCommandEncoder();
  }

  /** A buffer onnxruntime can take as an input (its size rounded up as it rounds its own). */
  #buffer(bytes: number): GPUBuffer {
    return this.#device!.createBuffer({
      size: Math.ceil(bytes / 16) * 16,
      usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST,
    });
  }
}

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
  GpuBlock,
} from "./onnx_session.ts";

/** The static part of onnxruntime-web's Tensor we use: a tensor over a GPU buffer. */
export interface GpuTensorClass {
  fromGpuBuffer(
    buffer: unknown,
    options: { dataType: string; dims: readonly number[]; dispose?: () => void },
  ): DeviceTensor;
}

/** A block's buffer: tensor `i`'s `[heads, count, headDim]` at `offsets[i]`. */
class Block implements GpuBlock {
  constructor(
    readonly buffer: GPUBuffer,
    readonly count: number,
    readonly offsets: readonly number[],
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
  /** onnxruntime-web's Tensor class, from the first of the session's tensors seen here. */
  #tensorClass: GpuTensorClass | null = null;

  constructor(device: Promise<GPUDevice | undefined>, onGpu: Map<ArrayBufferView, DeviceTensor>) {
    // A session on the GPU has its device before its first run; until then nothing is on the GPU.
    device.then((d) => this.#device = d ?? null, () => {});
    this.#onGpu = onGpu;
  }

  slice(
    sources: readonly CacheColumnsSource[],
    row: number,
    start: number,
    count: number,
  ): GpuBlock | null {
    const held = sources.map((s) => this.#onGpu.get(s.data)?.gpuBuffer as GPUBuffer | undefined);
    if (this.#device === null || count === 0 || held.includes(undefined)) return null;
    const offsets: number[] = [];
    let size = 0;
    for (const { dims, data } of sources) {
      const runBytes = count * dims[3] * data.BYTES_PER_ELEMENT; // one head's columns
      if (runBytes % 4 !== 0) return null; // copies move whole 4-byte words
      offsets.push(size);
      size += align(dims[1] * runBytes);
    }
    const buffer = this.#buffer(size);
    const encoder = this.#recording();
    sources.forEach(({ dims, data }, i) => {
      const [, heads, width, headDim] = dims;
      const columnBytes = headDim * data.BYTES_PER_ELEMENT;
      for (let h = 0; h < heads; h++) {
        const from = ((row * heads + h) * width + start) * columnBytes;
        const to = offsets[i] + h * count * columnBytes;
        encoder.copyBufferToBuffer(held[i]!, from, buffer, to, count * columnBytes);
      }
    });
    this.#tensorClass ??= this.#onGpu.get(sources[0].data)!
      .constructor as unknown as GpuTensorClass;
    return new Block(buffer, count, offsets, this);
  }

  concat(
    parts: readonly { block: GpuBlock; count: number }[],
    layer: number,
    twin: CacheColumnsSource,
  ): void {
    if (this.#device === null || this.#tensorClass === null || parts.length === 0) return;
    const [, heads, tokens, headDim] = twin.dims;
    const columnBytes = headDim * twin.data.BYTES_PER_ELEMENT;
    const buffer = this.#buffer(heads * tokens * columnBytes);
    const encoder = this.#recording();
    for (let h = 0; h < heads; h++) {
      let at = h * tokens * columnBytes;
      for (const part of parts) {
        const block = part.block as Block;
        const from = block.offsets[layer] + h * block.count * columnBytes;
        encoder.copyBufferToBuffer(block.buffer, from, buffer, at, part.count * columnBytes);
        at += part.count * columnBytes;
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

  /** A buffer onnxruntime can take as an input. */
  #buffer(bytes: number): GPUBuffer {
    return this.#device!.createBuffer({
      size: align(bytes),
      usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST,
    });
  }
}

/** `bytes` rounded up to 16, as onnxruntime rounds its own buffers. */
function align(bytes: number): number {
  return Math.ceil(bytes / 16) * 16;
}

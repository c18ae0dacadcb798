/**
 * A {@link ModelSession} whose ONNX session lives in a worker. onnxruntime's `run()` is a blocking
 * native call; in a worker it blocks only that thread, so the server keeps reading requests,
 * streaming tokens and gathering the next batch while the model runs. Tensors cross the thread
 * boundary by transfer, without copies.
 *
 * The hand-off has a price that is not the message: each leg wakes a thread that was asleep (the
 * worker before the run, the server's thread after it), and on a shared VM a sleeping thread takes
 * ~0.15-0.35 ms to run again (the vCPU halted; bench/embed_handoff.ts). An embedding of one short
 * text pays that twice on a ~5 ms run. So a session may carry a second copy of the model in this
 * thread (`inline`, see {@link WorkerSessionOptions}) and run small calls there while the worker is
 * idle: no thread to wake, as in a naive server; batches that form under load still go to the
 * worker, and nothing else in this thread waits long behind a small run.
 *
 * @module
 */

import { ServiceError } from "../core/errors.ts";
import type { SessionSpec } from "./load_model.ts";
import {
  type ModelSession,
  type PlainTensor,
  runScored,
  type ScoredRun,
  type TensorInfo,
} from "./onnx_session.ts";
import type { LogitsScoring, PackedLogprobs } from "./decoding/log_softmax.ts";
import type { WorkerReply, WorkerRequest } from "./session_worker.ts";
import {
  type DecodeLoop,
  decodeLoopOf,
  type DecodeLoopSpec,
  type LoopEnd,
  type SamplerStates,
} from "./decode_loop.ts";

/**
 * Deno's Web Worker, taken before anything can replace it: onnxruntime-web's emscripten glue, once
 * initialised in this thread (transformers.js' own pipelines, e.g. in tests), sets the global
 * `Worker` to node's worker_threads class, whose workers have no `self`.
 */
const WebWorker: typeof Worker = globalThis.Worker;

interface Pending {
  resolve(
    outputs: Record<string, PlainTensor>,
    extra: { samplers?: SamplerStates; scores?: PackedLogprobs },
  ): void;
  reject(err: unknown): void;
  /** A decode loop's tokens of one step. */
  tokens?(tokens: Int32Array): void;
}

/** Options of {@link WorkerSession.open}. */
export interface WorkerSessionOptions {
  /**
   * The same model, loaded in this thread: runs of at most `inlineMaxTokens` are made here when
   * the worker has nothing in flight. Released with the worker session.
   */
  inline?: ModelSession;
  /** Largest run given to `inline`, in `input_ids` elements (rows × tokens); default 128. */
  inlineMaxTokens?: number;
}

/** Default of {@link WorkerSessionOptions.inlineMaxTokens}. */
export const DEFAULT_INLINE_MAX_TOKENS = 128;

/** Where a {@link WorkerSession}'s runs went. */
export interface WorkerSessionStats {
  /** Runs made by the worker. */
  workerRuns: number;
  /** Small runs made in this thread by the inline session. */
  inlineRuns: number;
}

/** A session run in a dedicated worker. */
export class WorkerSession implements ModelSession {
  readonly inputNames: readonly string[];
  readonly outputNames: readonly string[];
  readonly inputs: readonly TensorInfo[];
  #worker: Worker;
  #pending = new Map<number, Pending>();
  #nextId = 0;
  #released: Promise<void> | undefined;
  #dead: Error | undefined;
  #inline: ModelSession | undefined;
  #inlineMaxTokens: number;
  #stats: WorkerSessionStats = { workerRuns: 0, inlineRuns: 0 };

  private constructor(
    worker: Worker,
    names: { inputNames: string[]; outputNames: string[]; inputs: TensorInfo[] },
    options: WorkerSessionOptions,
  ) {
    this.#worker = worker;
    this.#inline = options.inline;
    this.#inlineMaxTokens = options.inlineMaxTokens ?? DEFAULT_INLINE_MAX_TOKENS;
    this.inputNames = names.inputNames;
    this.outputNames = names.outputNames;
    this.inputs = names.inputs;
    worker.onmessage = ({ data }: MessageEvent<WorkerReply>) => this.#receive(data);
    worker.onerror = (event) => {
      event.preventDefault();
      this.#die(new ServiceError(`the model worker crashed: ${event.message}`));
    };
  }

  /**
   * Starts a worker and loads the session of `spec` in it. If it fails, `options.inline` is
   * released.
   */
  static open(spec: SessionSpec, options: WorkerSessionOptions = {}): Promise<WorkerSession> {
    const worker = new WebWorker(new URL("./session_worker.ts", import.meta.url), {
      type: "module",
    });
    return new Promise((resolve, reject) => {
      // A plain error: loadModel() wraps it with what to try.
      const fail = (message: string) => {
        worker.terminate();
        const error = new Error(message);
        const released = options.inline?.release() ?? Promise.resolve();
        released.then(() => reject(error), () => reject(error));
      };
      worker.onmessage = ({ data }: MessageEvent<WorkerReply>) => {
        if (data.type === "loaded") resolve(new WorkerSession(worker, data, options));
        else if (data.type === "failed") fail(data.message);
      };
      worker.onerror = (event) => {
        event.preventDefault();
        fail(`the model worker failed to start: ${event.message}`);
      };
      worker.postMessage({ type: "load", spec } satisfies WorkerRequest);
    });
  }

  has(name: string): boolean {
    return this.inputNames.includes(name);
  }

  /** Where the runs went so far. */
  stats(): WorkerSessionStats {
    return { ...this.#stats };
  }

  run(feeds: Record<string, PlainTensor>): Promise<Record<string, PlainTensor>> {
    if (this.#runsInline(feeds)) return this.#inline!.run(feeds);
    return this.#post(feeds, undefined, (outputs) => outputs);
  }

  /** A run whose logits are scored in the worker (onnx_session.ts `runScored`). */
  runScored(feeds: Record<string, PlainTensor>, scoring: LogitsScoring): Promise<ScoredRun> {
    if (this.#runsInline(feeds)) return runScored(this.#inline!, feeds, scoring);
    return this.#post(feeds, scoring, (outputs, scores) => ({ outputs, scores: scores! }));
  }

  // Small and the worker idle: run here (counted), with no thread to wake either way. A run in
  // flight in the worker means load; the two sessions must not then share the cores.
  #runsInline(feeds: Record<string, PlainTensor>): boolean {
    if (this.#dead || this.#released || !this.#inline) return false;
    if (this.#pending.size > 0 || tokensOf(feeds) > this.#inlineMaxTokens) return false;
    this.#stats.inlineRuns++;
    return true;
  }

  #post<T>(
    feeds: Record<string, PlainTensor>,
    scoring: LogitsScoring | undefined,
    answer: (outputs: Record<string, PlainTensor>, scores?: PackedLogprobs) => T,
  ): Promise<T> {
    if (this.#dead) return Promise.reject(this.#dead);
    if (this.#released) return Promise.reject(new ServiceError("the model session was released"));
    this.#stats.workerRuns++;
    const id = this.#nextId++;
    let plain: Record<string, PlainTensor>;
    try {
      plain = this.#inputs(feeds);
    } catch (err) {
      return Promise.reject(err);
    }
    return new Promise((resolve, reject) => {
      this.#pending.set(id, {
        resolve: (outputs, { scores }) => resolve(answer(outputs, scores)),
        reject,
      });
      // The inputs are handed over: the caller must not reuse their arrays afterwards.
      this.#worker.postMessage(
        { type: "run", id, feeds: plain, ...(scoring ? { scoring } : {}) } satisfies WorkerRequest,
        transferablesOf(plain),
      );
    });
  }

  /** Decoding in the worker (decode_loop.ts); the feeds' arrays are handed over. */
  decodeLoop(spec: DecodeLoopSpec): DecodeLoop {
    const control = new Int32Array(new SharedArrayBuffer(4));
    return decodeLoopOf(control, (onTokens) =>
      new Promise<LoopEnd>((resolve, reject) => {
        if (this.#dead || this.#released) {
          throw this.#dead ?? new ServiceError("the model session was released");
        }
        const id = this.#nextId++;
        const feeds = this.#inputs(spec.feeds);
        this.#pending.set(id, {
          tokens: onTokens,
          resolve: (cache, { samplers }) => resolve({ cache, samplers: samplers ?? [] }),
          reject,
        });
        this.#worker.postMessage(
          {
            type: "loop",
            id,
            spec: { ...spec, feeds },
            control: control.buffer as SharedArrayBuffer,
          } satisfies WorkerRequest,
          transferablesOf(feeds),
        );
      }));
  }

  /** The model's inputs among `feeds`, as plain tensors. */
  #inputs(feeds: Record<string, PlainTensor>): Record<string, PlainTensor> {
    const plain: Record<string, PlainTensor> = {};
    for (const name of this.inputNames) {
      const t = feeds[name];
      if (!t) throw new Error(`missing model input '${name}'`);
      plain[name] = { type: t.type, data: t.data, dims: [...t.dims] };
    }
    return plain;
  }

  release(): Promise<void> {
    this.#released ??= Promise.all([
      this.#releaseWorker(),
      this.#inline?.release(),
    ]).then(() => undefined);
    return this.#released;
  }

  #releaseWorker(): Promise<void> {
    return new Promise<void>((resolve) => {
      if (this.#dead) return resolve();
      const done = () => {
        this.#worker.terminate();
        resolve();
      };
      this.#worker.onmessage = ({ data }: MessageEvent<WorkerReply>) => {
        if (data.type === "released" || data.type === "failed") done();
        else this.#receive(data);
      };
      this.#worker.postMessage({ type: "release" } satisfies WorkerRequest);
    });
  }

  #receive(data: WorkerReply): void {
    if (data.type === "tokens") return this.#pending.get(data.id)?.tokens?.(data.tokens);
    const ends = data.type === "result" || data.type === "loopEnd" ||
      (data.type === "failed" && data.id !== undefined);
    if (!ends) return;
    const pending = this.#pending.get(data.id!);
    if (!pending) return;
    this.#pending.delete(data.id!);
    if (data.type === "failed") {
      pending.reject(new ServiceError(`model run failed: ${data.message}`));
    } else if (data.type === "loopEnd") pending.resolve(data.outputs, { samplers: data.samplers });
    else pending.resolve(data.outputs, { scores: data.scores });
  }

  #die(err: Error): void {
    this.#dead = err;
    for (const p of this.#pending.values()) p.reject(err);
    this.#pending.clear();
    this.#worker.terminate();
  }
}

/** Elements of `input_ids` (rows × tokens), or of the first feed when there is none. */
function tokensOf(feeds: Record<string, PlainTensor>): number {
  const t = feeds.input_ids ?? Object.values(feeds)[0];
  return t ? t.dims.reduce((n, d) => n * d, 1) : 0;
}

/** The distinct array buffers behind `tensors`, for a zero-copy `postMessage`. */
export function transferablesOf(tensors: Record<string, PlainTensor>): ArrayBuffer[] {
  const buffers = new Set<ArrayBuffer>();
  for (const t of Object.values(tensors)) {
    const buffer = (t.data as ArrayBufferView).buffer;
    if (buffer instanceof ArrayBuffer && buffer.byteLength > 0) buffers.add(buffer);
  }
  return [...buffers];
}

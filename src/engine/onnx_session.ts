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

/** Element types we feed and read. */
export type TensorType = "int64" | "float32" | "float16" | "bool";

/** A plain tensor: typed data plus dimensions. */
export interface PlainTensor {
  type: TensorType;
  // deno-lint-ignore no-explicit-any
  data: any;
  dims: readonly number[];
}

/** A model session as the engines use it: in this thread or in a worker. */
export interface ModelSession {
  readonly inputNames: readonly string[];
  readonly outputNames: readonly string[];
  /** True when the model takes an input of this name. */
  has(name: string): boolean;
  /** Runs the model once; inputs the model does not take are dropped. */
  run(feeds: Record<string, PlainTensor>): Promise<Record<string, PlainTensor>>;
  /** Frees the session (and its worker). */
  release(): Promise<void>;
}

/** The part of an ONNX Runtime session we use. */
interface OrtSession {
  inputNames: readonly string[];
  outputNames: readonly string[];
  run(feeds: Record<string, unknown>): Promise<Record<string, PlainTensor>>;
  release?(): Promise<void>;
}

/** Serialized access to one session, in the calling thread. */
export class OnnxSession implements ModelSession {
  readonly inputNames: readonly string[];
  readonly outputNames: readonly string[];
  #session: OrtSession;
  #Tensor: Transformers["Tensor"];
  #tail: Promise<unknown> = Promise.resolve();

  constructor(session: unknown, tensorClass: Transformers["Tensor"]) {
    this.#session = session as OrtSession;
    this.#Tensor = tensorClass;
    this.inputNames = this.#session.inputNames;
    this.outputNames = this.#session.outputNames;
  }

  /** True when the model takes an input of this name. */
  has(name: string): boolean {
    return this.inputNames.includes(name);
  }

  /** Runs the session once; inputs the model does not take are dropped. */
  run(feeds: Record<string, PlainTensor>): Promise<Record<string, PlainTensor>> {
    const ortFeeds: Record<string, unknown> = {};
    for (const name of this.inputNames) {
      const t = feeds[name];
      if (!t) throw new Error(`missing model input '${name}'`);
      ortFeeds[name] = new this.#Tensor(t.type, t.data, [...t.dims]).ort_tensor;
    }
    const result = this.#tail.then(() => this.#session.run(ortFeeds));
    this.#tail = result.catch(() => undefined);
    return result;
  }

  /** Frees the native session. */
  async release(): Promise<void> {
    await this.#tail;
    await this.#session.release?.();
  }
}

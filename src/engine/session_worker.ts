/**
 * Worker side of {@link WorkerSession}: holds one ONNX session and runs it when asked, so the
 * blocking native `run()` never stalls the server's thread. Messages:
 * `load` → `loaded`/`failed`; `run` → `result`/`failed`; `loop` → `tokens`… then
 * `loopEnd`/`failed` (decode_loop.ts); `release` → `released`.
 *
 * @module
 */

import { loadSession, type SessionSpec } from "./load_model.ts";
import {
  type OnnxSession,
  type PlainTensor,
  scoreOutputs,
  type TensorInfo,
} from "./onnx_session.ts";
import type { LogitsScoring, PackedLogprobs } from "./decoding/log_softmax.ts";
import { transferablesOf } from "./worker_session.ts";
import { type DecodeLoopSpec, runSamplingLoop, type SamplerStates } from "./decode_loop.ts";

/** Messages the worker takes. */
export type WorkerRequest =
  | { type: "load"; spec: SessionSpec }
  | {
    type: "run";
    id: number;
    feeds: Record<string, PlainTensor>;
    /** Score the logits here and send the scores instead (onnx_session.ts `runScored`). */
    scoring?: LogitsScoring;
  }
  | {
    type: "loop";
    id: number;
    spec: DecodeLoopSpec;
    /** An Int32Array's buffer: the main thread sets [0] to end the loop. */
    control: SharedArrayBuffer;
  }
  | { type: "release" };

/** Messages the worker sends. */
export type WorkerReply =
  | { type: "loaded"; inputNames: string[]; outputNames: string[]; inputs: TensorInfo[] }
  | { type: "result"; id: number; outputs: Record<string, PlainTensor>; scores?: PackedLogprobs }
  | { type: "tokens"; id: number; tokens: Int32Array }
  | { type: "loopEnd"; id: number; outputs: Record<string, PlainTensor>; samplers: SamplerStates }
  | { type: "failed"; id?: number; message: string; name: string }
  | { type: "released" };

const scope = self as unknown as {
  postMessage(message: WorkerReply, transfer?: Transferable[]): void;
  onmessage: ((event: MessageEvent<WorkerRequest>) => void) | null;
};
let session: OnnxSession | undefined;

// onnxruntime-web (bundled inside transformers.js' node build) resolves its files against
// `location.origin` when a `location` exists; a worker's file: location has the origin "null",
// which breaks that. The main thread has no `location`, so the worker gets none either.
Object.defineProperty(globalThis, "location", { value: undefined, configurable: true });

scope.onmessage = async ({ data }) => {
  try {
    if (data.type === "load") {
      session = await loadSession(data.spec);
      scope.postMessage({
        type: "loaded",
        inputNames: [...session.inputNames],
        outputNames: [...session.outputNames],
        inputs: session.inputs.map((i) => ({ ...i, shape: [...i.shape] })),
      });
    } else if (data.type === "run") {
      const outputs = await session!.run(data.feeds);
      if (data.scoring) {
        const scored = scoreOutputs(outputs, data.scoring);
        const { logprob, topIds, topLogprobs } = scored.scores;
        const scores = [logprob, topIds, topLogprobs].map((a) => a.buffer as ArrayBuffer);
        scope.postMessage(
          { type: "result", id: data.id, ...scored },
          [...transferablesOf(scored.outputs), ...scores],
        );
      } else {
        scope.postMessage({ type: "result", id: data.id, outputs }, transferablesOf(outputs));
      }
    } else if (data.type === "loop") {
      const { id } = data;
      const control = new Int32Array(data.control);
      const end = await runSamplingLoop(session!, data.spec, control, (tokens) => {
        scope.postMessage({ type: "tokens", id, tokens }); // copied: the loop still reads them
      });
      const { cache: outputs, samplers } = end;
      scope.postMessage({ type: "loopEnd", id, outputs, samplers }, transferablesOf(outputs));
    } else {
      await session?.release();
      scope.postMessage({ type: "released" });
    }
  } catch (err) {
    const id = data.type === "run" || data.type === "loop" ? data.id : undefined;
    const e = err instanceof Error ? err : new Error(String(err));
    scope.postMessage({ type: "failed", id, message: e.message, name: e.name });
  }
};

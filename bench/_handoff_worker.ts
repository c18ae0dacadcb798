/**
 * The engine's model worker (`src/engine/session_worker.ts`) with each leg of a run timestamped,
 * for `embed_handoff.ts`: when the request arrived, when onnxruntime's `run` was called, when its
 * native run started and ended (onnxruntime-node defers it with `setImmediate`) and when the
 * result was posted. Epoch ms (`performance.timeOrigin + performance.now()`), written to a shared
 * array the main thread passes in a `{type: "handoff-probe"}` message.
 *
 * @module
 */

import "../src/engine/session_worker.ts";
import * as ort from "onnxruntime-node";

/** Slots of the shared array (embed_handoff.ts has the same table). */
const LEG = { received: 0, ortCalled: 1, nativeStart: 2, nativeEnd: 3, posted: 4 } as const;

const now = () => performance.timeOrigin + performance.now();
let stamps: Float64Array | undefined;

// deno-lint-ignore no-explicit-any
const proto = (ort.InferenceSession as any).prototype;
const run = proto.run;
proto.run = function (...args: unknown[]) {
  if (stamps) stamps[LEG.ortCalled] = now();
  return run.apply(this, args);
};
const setImmediate = globalThis.setImmediate;
// deno-lint-ignore no-explicit-any
(globalThis as any).setImmediate = (cb: (...a: unknown[]) => void, ...args: unknown[]) =>
  setImmediate(() => {
    if (stamps) stamps[LEG.nativeStart] = now();
    cb(...args);
    if (stamps) stamps[LEG.nativeEnd] = now();
  });

// deno-lint-ignore no-explicit-any
const scope = self as any;
const handle = scope.onmessage;
scope.onmessage = (event: MessageEvent) => {
  if (event.data?.type === "handoff-probe") {
    stamps = new Float64Array(event.data.stamps);
    return;
  }
  if (stamps) stamps[LEG.received] = now();
  handle(event);
};
const post = scope.postMessage.bind(scope);
scope.postMessage = (message: unknown, transfer?: Transferable[]) => {
  if (stamps) stamps[LEG.posted] = now();
  post(message, transfer);
};

// A model session that delegates to another, with some methods replaced: how tests watch or
// break the calls an engine makes without stubbing the model.
import type { ModelSession } from "../../src/engine/onnx_session.ts";

/** `inner`, every method delegated to it, except those `overrides` replaces. */
export function wrappedSession(
  inner: ModelSession,
  overrides: Partial<Pick<ModelSession, "run" | "decodeLoop" | "runScored">>,
): ModelSession {
  return {
    inputNames: inner.inputNames,
    outputNames: inner.outputNames,
    inputs: inner.inputs,
    has: (name) => inner.has(name),
    run: (feeds) => inner.run(feeds),
    release: () => inner.release(),
    decodeLoop: inner.decodeLoop?.bind(inner),
    runScored: inner.runScored?.bind(inner),
    ...overrides,
  };
}

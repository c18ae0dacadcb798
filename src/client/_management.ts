// The client's use of the gateway's management API: start or reuse an engine for a model, then
// poll it until it is ready, failed, or the time is up.
import { CancelledError, ServiceError } from "../core/errors.ts";
import { parseDtype } from "../engine/dtype.ts";
import type { ClientHttp, HttpTarget } from "./_http.ts";
import type { EngineKind } from "../core/model_kind.ts";
import type { EngineStartOptions } from "./types.ts";
import { sleep } from "../core/sleep.ts";

/** The engine once ready. */
export interface ReadyEngine {
  id: string;
  kind: EngineKind;
  /** Model ids the engine serves. */
  models: string[];
  reused: boolean;
}

interface WireEngineView {
  id: string;
  kind: string;
  state: string;
  message: string | null;
  models?: string[];
  reused?: boolean;
}

/** Starts (or reuses) an engine through `POST /v1/management/engines` and waits until ready. */
export async function startEngineAndWait(
  http: ClientHttp,
  target: HttpTarget,
  model: string,
  options: EngineStartOptions = {},
): Promise<ReadyEngine> {
  const started = Date.now();
  const timeoutMs = options.readyTimeoutMs ?? 600_000;
  const body: Record<string, unknown> = { model };
  if (options.kind !== undefined) body.kind = options.kind;
  if (options.device !== undefined) body.device = options.device;
  // Checked here too, so a wrong value fails before any request, naming the choices.
  if (options.dtype !== undefined) body.dtype = parseDtype(options.dtype);
  let view = await http.json<WireEngineView>(target, "/management/engines", {
    method: "POST",
    body,
    signal: options.signal,
  });
  const reused = view.reused === true;
  const id = view.id;
  let last = "";
  const report = () => {
    const key = `${view.state}\u0000${view.message ?? ""}`;
    if (key === last) return;
    last = key;
    options.onProgress?.({
      engineId: id,
      state: view.state,
      message: view.message ?? null,
      reused,
      elapsedMs: Date.now() - started,
    });
  };
  report();
  while (view.state !== "ready") {
    if (view.state === "error" || view.state === "stopped") {
      throw new ServiceError(
        `the engine '${id}' for model '${model}' could not start (${view.state}): ` +
          `${view.message ?? "no message"}; check the model id and the gateway's log`,
        { code: "engine_failed" },
      );
    }
    if (Date.now() - started > timeoutMs) {
      throw new ServiceError(
        `the engine '${id}' for model '${model}' was not ready within ${timeoutMs} ms ` +
          `(state ${view.state}); raise readyTimeoutMs or check the gateway's log`,
        { code: "engine_not_ready", status: 504 },
      );
    }
    await sleep(options.pollIntervalMs ?? 250, options.signal);
    if (options.signal?.aborted) throw new CancelledError("waiting for the engine was cancelled");
    view = await http.json<WireEngineView>(
      target,
      `/management/engines/${encodeURIComponent(id)}`,
      { signal: options.signal },
    );
    report();
  }
  return {
    id,
    kind: view.kind === "embedding" ? "embedding" : "chat",
    models: view.models ?? [],
    reused,
  };
}

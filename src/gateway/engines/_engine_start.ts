/**
 * Starting engines for the manager: a live engine that serves the model is reused, else a new
 * one starts in its own supervised process (on a port chosen here, and stored to start again with
 * the gateway) or in the gateway's process.
 *
 * @module
 */
import { ValidationError } from "../../core/errors.ts";
import { importLazily } from "../../core/lazy_module.ts";
import type { EngineKind } from "../../core/model_kind.ts";
import { EngineSupervisor } from "./engine_supervisor.ts";
import type { InGatewayEngineFactory } from "./engine_runner.ts";
import type { EngineManagerOptions, EngineView, StartEngineRequest } from "./engine_types.ts";
import { choosePort, type EngineRecord, engineView, guessKind } from "./_engine_util.ts";
import { checkOpen, type ManagerContext, persist } from "./_manager_context.ts";
import { EngineIdTakenError } from "./engine_store.ts";
import { GENERATED_ID_TRIES } from "./_engine_records.ts";
import { followRunnerState } from "./_started_engine_backend.ts";

/** An engine started, or the live one reused (`created: false`). */
export interface StartResult {
  /** The engine. */
  engine: EngineView;
  /** Whether it was started for this request. */
  created: boolean;
}

/**
 * Starts an engine for `request` now (the manager orders the calls), or returns a live one that
 * serves it. `restoring`: the engine is one of the store, started again with the gateway.
 */
export async function startEngineNow(
  ctx: ManagerContext,
  request: StartEngineRequest,
  restoring?: { createdAt: number },
): Promise<StartResult> {
  checkOpen(ctx);
  const kind = request.kind ?? guessKind(request.model);
  const model = request.model ?? null;
  if (request.reuse !== false) {
    const existing = ctx.records.findServing(kind, model, request.dtype, request.placement);
    if (existing) return { engine: engineView(existing), created: false };
  }
  if (request.id !== undefined) ctx.records.checkIdFree(request.id);
  if (request.placement === "gateway") return await startInGateway(ctx, request, kind, model);
  return await startInProcess(ctx, request, kind, model, restoring);
}

// An engine in its own process, run by a supervisor that restarts it.
async function startInProcess(
  ctx: ManagerContext,
  request: StartEngineRequest,
  kind: EngineKind,
  model: string | null,
  restoring?: { createdAt: number },
): Promise<StartResult> {
  const { options, records } = ctx;
  const hostname = options.hostname ?? "127.0.0.1";
  const port = await choosePort(kind, request.port, {
    host: hostname,
    reserved: ctx.reservedPorts,
    candidates: options.portCandidates,
  });
  // An id made up here may be taken in a store shared with gateways on other hosts (their
  // engines are not ours to see): the next free one will do. A given id is the user's to change.
  const base = `${kind}-${port}`;
  const taken = new Set<string>();
  let id = request.id ?? records.freeId(base, taken);
  for (let tries = 1;; tries++) {
    records.checkIdFree(id);
    const rec = managedRecord(ctx, request, { id, kind, model, port, hostname }, restoring);
    records.set(rec);
    ctx.reservedPorts.add(port);
    records.prune();
    if (rec.stored && !restoring) {
      try {
        await persist(ctx);
      } catch (err) {
        records.delete(id);
        ctx.reservedPorts.delete(port);
        const retry = request.id === undefined && tries < GENERATED_ID_TRIES &&
          err instanceof EngineIdTakenError && err.id === id;
        if (!retry) throw err;
        taken.add(id);
        id = records.freeId(base, taken);
        continue;
      }
    }
    rec.supervisor!.start().catch(() => {}); // the state and message tell the outcome
    return { engine: engineView(rec), created: true };
  }
}

// The record of an engine in its own process, with its supervisor (not started yet).
function managedRecord(
  ctx: ManagerContext,
  request: StartEngineRequest,
  where: { id: string; kind: EngineKind; model: string | null; port: number; hostname: string },
  restoring?: { createdAt: number },
): EngineRecord {
  const { options } = ctx;
  const { id, kind, model, port, hostname } = where;
  const device = request.device ?? options.device;
  const createdAt = restoring?.createdAt ?? Math.floor(Date.now() / 1000);
  const rec: EngineRecord = {
    id,
    origin: "managed",
    kind,
    model,
    createdAt,
    port,
    device: device ?? null,
    draining: false,
    stopped: false,
  };
  if (request.persist !== false) {
    rec.stored = {
      origin: "managed",
      id,
      kind,
      model,
      device,
      dtype: request.dtype,
      port,
      createdAt,
    };
  }
  rec.supervisor = new EngineSupervisor({
    ...loadSpec(request, device, options),
    kind,
    hostname,
    port,
    ...(kind === "chat" ? { prefixCacheMib: options.prefixCacheMib } : {}),
    apiKey: options.engineApiKey,
    httpLimits: options.httpLimits,
  }, {
    ...options.supervisor,
    logger: ctx.logger,
    onStateChange: (state) => followRunnerState(ctx, rec, state),
    onOutput: (line) => options.onOutput?.(id, line),
  });
  return rec;
}

// An engine in this process: no port, no supervisor, not stored (see EnginePlacement).
async function startInGateway(
  ctx: ManagerContext,
  request: StartEngineRequest,
  kind: EngineKind,
  model: string | null,
): Promise<StartResult> {
  if (kind !== "embedding") {
    throw new ValidationError(
      `only embedding engines run in the gateway's process; a ${kind} engine needs its own ` +
        "(leave placement out)",
      { param: "placement", code: "invalid_placement" },
    );
  }
  if (request.port !== undefined) {
    throw new ValidationError(
      "an engine in the gateway's process has no port; leave port out or placement as process",
      { param: "port", code: "invalid_placement" },
    );
  }
  const { options, records } = ctx;
  const id = request.id ?? records.freeId(`${kind}-in-gateway`);
  records.checkIdFree(id);
  const device = request.device ?? options.device;
  const rec: EngineRecord = {
    id,
    origin: "managed",
    placement: "gateway",
    kind,
    model,
    createdAt: Math.floor(Date.now() / 1000),
    port: null,
    device: device ?? null,
    draining: false,
    stopped: false,
  };
  const { createInGatewayEngine } = await importLazily<
    { createInGatewayEngine: InGatewayEngineFactory }
  >(new URL("./in_gateway_engine.ts", import.meta.url));
  rec.supervisor = createInGatewayEngine({
    ...loadSpec(request, device, options),
    id,
    kind,
    maxBodyBytes: options.httpLimits?.maxBodyBytes,
  }, { logger: ctx.logger, onStateChange: (state) => followRunnerState(ctx, rec, state) });
  records.set(rec);
  records.prune();
  rec.supervisor.start().catch(() => {}); // the state and message tell the outcome
  return { engine: engineView(rec), created: true };
}

// What an engine loads and how, wherever it runs.
function loadSpec(
  request: StartEngineRequest,
  device: string | undefined,
  options: EngineManagerOptions,
) {
  return {
    model: request.model,
    ...(request.rerank ? { rerank: request.rerank } : {}),
    device,
    allowFallbackAdapter: options.allowFallbackAdapter,
    dtype: request.dtype,
    offline: options.offline,
    home: options.home,
    hubEndpoint: options.hubEndpoint,
    limits: options.engineLimits,
  };
}

/**
 * What a started engine's state changes do to the gateway: once ready it becomes a backend of the
 * dispatcher (healthy again after a restart), while it restarts it is unhealthy, when it fails it
 * leaves the dispatcher and the store, and once it is down its port is free.
 *
 * @module
 */
import { errorMessage } from "../../core/errors.ts";
import { backendKindOf } from "../../core/model_kind.ts";
import type { SupervisorState } from "./engine_supervisor.ts";
import { MANAGED_MAX_CONCURRENCY } from "./engine_types.ts";
import { type EngineRecord, engineView } from "./_engine_util.ts";
import { type ManagerContext, persist } from "./_manager_context.ts";

/** Brings the gateway in step with `state`, the new state of `rec`'s runner. */
export function followRunnerState(
  ctx: ManagerContext,
  rec: EngineRecord,
  state: SupervisorState,
): void {
  const { dispatcher, options, logger } = ctx;
  const sup = rec.supervisor!;
  if (state === "ready") {
    if (rec.backend === undefined) {
      const served = [...sup.models];
      const aliases: Record<string, string> = {};
      if (rec.model !== null && !served.includes(rec.model) && served.length > 0) {
        aliases[rec.model] = served[0];
      }
      try {
        rec.backend = dispatcher.addBackend({
          id: rec.id,
          baseUrl: sup.baseUrl,
          kind: backendKindOf(rec.kind),
          models: served.length > 0 ? served : [rec.model ?? rec.id],
          aliases,
          apiKey: sup.transport ? null : options.engineApiKey ?? null,
          maxConcurrency: options.managedMaxConcurrency ?? MANAGED_MAX_CONCURRENCY[rec.kind],
          local: true,
        }, { transport: sup.transport });
      } catch (err) {
        logger.error("could not add a started engine to the gateway", {
          engine: rec.id,
          error: errorMessage(err),
        });
        return;
      }
    }
    // A restarted process owes nothing to the one that crashed: the supervisor has just seen it
    // ready, so its circuit starts closed and late probe answers about the old one are ignored.
    rec.backend.restarted();
    logger.info?.(`engine ${rec.id} is ready`, { models: sup.models, pid: sup.pid });
    options.onReady?.(engineView(rec));
  } else if (state === "restarting" && rec.backend) {
    rec.backend.setHealth("unhealthy", sup.message ?? "restarting");
  } else if (state === "error") {
    if (rec.backend && !rec.draining) dispatcher.removeBackend(rec.id);
    // One that cannot start or gave up restarting is not tried again at the next start.
    if (rec.stored && !ctx.closed) {
      rec.stored = undefined;
      persist(ctx).catch((err) =>
        logger.warn("could not update the engine state file", { error: String(err) })
      );
    }
  }
  if ((state === "error" || state === "stopped") && rec.port !== null && !rec.draining) {
    ctx.reservedPorts.delete(rec.port);
  }
}

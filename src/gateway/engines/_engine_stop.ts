/**
 * Stopping an engine: no new requests go to it, those running finish (up to a drain timeout), a
 * started engine's runner stops and frees its port, and an engine stopped by request (not with
 * the gateway) leaves the store.
 *
 * @module
 */
import type { EngineView } from "./engine_types.ts";
import { drained, type EngineRecord, engineView } from "./_engine_util.ts";
import { type ManagerContext, persist } from "./_manager_context.ts";

/** Drains and stops `rec`; resolves with its view once it is stopped (and saved). */
export async function stopEngine(
  ctx: ManagerContext,
  rec: EngineRecord,
  drainTimeoutMs: number,
): Promise<EngineView> {
  rec.draining = true;
  const backend = rec.backend;
  if (backend !== undefined) {
    ctx.dispatcher.removeBackend(rec.id);
    await drained(backend, drainTimeoutMs);
  }
  if (rec.supervisor) await rec.supervisor.stop();
  rec.stopped = true;
  rec.draining = false;
  if (rec.port !== null) ctx.reservedPorts.delete(rec.port);
  // Stopped by request: forgotten. Stopped with the gateway: it comes back with it.
  if (rec.stored && !ctx.closed) return await saveStopped(ctx, rec);
  return engineView(rec);
}

/** Saves the store without `rec`, stopped by request (`unsaved` until that worked). */
export async function saveStopped(ctx: ManagerContext, rec: EngineRecord): Promise<EngineView> {
  rec.unsaved = true;
  await persist(ctx);
  rec.unsaved = false;
  return engineView(rec);
}

/**
 * The engines of the store, brought back when the gateway starts (remote ones registered again,
 * started ones started again) and kept in step with the changes other gateway replicas sharing
 * the store make to its remote engines.
 *
 * @module
 */
import { ConflictError, errorMessage } from "../../core/errors.ts";
import type { StoredEngine, StoredManagedEngine, StoredRemoteEngine } from "./engine_store.ts";
import type { EngineView, StartEngineRequest } from "./engine_types.ts";
import { engineView } from "./_engine_util.ts";
import { type ManagerContext, persist } from "./_manager_context.ts";
import { startEngineNow } from "./_engine_start.ts";
import { addRemoteEngine } from "./_remote_registration.ts";

/**
 * Registers again the remote engines of the store and starts again the started ones (on their old
 * port when it is free; not with `remoteOnly`). Bad entries are logged and skipped.
 */
export async function restoreEngines(ctx: ManagerContext): Promise<EngineView[]> {
  const { options, records } = ctx;
  // A gateway that starts no engines (`svc llm gateway` on a store shared with `svc llm serve`)
  // neither starts copies of another gateway's engines nor removes their rows.
  const remoteOnly = options.remoteOnly === true;
  const stored = await options.store?.load({ claimStarted: !remoteOnly }) ?? [];
  const out: EngineView[] = [];
  for (const entry of stored) {
    try {
      if (entry.origin === "managed") {
        if (remoteOnly) continue;
        out.push(await restart(ctx, entry));
        continue;
      }
      out.push(engineView(addRemoteEngine(ctx, entry)));
    } catch (err) {
      ctx.logger.warn("a stored engine could not be registered again; skipped", {
        engine: entry.id,
        error: errorMessage(err),
      });
    }
  }
  if (options.checker) {
    await Promise.all(records.all().map((r) => r.backend && options.checker!.check(r.backend)));
  }
  // Skipped entries leave the file; restarted engines may have a new port.
  if (stored.length > 0) await persist(ctx);
  return out;
}

async function restart(ctx: ManagerContext, entry: StoredManagedEngine): Promise<EngineView> {
  const request: StartEngineRequest = {
    id: entry.id,
    model: entry.model ?? undefined,
    kind: entry.kind,
    device: entry.device,
    dtype: entry.dtype,
    port: entry.port,
    reuse: false,
  };
  const start = () => startEngineNow(ctx, request, { createdAt: entry.createdAt });
  try {
    return (await start()).engine;
  } catch (err) {
    if (!(err instanceof ConflictError) || err.param !== "port") throw err;
    delete request.port; // the old port is taken now: any other will do
    return (await start()).engine;
  }
}

/**
 * Makes the remote engines match the shared store: new ones added, changed ones replaced, removed
 * ones dropped (requests in flight on them finish). Engines started here are ours alone.
 */
export function syncRemoteEngines(ctx: ManagerContext, engines: StoredEngine[]): void {
  if (ctx.closed) return;
  const { dispatcher, records, logger } = ctx;
  const remote = engines.filter((e): e is StoredRemoteEngine => e.origin === "remote");
  const ids = new Set(remote.map((e) => e.id));
  for (const rec of records.live()) {
    if (rec.origin === "remote" && rec.stored && !ids.has(rec.id)) {
      dispatcher.removeBackend(rec.id);
      rec.stopped = true;
      logger.info?.(`engine ${rec.id} was removed by another gateway replica`);
    }
  }
  for (const entry of remote) {
    const rec = records.find(entry.id);
    if (rec && !rec.stopped) {
      if (rec.origin !== "remote" || JSON.stringify(rec.stored) === JSON.stringify(entry)) {
        continue;
      }
      dispatcher.removeBackend(rec.id);
      records.delete(rec.id);
    }
    try {
      const added = addRemoteEngine(ctx, entry);
      void ctx.options.checker?.check(added.backend!);
      logger.info?.(`engine ${entry.id} was registered by another gateway replica`);
    } catch (err) {
      logger.warn("an engine registered by another replica could not be added; skipped", {
        engine: entry.id,
        error: errorMessage(err),
      });
    }
  }
  records.prune();
}

/**
 * Which running servers use a model, for `svc llm model delete`: the `svc llm run` processes that
 * recorded it (`_run_records.ts`; a serve's and a gateway's engines are such processes) and a
 * running `svc llm serve` whose state file names it (its engine inside the gateway has no record
 * of its own). The refusal built from them names each server and how to stop it.
 *
 * @module
 */
import { ConflictError } from "../core/errors.ts";
import type { ModelEntry } from "../core/model_registry.ts";
import { isInside } from "./_common.ts";
import { liveRunRecords, type RunModel } from "./_run_records.ts";
import { isServeLockHeld, readServeState, type ServeState } from "./serve_state.ts";

/** A running server that uses the model. */
export interface ModelUser {
  /** How the refusal names it, e.g. `svc llm run (pid 12, http://127.0.0.1:8001/v1)`. */
  what: string;
  /** How to stop it. */
  stop: string;
}

/**
 * The running servers that use `entry`, whose files `target` are about to be removed.
 *
 * @example
 * ```ts
 * import { modelUsers } from "./_model_users.ts";
 * const entry = { id: "demo/chat", path: "/tmp/svc/hub/demo/chat", source: "demo" as const,
 *   revision: null, sizeBytes: 0, lastUsed: null, addedAt: 0 };
 * const users = await modelUsers(entry, entry.path, {
 *   enginesDir: "/tmp/svc/engines", statePath: "/tmp/svc/engines/serve.env",
 * });
 * ```
 */
export async function modelUsers(
  entry: ModelEntry,
  target: string,
  where: { enginesDir: string; statePath: string },
): Promise<ModelUser[]> {
  const uses = (m: RunModel) =>
    m.name === entry.id || (m.folder !== undefined && isInside(m.folder, target));
  // A serve holds its lock for its whole life, loading included: without it the file is a dead one's.
  const serve = await isServeLockHeld(where.statePath)
    ? await readServeState(where.statePath).catch(() => null)
    : null;
  const users: ModelUser[] = [];
  let servedByServe = serve !== null &&
    [serve.chatModel, serve.embeddingModel].some((m) => m !== undefined && uses({ name: m }));
  for (const run of await liveRunRecords(where.enginesDir)) {
    if (!run.models.some(uses)) continue;
    if (serve?.pid !== undefined && run.parentPid === serve.pid) servedByServe = true;
    else if (run.supervised) {
      users.push({
        what:
          `an engine a gateway started (pid ${run.pid}, ${run.url}; gateway pid ${run.parentPid})`,
        stop: "stop that gateway, or the engine through its management API",
      });
    } else {
      users.push({
        what: `svc llm run (pid ${run.pid}, ${run.url})`,
        stop: `stop it (Ctrl-C where it runs, or kill ${run.pid})`,
      });
    }
  }
  if (servedByServe) users.unshift(serveUser(serve!));
  return users;
}

/**
 * The refusal to delete `id` while `users` use it: a ConflictError (exit 75) naming each server,
 * how to stop it, and `--force`.
 */
export function modelInUse(id: string, users: readonly ModelUser[]): ConflictError {
  return new ConflictError(
    `not deleting '${id}': it is in use by ${users.map((u) => u.what).join(" and ")}; ` +
      `${users.map((u) => u.stop).join(", and ")} first, or pass --force to delete it anyway ` +
      `(the server then fails when it next reads the model's files)`,
    { code: "model_in_use", param: "force" },
  );
}

function serveUser(state: ServeState): ModelUser {
  const where = state.gatewayUrl ? `gateway ${state.gatewayUrl}` : "still starting";
  return {
    what: `svc llm serve (${state.pid !== undefined ? `pid ${state.pid}, ` : ""}${where})`,
    stop: "stop it with 'svc llm stop'",
  };
}

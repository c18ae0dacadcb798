/**
 * Registering running OpenAI-compatible servers as remote engines: the URL and numbers checked,
 * the models asked for, an id made up when none is given (another when a replica sharing the
 * store took it first), and the engine added to the dispatcher and the store.
 *
 * @module
 */
import { ConflictError } from "../../core/errors.ts";
import { backendKindOf } from "../../core/model_kind.ts";
import { validateBackendConfig } from "../backend_config.ts";
import { EngineIdTakenError, type StoredRemoteEngine } from "./engine_store.ts";
import type { EngineView, RegisterEngineRequest } from "./engine_types.ts";
import {
  discoverModels,
  type EngineRecord,
  engineView,
  remoteConfigOf,
  remoteRecord,
} from "./_engine_util.ts";
import { checkOpen, type ManagerContext, persist } from "./_manager_context.ts";
import { GENERATED_ID_TRIES } from "./_engine_records.ts";

/** Adds a stored remote engine to the dispatcher and the manager's table; returns its record. */
export function addRemoteEngine(ctx: ManagerContext, entry: StoredRemoteEngine): EngineRecord {
  const backend = ctx.dispatcher.addBackend(remoteConfigOf(entry));
  const rec = remoteRecord(entry, backend);
  ctx.records.set(rec);
  return rec;
}

/** Registers a running OpenAI-compatible server as an engine and stores it. */
export async function registerRemote(
  ctx: ManagerContext,
  request: RegisterEngineRequest,
): Promise<EngineView> {
  checkOpen(ctx);
  const { dispatcher, records } = ctx;
  const kind = backendKindOf(request.kind);
  // An id the user gave none for is made up here; a taken one is then ours to replace.
  const generated = request.id == null;
  const taken = new Set<string>();
  let id = request.id ?? records.remoteId(request.kind, taken);
  // Validates the URL and every number before anything goes over the network.
  const probe = validateBackendConfig({
    id,
    baseUrl: request.baseUrl,
    kind,
    models: request.models ?? ["placeholder"],
    apiKey: request.apiKey ?? null,
    weight: request.weight,
    maxConcurrency: request.maxConcurrency,
    cost: request.cost,
    timeoutMs: request.timeoutMs,
  });
  const checkFree = () => {
    records.checkIdFree(id);
    for (const r of records.live()) {
      if (r.backend?.config.baseUrl === probe.baseUrl && r.backend.kind === kind) {
        throw new ConflictError(
          `the engine '${r.id}' is already registered at ${probe.baseUrl}; stop it first or ` +
            "use it",
          { param: "base_url" },
        );
      }
    }
    // A backend of the gateway's configuration (`--backend`, SVC_BACKENDS) at that URL.
    for (const b of dispatcher.backends()) {
      if (b.config.baseUrl === probe.baseUrl && b.kind === kind) {
        throw new ConflictError(
          `the backend '${b.id}' of the gateway's configuration (--backend or SVC_BACKENDS) ` +
            `already serves ${probe.baseUrl}; it needs no registration`,
          { param: "base_url" },
        );
      }
    }
  };
  checkFree();
  const listed = request.models === undefined
    ? await discoverModels(probe.baseUrl, request.apiKey)
    : undefined;
  const models = request.models ?? listed!.ids;
  // Another replica's registration may have come in meanwhile under the id we made up.
  if (generated) id = records.remoteId(request.kind, taken);
  checkFree(); // again: another registration may have finished while we asked for models
  const base: Omit<StoredRemoteEngine, "id"> = {
    origin: "remote",
    kind,
    baseUrl: probe.baseUrl,
    models,
    aliases: request.aliases,
    apiKey: request.apiKey ?? null,
    weight: request.weight,
    maxConcurrency: request.maxConcurrency,
    cost: request.cost,
    timeoutMs: request.timeoutMs,
    createdAt: Math.floor(Date.now() / 1000),
    ...(request.rerank
      ? { rerankers: models }
      : listed?.facts.rerankers.length
      ? { rerankers: [...listed.facts.rerankers] }
      : {}),
    ...(listed?.facts.randomWeights.length
      ? { randomWeights: [...listed.facts.randomWeights] }
      : {}),
  };
  for (let tries = 1;; tries++) {
    const rec = addRemoteEngine(ctx, { id, ...base });
    records.countRegistration();
    try {
      await persist(ctx);
    } catch (err) {
      dispatcher.removeBackend(id);
      records.delete(id);
      // A made-up id may be taken in a store shared with a replica that registered at the same
      // moment (not seen here yet): the next one will do. A given id stays the user's to change.
      const retry = generated && tries < GENERATED_ID_TRIES &&
        err instanceof EngineIdTakenError && err.id === id;
      if (!retry) throw err;
      taken.add(id);
      id = records.remoteId(request.kind, taken);
      continue;
    }
    await ctx.options.checker?.check(rec.backend!);
    return engineView(rec);
  }
}

/**
 * The engine manager's table of engines: lookup by id, the ids it makes up, which live engine
 * serves a model, and how many finished engines it keeps listed.
 *
 * @module
 */
import { ConflictError, NotFoundError, ValidationError } from "../../core/errors.ts";
import type { EngineKind } from "../../core/model_kind.ts";
import type { Dtype } from "../../engine/dtype.ts";
import type { StoredEngine } from "./engine_store.ts";
import { ENGINE_ID_PATTERN, type EnginePlacement } from "./engine_types.ts";
import { type EngineRecord, engineView } from "./_engine_util.ts";

/** Stopped or failed engines kept in the list (the oldest go first). */
const KEEP_FINISHED = 50;

/**
 * Ids an engine without one given tries before its conflict is answered: replicas sharing a store
 * may make up the same one at once.
 */
export const GENERATED_ID_TRIES = 16;

/** The engines of one manager by id, in the order they were added. */
export class EngineRecords {
  #records = new Map<string, EngineRecord>();
  // Registrations tried so far: made-up remote ids count on from it.
  #registrations = 0;

  /** Every engine, oldest first (stopped ones too). */
  all(): EngineRecord[] {
    return [...this.#records.values()];
  }

  /** The engines not stopped. */
  live(): EngineRecord[] {
    return this.all().filter((r) => !r.stopped);
  }

  /** What the store is to hold: the live engines that are stored. */
  stored(): StoredEngine[] {
    return this.all().filter((r) => !r.stopped && r.stored).map((r) => r.stored!);
  }

  /** The engine with this id, if any. */
  find(id: string): EngineRecord | undefined {
    return this.#records.get(id);
  }

  /** The engine with this id; NotFoundError when there is none. */
  get(id: string): EngineRecord {
    const rec = this.#records.get(id);
    if (rec === undefined) {
      throw new NotFoundError(
        `no engine has the id '${id.slice(0, 100)}'; GET /v1/management/engines lists them`,
        { code: "engine_not_found", param: "id" },
      );
    }
    return rec;
  }

  /** Adds `rec` under its id (replacing one there). */
  set(rec: EngineRecord): void {
    this.#records.set(rec.id, rec);
  }

  /** Forgets the engine with this id. */
  delete(id: string): void {
    this.#records.delete(id);
  }

  /** Forgets the oldest finished engines beyond the ones kept listed. */
  prune(): void {
    const finished = this.all().filter((r) => r.stopped);
    for (const r of finished.slice(0, Math.max(0, finished.length - KEEP_FINISHED))) {
      this.#records.delete(r.id);
    }
  }

  /**
   * Checks that `id` is well formed and names no engine that runs (ValidationError, ConflictError);
   * a stopped or failed engine of that id is forgotten, to make room.
   */
  checkIdFree(id: string): void {
    if (!ENGINE_ID_PATTERN.test(id)) {
      throw new ValidationError(
        "'id' must be 1-64 characters of letters, digits, '.', '_', ':' or '-'",
        { param: "id" },
      );
    }
    const existing = this.#records.get(id);
    if (existing !== undefined && !existing.stopped && engineView(existing).state !== "error") {
      throw new ConflictError(
        `an engine with id '${id}' already exists (${engineView(existing).state}); ` +
          "pick another id or stop it first",
        { param: "id" },
      );
    }
    if (existing !== undefined) this.#records.delete(id);
  }

  /**
   * `base`, or `base-2`, `base-3`, … : the first that no live engine here has, nor the shared
   * store was found to have (`taken`).
   */
  freeId(base: string, taken: ReadonlySet<string> = new Set()): string {
    let id = base;
    for (let n = 2; taken.has(id) || (this.#records.get(id)?.stopped === false); n++) {
      id = `${base}-${n}`;
    }
    return id;
  }

  /**
   * `remote-<kind>-<n>` for the first n from the registrations so far on that no live engine here
   * has, nor the shared store was found to have (`taken`).
   */
  remoteId(kind: string, taken: ReadonlySet<string>): string {
    for (let n = this.#registrations + 1;; n++) {
      const id = `remote-${kind}-${n}`;
      const rec = this.#records.get(id);
      if (!taken.has(id) && (rec === undefined || rec.stopped)) return id;
    }
  }

  /** Counts a registration tried (see {@link remoteId}). */
  countRegistration(): void {
    this.#registrations++;
  }

  /** A live engine, starting or ready, that serves `model` as asked; undefined when none does. */
  findServing(
    kind: EngineKind,
    model: string | null,
    dtype?: Dtype,
    placement: EnginePlacement = "process",
  ): EngineRecord | undefined {
    return this.live().find((r) => {
      if (r.kind !== kind || r.draining) return false;
      // An engine in the gateway serves only requests for one there, and the other way round.
      if ((r.placement === "gateway") !== (placement === "gateway")) return false;
      const view = engineView(r);
      const state = view.state;
      if (state !== "starting" && state !== "ready") return false;
      // A named dtype is only served by an engine that loads (or was asked for) that dtype.
      if (dtype !== undefined && view.dtype !== null && view.dtype !== dtype) return false;
      if (model === null) return r.origin === "managed" && r.model === null;
      return r.model === model || r.backend?.upstreamModel(model) !== undefined ||
        (r.supervisor?.models.includes(model) ?? false);
    });
  }
}

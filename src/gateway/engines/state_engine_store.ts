/**
 * Engine registrations in the shared state store: one row per engine with its own version, so
 * replicas writing at once never overwrite each other's registrations (a stale write is a 409,
 * not a lost row). Each replica polls the store's change counter (every 500 ms by default) and
 * hands the manager the new listing, so a registration or removal on one replica is served by
 * all of them within about a second (a listing read while this replica's own change waits to be
 * saved is dropped and read again, so it cannot undo that change).
 *
 * Engines started by a gateway (origin `managed`) are that gateway's own: their rows carry its
 * identity (`gateway`), it alone starts them again when it restarts, and another replica never
 * removes their rows. On first load, an old `gateway_engines.json` is imported once and renamed
 * to `gateway_engines.json.migrated`.
 *
 * @module
 */
import { getLogger, type Logger } from "../../core/logging.ts";
import type { StateStore } from "../../state/state_store.ts";
import { ConflictError, errorMessage } from "../../core/errors.ts";
import {
  EngineIdTakenError,
  type EnginePersistence,
  EngineStore,
  type StoredEngine,
  type StoredManagedEngine,
} from "./engine_store.ts";

/** Options of {@link StateEngineStore}. */
export interface StateEngineStoreOptions {
  /** An old engine state file to import once (then renamed with `.migrated`). */
  legacyFile?: string;
  /**
   * This gateway's identity (gateway_identity.ts), written into the rows of the engines it starts;
   * on load it claims only the started engines with it, or with none (rows of older versions).
   * Left out, it claims every started engine (one gateway per store).
   */
  gateway?: string;
  /** How often the change counter is read (default 500 ms). */
  pollMs?: number;
  /** Where problems go (default the `gateway` logger). */
  logger?: Logger;
}

interface Known {
  version: number;
  json: string;
}

/**
 * The engine manager's persistence on a {@link StateStore}.
 *
 * @example
 * ```ts
 * import { openStateStore } from "@svc/cli/gateway";
 * import { StateEngineStore } from "./state_engine_store.ts";
 * const state = await openStateStore("sqlite::memory:");
 * const engines = new StateEngineStore(state);
 * console.log(await engines.load()); // []
 * await state.close();
 * ```
 */
export class StateEngineStore implements EnginePersistence {
  readonly #state: StateStore;
  readonly #options: StateEngineStoreOptions;
  readonly #log: Logger;
  /** What the store held when last read or written by us: id → row version and JSON. */
  readonly #known = new Map<string, Known>();
  /** Started engines whose rows are ours to remove. */
  readonly #ownManaged = new Set<string>();
  #version = -1;
  /** Saves asked for so far: a poll that sees this change was read while the manager moved on. */
  #saves = 0;
  #queue: Promise<unknown> = Promise.resolve();

  constructor(state: StateStore, options: StateEngineStoreOptions = {}) {
    this.#state = state;
    this.#options = options;
    this.#log = options.logger ?? getLogger("gateway");
  }

  load(options: { claimStarted?: boolean } = {}): Promise<StoredEngine[]> {
    return this.#serial(async () => {
      if (this.#options.legacyFile) await this.#importLegacy(this.#options.legacyFile);
      const engines = await this.#read();
      if (options.claimStarted === false) return engines;
      const mine = engines.filter((e) => e.origin !== "managed" || this.#isMine(e));
      for (const e of mine) if (e.origin === "managed") this.#ownManaged.add(e.id);
      return mine;
    });
  }

  save(engines: readonly StoredEngine[]): Promise<void> {
    this.#saves++;
    return this.#serial(async () => {
      const gateway = this.#options.gateway;
      const wanted = new Map(engines.map((e) => [
        e.id,
        e.origin === "managed" && gateway !== undefined ? { ...e, gateway } : e,
      ]));
      for (const [id, engine] of wanted) {
        const json = JSON.stringify(engine);
        const known = this.#known.get(id);
        if (known?.json === json) continue;
        if (known !== undefined && this.#othersManaged(id, known)) {
          throw new EngineIdTakenError(
            id,
            new ConflictError(
              `the engine id '${id}' is taken by an engine another gateway started; pick another`,
            ),
          );
        }
        const version = await this.#state.putEngine(
          id,
          engine as unknown as Record<string, unknown>,
          known?.version ?? null,
        ).catch((err) => {
          // A row we did not know of: another replica took the id first.
          throw known === undefined && err instanceof ConflictError
            ? new EngineIdTakenError(id, err)
            : err;
        });
        this.#known.set(id, { version, json });
        if (engine.origin === "managed") this.#ownManaged.add(id);
      }
      for (const [id, known] of this.#known) {
        if (wanted.has(id) || this.#othersManaged(id, known)) continue;
        await this.#state.deleteEngine(id);
        this.#known.delete(id);
        this.#ownManaged.delete(id);
      }
    });
  }

  watch(apply: (engines: StoredEngine[]) => void): () => void {
    let stopped = false;
    const tick = async () => {
      try {
        await this.#serial(async () => {
          const saves = this.#saves;
          if (stopped || await this.#state.enginesVersion() === this.#version) return;
          const engines = await this.#read();
          // The manager changed its engines meanwhile (a registration or removal whose save is
          // queued behind this read): this listing predates it and would undo it (drop the new
          // engine, bring the removed one back and so keep its row). Read again after the save.
          if (this.#saves !== saves) return void (this.#version = -1);
          if (!stopped) apply(engines);
        });
      } catch (err) {
        this.#log.warn("could not read the engines of the state store; retrying", {
          store: this.#state.description,
          error: errorMessage(err),
        });
      }
    };
    const timer = setInterval(tick, this.#options.pollMs ?? 500);
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }

  // A row of an engine another gateway started: never ours to replace or remove.
  #othersManaged(id: string, known: Known): boolean {
    return (JSON.parse(known.json) as StoredEngine).origin === "managed" &&
      !this.#ownManaged.has(id);
  }

  // A started engine of this gateway: one that carries its identity, or one of an older version
  // (no identity) when this gateway is the first to load it.
  #isMine(engine: StoredManagedEngine): boolean {
    const gateway = this.#options.gateway;
    return gateway === undefined || engine.gateway === undefined || engine.gateway === gateway;
  }

  async #read(): Promise<StoredEngine[]> {
    const listing = await this.#state.listEngines();
    this.#version = listing.version;
    this.#known.clear();
    return listing.engines.map((row) => {
      this.#known.set(row.id, { version: row.version, json: JSON.stringify(row.data) });
      return row.data as unknown as StoredEngine;
    });
  }

  // The JSON file of older versions: its engines become rows (ids already there are kept as
  // they are), and the file is renamed so this happens once.
  async #importLegacy(path: string): Promise<void> {
    let engines: StoredEngine[];
    try {
      await Deno.stat(path);
      engines = await new EngineStore(path).load();
    } catch (err) {
      if (err instanceof Deno.errors.NotFound) return;
      throw err;
    }
    const existing = new Set((await this.#state.listEngines()).engines.map((e) => e.id));
    for (const engine of engines) {
      if (existing.has(engine.id)) continue;
      await this.#state.putEngine(engine.id, engine as unknown as Record<string, unknown>, null)
        .catch(() => {}); // another replica imported it at the same moment
    }
    await Deno.rename(path, `${path}.migrated`);
    this.#log.info?.(`imported ${engines.length} engine(s) from ${path} into the state store`, {
      store: this.#state.description,
    });
  }

  // Reads and writes one at a time, so a poll never interleaves with a save.
  #serial<T>(work: () => Promise<T>): Promise<T> {
    const next = this.#queue.then(work, work);
    this.#queue = next.catch(() => {});
    return next;
  }
}

/**
 * What the parts of the engine manager share: the dispatcher whose backends they keep in step
 * with the engines, the manager's options and log, its table of engines, the ports its started
 * engines hold, and whether the gateway is shutting down.
 *
 * @module
 */
import { ConflictError } from "../../core/errors.ts";
import type { Logger } from "../../core/logging.ts";
import type { Dispatcher } from "../dispatcher.ts";
import type { EngineRecords } from "./_engine_records.ts";
import type { EngineManagerOptions } from "./engine_types.ts";

/** The state of one engine manager, handed to the functions that start, stop and restore. */
export interface ManagerContext {
  /** Gets a backend for every engine that can serve. */
  readonly dispatcher: Dispatcher;
  /** The manager's options, as given. */
  readonly options: EngineManagerOptions;
  /** The manager's log. */
  readonly logger: Logger;
  /** Every engine the manager knows. */
  readonly records: EngineRecords;
  /** Ports of started engines, held until they are down: two engines never get one port. */
  readonly reservedPorts: Set<number>;
  /** The gateway is shutting down: no new engines, and engines it stops stay in the store. */
  closed: boolean;
}

/** ConflictError once the gateway is shutting down. */
export function checkOpen(ctx: ManagerContext): void {
  if (ctx.closed) {
    throw new ConflictError("the gateway is shutting down; it takes no new engines");
  }
}

/** Saves the live engines that are to be stored (nothing without a store). */
export async function persist(ctx: ManagerContext): Promise<void> {
  const store = ctx.options.store;
  if (store === undefined) return;
  await store.save(ctx.records.stored());
}

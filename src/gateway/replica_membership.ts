/**
 * Which gateway replicas are alive: each replica on a shared coordinator says so every second
 * (a heartbeat that lives 3 s), and `GET /v1/management/replicas` lists the live ones — what an
 * operator checks after scaling, and what shows a replica that died.
 *
 * @module
 */

import { hostname } from "node:os";
import type { Coordinator } from "../coord/coordinator.ts";
import type { RouteDefinition } from "../http/http_app.ts";

const BEAT_MS = 1_000;
const LIVES_MS = 3_000;

/** This replica's heartbeat on `coordinator`, until stopped. */
export class ReplicaMembership {
  /** This replica's id: host, process and a random suffix (a restarted process is new). */
  readonly id: string = `${hostname()}:${Deno.pid}:${crypto.randomUUID().slice(0, 8)}`;
  #coordinator: Coordinator;
  #timer: ReturnType<typeof setInterval>;

  /** Starts beating on `coordinator` (at once, then every second). */
  constructor(coordinator: Coordinator) {
    this.#coordinator = coordinator;
    const beat = () => void coordinator.heartbeat(this.id, LIVES_MS).catch(() => {});
    beat();
    this.#timer = setInterval(beat, BEAT_MS);
    Deno.unrefTimer(this.#timer as unknown as number);
  }

  /** The live replicas' ids (this one included). */
  members(): Promise<string[]> {
    return this.#coordinator.members();
  }

  /** Stops beating: the others stop listing this replica within 3 s. */
  stop(): void {
    clearInterval(this.#timer);
  }
}

/** `GET /v1/management/replicas`: `{object: "list", data: [{id, self}]}`. */
export function replicasRoute(membership: ReplicaMembership): RouteDefinition {
  return {
    method: "GET",
    path: "/v1/management/replicas",
    admin: true,
    handler: async () => {
      const ids = (await membership.members()).sort();
      return Response.json({
        object: "list",
        data: ids.map((id) => ({ id, self: id === membership.id })),
      });
    },
  };
}

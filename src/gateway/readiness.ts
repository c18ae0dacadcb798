/**
 * Whether the gateway is ready, decided in one place for `GET /health/ready`, the dashboard's
 * `ready` and the `ready` gauge of `/metrics`: a backend passed its health check and no engine this
 * gateway started is still loading (a gateway started with a chat and an embedding engine is ready
 * once both are), and what the gateway shares with its replicas can be reached: the coordination
 * Redis and the state store register themselves with {@link requireForReadiness}.
 *
 * @module
 */
import type { Dispatcher } from "./dispatcher.ts";
import type { EngineView } from "./engines/engine_types.ts";

/** The gateway's readiness and, when not ready, why. */
export interface Readiness {
  /** Ready to serve. */
  ready: boolean;
  /** Ids of the engines this gateway started that are still loading. */
  loading: string[];
  /** Why it is not ready; null when ready. */
  message: string | null;
}

/** Why something the gateway needs cannot be used now, or null when it can. */
export type ReadinessCondition = () => string | null;

const conditions = new WeakMap<Dispatcher, ReadinessCondition[]>();

/**
 * Makes the gateway of `dispatcher` not ready while `condition` names a problem (its coordinator
 * or state store cannot be reached).
 */
export function requireForReadiness(dispatcher: Dispatcher, condition: ReadinessCondition): void {
  const list = conditions.get(dispatcher) ?? [];
  list.push(condition);
  conditions.set(dispatcher, list);
}

/**
 * The readiness of a gateway with these backends and started engines.
 *
 * @example
 * ```ts
 * import { Dispatcher } from "@svc/cli/gateway";
 * import { gatewayReadiness } from "./readiness.ts";
 * gatewayReadiness(new Dispatcher(), []).ready; // false: no backend yet
 * ```
 */
export function gatewayReadiness(
  dispatcher: Dispatcher,
  engines: readonly EngineView[] = [],
): Readiness {
  const loading = engines.filter((e) => e.origin === "managed" && e.state === "starting")
    .map((e) => e.id);
  for (const condition of conditions.get(dispatcher) ?? []) {
    const problem = condition();
    if (problem !== null) return { ready: false, loading, message: problem };
  }
  if (loading.length > 0) {
    const list = loading.map((id) => `'${id}'`).join(", ");
    return {
      ready: false,
      loading,
      message: `Still loading: the engine${loading.length > 1 ? "s" : ""} ${list}.`,
    };
  }
  if (dispatcher.isReady()) return { ready: true, loading, message: null };
  return {
    ready: false,
    loading,
    message: dispatcher.backends().length === 0
      ? "No backend is registered yet."
      : "No backend has passed its health check yet.",
  };
}

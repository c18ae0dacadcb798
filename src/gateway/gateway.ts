/**
 * The gateway assembled without a socket: dispatcher, health checker, engine manager (optional)
 * and the HTTP app. `startGateway` (gateway_server.ts) serves it; an application can also call
 * `handler` directly to run the control plane in its own process.
 *
 * @module
 */
import { getLogger } from "../core/logging.ts";
import type { AppHandler } from "../http/http_app.ts";
import type { BackendInstanceConfig } from "./backend_config.ts";
import { Dispatcher, type DispatcherOptions } from "./dispatcher.ts";
import { EngineManager } from "./engines/engine_manager.ts";
import type { EngineManagerOptions, StartEngineRequest } from "./engines/engine_types.ts";
import { createGatewayApp, type GatewayAppOptions } from "./gateway_app.ts";
import { ReplicaMembership } from "./replica_membership.ts";
import { HealthChecker, type HealthCheckerOptions } from "./health_checker.ts";
import { StateHealth } from "./state_health.ts";
import type { EnginePersistence } from "./engines/engine_store.ts";
import { StateEngineStore } from "./engines/state_engine_store.ts";

/** Options of {@link createGateway}. */
export interface GatewayOptions
  extends Omit<GatewayAppOptions, "dispatcher" | "manager" | "membership" | "stateHealth"> {
  /** Scheduling settings (policy, queue size, retries, timeouts, circuit breaker). */
  dispatcher?: DispatcherOptions;
  /** Backends known from configuration (not persisted; the management API adds more). */
  backends?: readonly BackendInstanceConfig[];
  /** Health probes (default every 5 s, 2 s timeout, unhealthy after 3 failures in a row). */
  health?: HealthCheckerOptions;
  /** Turns the management API on (started engines, registrations); off when left out. */
  management?: Omit<EngineManagerOptions, "checker" | "logger">;
  /**
   * Engines to start with the gateway (needs `management`), before it answers: their models are
   * listed as `loading` from its first request on.
   */
  engines?: readonly StartEngineRequest[];
}

/** An assembled gateway. */
export interface Gateway {
  /** The HTTP app: `(req) => Promise<Response>`. */
  readonly handler: AppHandler;
  /** Routes and schedules requests over the backends. */
  readonly dispatcher: Dispatcher;
  /** Probes the backends' health. */
  readonly checker: HealthChecker;
  /** Present when `management` was given. */
  readonly manager?: EngineManager;
  /** Stops started engines (with drain), health checks and the dispatcher. */
  close(): Promise<void>;
}

/**
 * Builds a gateway: adds the configured backends, registers the stored engines again, runs a
 * first round of health checks and starts the periodic ones.
 *
 * @example
 * ```ts
 * import { createGateway } from "@svc/cli/gateway";
 * const gateway = await createGateway({
 *   backends: [{ id: "a", baseUrl: "http://127.0.0.1:8001/v1", kind: "llm", models: ["m"] }],
 * });
 * const res = await gateway.handler(new Request("http://gw/v1/models"));
 * await gateway.close();
 * ```
 */
export async function createGateway(options: GatewayOptions = {}): Promise<Gateway> {
  const logger = getLogger("gateway");
  const dispatcher = new Dispatcher({
    logger,
    coordinator: options.coordinator,
    ...options.dispatcher,
  });
  for (const b of options.backends ?? []) dispatcher.addBackend(b);
  const checker = new HealthChecker(() => dispatcher.backends(), {
    coordinator: options.coordinator,
    ...options.health,
  });
  // Readiness follows the state store even while no request uses it (state_health.ts).
  const stateHealth = options.state ? new StateHealth() : undefined;
  const manager = options.management
    ? new EngineManager(dispatcher, {
      ...options.management,
      store: guardedStore(options.management.store, stateHealth),
      checker,
      logger,
    })
    : undefined;
  try {
    await manager?.restore();
    for (const engine of options.engines ?? []) await manager?.startEngine(engine);
  } catch (err) {
    await manager?.close();
    dispatcher.close();
    throw err;
  }
  checker.start();
  const shared = options.coordinator !== undefined && options.coordinator.kind !== "local";
  const membership = shared ? new ReplicaMembership(options.coordinator!) : undefined;
  const state = options.state;
  if (state) stateHealth!.watch(() => state.enginesVersion());
  const handler = createGatewayApp({ ...options, dispatcher, manager, membership, stateHealth });
  let closing: Promise<void> | undefined;
  return {
    handler,
    dispatcher,
    checker,
    manager,
    close: () =>
      closing ??= (async () => {
        membership?.stop();
        await stateHealth?.stop();
        await manager?.close();
        await checker.stop();
        dispatcher.close();
      })(),
  };
}

/**
 * `store` with its writes run through `health` when it keeps the engines in the state store: a
 * registration or removal while the database cannot be reached is a 503 `state_unavailable`
 * (as the key routes answer), not a 500, and readiness sees the outage.
 */
function guardedStore(
  store: EnginePersistence | undefined,
  health: StateHealth | undefined,
): EnginePersistence | undefined {
  if (store === undefined || health === undefined || !(store instanceof StateEngineStore)) {
    return store;
  }
  const meanwhile = "Engines cannot be registered or removed meanwhile";
  return {
    load: (options) => store.load(options),
    save: (engines) => health.run(() => store.save(engines), { meanwhile }),
    watch: (apply) => store.watch(apply),
  };
}

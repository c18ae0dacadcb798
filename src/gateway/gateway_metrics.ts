/**
 * Prometheus metrics of the gateway: per backend (requests, errors, retries, latency, in flight,
 * capacity, health, circuit state), per queue (length, capacity, refused), and totals. Values are
 * pulled from the dispatcher's snapshot at every scrape; the per-backend latency histogram is fed
 * by the proxy routes.
 *
 * @module
 */
import type { Backend } from "./backend.ts";
import type { Dispatcher } from "./dispatcher.ts";
import type { EngineView } from "./engines/engine_types.ts";
import { gatewayReadiness } from "./readiness.ts";
import { type Counter, LATENCY_BUCKETS, type MetricsRegistry } from "../http/metrics.ts";

/** What the proxy routes report. */
export interface GatewayMetrics {
  /** Time from forwarding a request to the backend's answer (a stream's first byte), seconds. */
  observeLatency(backendId: string, seconds: number): void;
}

interface Seen {
  requests: number;
  errors: number;
  retries: number;
  opens: number;
}

/**
 * Registers the gateway's metrics in `registry` (names start with `prefix`, default `svc_gateway`).
 *
 * @example
 * ```ts
 * import { Dispatcher } from "@svc/cli/gateway";
 * import { registerGatewayMetrics } from "./gateway_metrics.ts";
 * import { MetricsRegistry } from "@svc/cli/server";
 * const registry = new MetricsRegistry();
 * registerGatewayMetrics(registry, new Dispatcher());
 * console.log(registry.render());
 * ```
 */
export function registerGatewayMetrics(
  registry: MetricsRegistry,
  dispatcher: Dispatcher,
  options: {
    prefix?: string;
    /** The engines the gateway started (the `ready` gauge waits for those still loading). */
    engines?: () => readonly EngineView[];
  } = {},
): GatewayMetrics {
  const p = options.prefix ?? "svc_gateway";
  const byBackend = { labelNames: ["backend"] };
  const withState = { labelNames: ["backend", "state"] };
  const requests = registry.counter(
    `${p}_backend_requests_total`,
    "Requests sent to a backend (retries included).",
    byBackend,
  );
  const errors = registry.counter(
    `${p}_backend_errors_total`,
    "Failed attempts on a backend (connection errors, timeouts, 5xx, 429, broken streams).",
    byBackend,
  );
  const retries = registry.counter(
    `${p}_backend_retries_total`,
    "Requests a backend got after another backend failed them.",
    byBackend,
  );
  const opens = registry.counter(
    `${p}_backend_circuit_opens_total`,
    "Times a backend's circuit breaker opened.",
    byBackend,
  );
  const duration = registry.histogram(
    `${p}_backend_request_duration_seconds`,
    "Time from forwarding a request to the backend's answer (streams: the first byte).",
    { labelNames: ["backend"], buckets: LATENCY_BUCKETS },
  );
  const inFlight = registry.gauge(`${p}_backend_in_flight`, "Requests in flight.", byBackend);
  const capacity = registry.gauge(
    `${p}_backend_max_concurrency`,
    "Most requests a backend takes at once.",
    byBackend,
  );
  const ewma = registry.gauge(
    `${p}_backend_latency_ewma_seconds`,
    "Moving average of a backend's latency.",
    byBackend,
  );
  const health = registry.gauge(
    `${p}_backend_health`,
    "1 for the backend's health state (healthy, unhealthy, unknown), else 0.",
    withState,
  );
  const circuit = registry.gauge(
    `${p}_backend_circuit_state`,
    "1 for the backend's circuit state (closed, open, half_open), else 0.",
    withState,
  );
  const draining = registry.gauge(`${p}_backend_draining`, "1 while draining.", byBackend);
  const queueLength = registry.gauge(`${p}_queue_length`, "Requests waiting for a backend.", {
    labelNames: ["pool"],
  });
  const queueCapacity = registry.gauge(`${p}_queue_capacity`, "Most requests that may wait.", {
    labelNames: ["pool"],
  });
  const rejected = registry.counter(
    `${p}_queue_rejected_total`,
    "Requests refused at admission (queue full: 429; deadline unmeetable: 503).",
    { labelNames: ["pool"] },
  );
  const totals = {
    requests: registry.counter(`${p}_requests_total`, "Requests the gateway scheduled."),
    failed: registry.counter(`${p}_requests_failed_total`, "Requests that ended in an error."),
    cancelled: registry.counter(`${p}_requests_cancelled_total`, "Requests the client cancelled."),
    retries: registry.counter(`${p}_retries_total`, "Failovers to another backend."),
  };
  const ready = registry.gauge(
    `${p}_ready`,
    "1 when the gateway is ready, as GET /health/ready says: a backend passed its health check " +
      "and no engine it started is still loading.",
  );

  const seen = new WeakMap<Backend, Seen>();
  const seenPools = new Map<string, number>();
  const seenTotals = { requests: 0, failed: 0, cancelled: 0, retries: 0 };
  const addDelta = (counter: Counter, now: number, before: number, labels?: object) => {
    if (now > before) counter.inc(now - before, labels as Record<string, string>);
  };

  registry.onCollect(() => {
    for (const g of [inFlight, capacity, ewma, health, circuit, draining, queueLength]) g.reset();
    queueCapacity.reset();
    for (const b of dispatcher.backends()) {
      const s = b.snapshot();
      const labels = { backend: s.id };
      const last = seen.get(b) ?? { requests: 0, errors: 0, retries: 0, opens: 0 };
      addDelta(requests, s.requests, last.requests, labels);
      addDelta(errors, s.errors, last.errors, labels);
      addDelta(retries, s.retries, last.retries, labels);
      addDelta(opens, s.circuitOpens, last.opens, labels);
      seen.set(b, {
        requests: s.requests,
        errors: s.errors,
        retries: s.retries,
        opens: s.circuitOpens,
      });
      inFlight.set(s.inFlight, labels);
      capacity.set(s.maxConcurrency, labels);
      if (s.latencyMs !== null) ewma.set(s.latencyMs / 1000, labels);
      for (const state of ["healthy", "unhealthy", "unknown"]) {
        health.set(s.health === state ? 1 : 0, { backend: s.id, state });
      }
      for (const state of ["closed", "open", "half_open"]) {
        circuit.set(s.circuit === state ? 1 : 0, { backend: s.id, state });
      }
      draining.set(s.draining ? 1 : 0, labels);
    }
    const snap = dispatcher.snapshot();
    for (const pool of snap.pools) {
      queueLength.set(pool.queueLength, { pool: pool.name });
      queueCapacity.set(pool.maxQueue, { pool: pool.name });
      addDelta(rejected, pool.rejected, seenPools.get(pool.name) ?? 0, { pool: pool.name });
      seenPools.set(pool.name, pool.rejected);
    }
    for (const key of ["requests", "failed", "cancelled", "retries"] as const) {
      addDelta(totals[key], snap[key], seenTotals[key]);
      seenTotals[key] = snap[key];
    }
    ready.set(gatewayReadiness(dispatcher, options.engines?.()).ready ? 1 : 0);
  });

  return {
    observeLatency: (backendId, seconds) => duration.observe(seconds, { backend: backendId }),
  };
}

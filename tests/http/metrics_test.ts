import { MetricsRegistry } from "../../src/http/metrics.ts";
import { assertEquals, assertThrows } from "../_assert.ts";

Deno.test("MetricsRegistry.render() writes counters, gauges and histograms in Prometheus text", () => {
  const registry = new MetricsRegistry();
  const requests = registry.counter("app_requests_total", "Requests\nserved.", {
    labelNames: ["route"],
  });
  requests.inc(1, { route: "/a" });
  requests.inc(2, { route: '/b"\\' });
  const inFlight = registry.gauge("app_in_flight", "In flight.");
  inFlight.inc();
  inFlight.inc();
  inFlight.dec();
  const latency = registry.histogram("app_latency_seconds", "Latency.", { buckets: [0.1, 1] });
  latency.observe(0.05);
  latency.observe(0.5);
  latency.observe(5);
  assertEquals(
    registry.render(),
    [
      "# HELP app_requests_total Requests\\nserved.",
      "# TYPE app_requests_total counter",
      'app_requests_total{route="/a"} 1',
      'app_requests_total{route="/b\\"\\\\"} 2',
      "# HELP app_in_flight In flight.",
      "# TYPE app_in_flight gauge",
      "app_in_flight 1",
      "# HELP app_latency_seconds Latency.",
      "# TYPE app_latency_seconds histogram",
      'app_latency_seconds_bucket{le="0.1"} 1',
      'app_latency_seconds_bucket{le="1"} 2',
      'app_latency_seconds_bucket{le="+Inf"} 3',
      "app_latency_seconds_sum 5.55",
      "app_latency_seconds_count 3",
      "",
    ].join("\n"),
  );
});

Deno.test("MetricsRegistry returns the same metric for the same name and refuses another type", () => {
  const registry = new MetricsRegistry();
  const a = registry.counter("x_total", "X.");
  a.inc(3);
  assertEquals(registry.counter("x_total", "X.").get(), 3);
  assertThrows(() => registry.gauge("x_total", "X."), TypeError, "already exists as a counter");
  assertThrows(() => registry.counter("bad name", "B."), TypeError);
  assertThrows(() => registry.counter("y_total", "Y.", { labelNames: ["le"] }), TypeError);
  assertThrows(() => a.inc(-1), RangeError);
});

Deno.test("Histogram.setCounts() replaces a series from (value, times) pairs", () => {
  const registry = new MetricsRegistry();
  const batches = registry.histogram("b", "Batches.", { buckets: [1, 4], labelNames: ["m"] });
  batches.setCounts([[1, 3], [3, 2]], { m: "x" });
  batches.setCounts([[1, 5], [8, 1]], { m: "x" });
  assertEquals(batches.snapshot({ m: "x" }), { count: 6, sum: 13, counts: [5, 0] });
});

Deno.test("MetricsRegistry.onCollect() refreshes values at render and survives a failing source", () => {
  const registry = new MetricsRegistry();
  const depth = registry.gauge("queue_depth", "Queue.");
  let n = 0;
  const stop = registry.onCollect(() => depth.set(++n));
  registry.onCollect(() => {
    throw new Error("source down");
  });
  registry.render();
  assertEquals(registry.render().includes("queue_depth 2"), true);
  stop();
  registry.render();
  assertEquals(depth.get(), 2);
});

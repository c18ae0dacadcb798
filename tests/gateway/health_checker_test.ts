import { assert, assertEquals, assertMatch } from "../_assert.ts";
import { Backend } from "../../src/gateway/backend.ts";
import { validateBackendConfig } from "../../src/gateway/backend_config.ts";
import { HealthChecker } from "../../src/gateway/health_checker.ts";
import { HandlerTransport } from "../../src/gateway/transport.ts";
import { FakeEngine, sleep, until } from "./_fake_backend.ts";

function backendAt(baseUrl: string, circuit = {}): Backend {
  return new Backend(
    validateBackendConfig({ id: "b", baseUrl, kind: "llm", models: ["m"] }),
    { circuit },
  );
}

Deno.test("HealthChecker marks an instance healthy or unhealthy and feeds its circuit", async () => {
  const fake = new FakeEngine("f");
  const url = fake.serve();
  const backend = backendAt(url, { failureThreshold: 2, cooldownMs: 60_000 });
  const changes: string[] = [];
  const checker = new HealthChecker(() => [backend], {
    onChange: (b, state) => changes.push(`${b.id}:${state}`),
  });
  try {
    assertEquals(backend.health, "unknown");
    assertEquals((await checker.check(backend)).ok, true);
    assertEquals(backend.health, "healthy");
    fake.behavior = { healthStatus: 503 };
    const failed = await checker.check(backend);
    assertEquals([failed.ok, failed.status], [false, 503]);
    assertEquals(backend.health, "unhealthy");
    assertEquals(backend.snapshot().healthMessage, "answered HTTP 503");
    assertEquals(backend.circuit.consecutiveFailures, 1);
    await checker.check(backend);
    assertEquals(backend.circuit.state, "open");
    assertEquals(changes, ["b:healthy", "b:unhealthy"]);
  } finally {
    await fake.close();
  }
  const gone = await checker.check(backend);
  assertMatch(gone.message!, /not reachable/);
});

Deno.test("HealthChecker probes /v1/models on servers without /health", async () => {
  const fake = new FakeEngine("f", { healthStatus: 404 });
  const backend = fake.backend();
  const checker = new HealthChecker(() => [backend]);
  assertEquals((await checker.check(backend)).ok, true);
  assertEquals((await checker.check(backend)).ok, true);
  assertEquals(backend.health, "healthy");
  assertEquals(fake.healthChecks, 3, "/health once, then /v1/models each time");
});

Deno.test("HealthChecker times a hanging probe out", async () => {
  const backend = new Backend(
    validateBackendConfig({
      id: "h",
      baseUrl: "http://127.0.0.1:9/v1",
      kind: "llm",
      models: ["m"],
    }),
    { transport: new HandlerTransport(() => new Promise<Response>(() => {})) },
  );
  const checker = new HealthChecker(() => [backend], { timeoutMs: 30 });
  const result = await checker.check(backend);
  assertEquals(result.ok, false);
  assertMatch(result.message!, /timed out/);
  assertEquals(backend.health, "unhealthy");
});

Deno.test("HealthChecker closes a circuit whose cool-down is over (the half-open probe)", async () => {
  const fake = new FakeEngine("f");
  const backend = fake.backend({}, { circuit: { failureThreshold: 1, cooldownMs: 40 } });
  backend.circuit.recordFailure();
  const checker = new HealthChecker(() => [backend]);
  await checker.check(backend);
  assertEquals(backend.circuit.state, "open", "too early: the cool-down is not over");
  await sleep(50);
  await checker.check(backend);
  assertEquals(backend.circuit.state, "closed");
});

Deno.test("HealthChecker probes periodically and stops without leaking timers", async () => {
  const a = new FakeEngine("a");
  const b = new FakeEngine("b");
  const backends = [a.backend(), b.backend({ id: "b" })];
  const checker = new HealthChecker(() => backends, { intervalMs: 15 });
  checker.start();
  checker.start(); // idempotent
  assert(checker.running);
  await until(() => a.healthChecks >= 3 && b.healthChecks >= 3);
  await checker.stop();
  const seen = a.healthChecks;
  await sleep(50);
  assertEquals(a.healthChecks, seen);
  assert(backends.every((x) => x.health === "healthy"));
});

Deno.test("HealthChecker.stop() aborts a probe in flight without judging the instance", async () => {
  let started = 0;
  const backend = new Backend(
    validateBackendConfig({
      id: "h",
      baseUrl: "http://127.0.0.1:9/v1",
      kind: "llm",
      models: ["m"],
    }),
    {
      transport: new HandlerTransport(() => {
        started++;
        return new Promise<Response>(() => {});
      }),
    },
  );
  const checker = new HealthChecker(() => [backend], { timeoutMs: 60_000 });
  checker.start();
  await until(() => started === 1);
  await checker.stop();
  assertEquals(backend.health, "unknown");
});

Deno.test("HealthChecker ignores a probe answer about the process a restart replaced", async () => {
  let answer!: (res: Response) => void;
  const transport = {
    kind: "remote" as const,
    send: () => new Promise<Response>((resolve) => (answer = resolve)),
  };
  const backend = new Backend(
    validateBackendConfig({
      id: "b",
      baseUrl: "http://engine.test/v1",
      kind: "llm",
      models: ["m"],
    }),
    { transport },
  );
  const checker = new HealthChecker(() => [backend]);
  // Sent while the old process was loading or gone; answered after the new one was seen ready.
  const probe = checker.check(backend);
  backend.restarted();
  answer(new Response("loading", { status: 503 }));
  assertEquals((await probe).ok, false);
  assertEquals(backend.health, "healthy");
  assertEquals(backend.circuit.consecutiveFailures, 0);
  assert(backend.isEligible(), "the restarted engine keeps getting requests");
});

// Health checks need several failed probes in a row before a healthy backend is taken out (a
// probe that times out on a busy machine says little), but a refused connection, an answer that
// is not 2xx, or a new backend's failed first probe take it out at once. Real sockets throughout.
import { assert, assertEquals, assertMatch } from "../_assert.ts";
import { Backend } from "../../src/gateway/backend.ts";
import { validateBackendConfig } from "../../src/gateway/backend_config.ts";
import { createGateway, type Gateway } from "../../src/gateway/gateway.ts";
import { HealthChecker } from "../../src/gateway/health_checker.ts";
import { HandlerTransport } from "../../src/gateway/transport.ts";
import type { HttpLogger } from "../../src/http/logger.ts";
import type { Coordinator } from "../../src/coord/coordinator.ts";
import { FakeEngine, until } from "./_fake_backend.ts";

const QUIET: HttpLogger = { error: () => {}, warn: () => {} };
const LOOPBACK: Deno.NetAddr = { transport: "tcp", hostname: "127.0.0.1", port: 40000 };
// Probes here give up after 150 ms; a hung /health waits far longer than that.
const HANG = { healthDelayMs: 30_000 };

// A gateway over one fake engine on a socket, probed only when the test says (checkAll), and
// already seen healthy.
async function stack(health: { failureThreshold?: number; successThreshold?: number } = {}) {
  const engine = new FakeEngine("e");
  const url = engine.serve();
  const gateway = await createGateway({
    logger: QUIET,
    health: { intervalMs: 600_000, timeoutMs: 150, ...health },
    backends: [{ id: "e", baseUrl: url, kind: "llm", models: ["m"] }],
  });
  const backend = gateway.dispatcher.backend("e")!;
  while (backend.health === "unknown") await gateway.checker.checkAll();
  assertEquals(backend.health, "healthy");
  return {
    engine,
    gateway,
    backend,
    close: async () => {
      await gateway.close();
      await engine.close();
    },
  };
}

async function chat(gateway: Gateway): Promise<{ status: number; code?: string }> {
  const res = await gateway.handler(
    new Request("http://gw/v1/chat/completions", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }] }),
    }),
    { remoteAddr: LOOPBACK },
  );
  const body = await res.json();
  return { status: res.status, code: body.error?.code };
}

async function dashboardEngine(gateway: Gateway): Promise<Record<string, unknown>> {
  const res = await gateway.handler(
    new Request("http://127.0.0.1:8000/v1/management/dashboard"),
    { remoteAddr: LOOPBACK },
  );
  assertEquals(res.status, 200);
  return (await res.json()).engines[0];
}

Deno.test("health: a backend whose /health hangs once stays healthy and keeps getting requests", async () => {
  const { engine, gateway, backend, close } = await stack();
  try {
    engine.behavior = HANG;
    await gateway.checker.checkAll();
    assertEquals(backend.health, "healthy", "one timed-out probe is not an outage");
    assertEquals(backend.failedProbes, 1);
    assertEquals(backend.snapshot().healthMessage, null);
    assertEquals((await dashboardEngine(gateway)).failed_probes, 1);
    assertEquals(await chat(gateway), { status: 200, code: undefined });

    engine.behavior = {};
    await gateway.checker.checkAll();
    assertEquals([backend.health, backend.failedProbes], ["healthy", 0]);
    assertEquals((await dashboardEngine(gateway)).failed_probes, 0);
  } finally {
    await close();
  }
});

Deno.test("health: three timed-out probes in a row mark a backend unhealthy; one pass brings it back", async () => {
  const { engine, gateway, backend, close } = await stack();
  try {
    // A pass in between starts the count over.
    for (const behavior of [HANG, HANG, {}, HANG, HANG]) {
      engine.behavior = behavior;
      await gateway.checker.checkAll();
      assertEquals(backend.health, "healthy");
    }
    assertEquals(backend.failedProbes, 2);
    await gateway.checker.checkAll();
    assertEquals(backend.health, "unhealthy");
    assertEquals(backend.failedProbes, 3);
    assertMatch(backend.snapshot().healthMessage!, /timed out/);
    assertEquals(await chat(gateway), { status: 503, code: "no_backend_available" });

    engine.behavior = {};
    await gateway.checker.checkAll();
    assertEquals([backend.health, backend.failedProbes], ["healthy", 0]);
    assertEquals(await chat(gateway), { status: 200, code: undefined });
  } finally {
    await close();
  }
});

Deno.test("health: a refused connection marks a healthy backend unhealthy at once", async () => {
  const { engine, gateway, backend, close } = await stack();
  try {
    await engine.close(); // the process is gone: nothing listens on its port
    const result = await gateway.checker.check(backend);
    assertEquals([result.ok, result.failure], [false, "refused"]);
    assertMatch(result.message!, /not reachable: .*refused/i);
    assertEquals([backend.health, backend.failedProbes], ["unhealthy", 1]);
  } finally {
    await close();
  }
});

Deno.test("health: refused is told apart from other failures over fetch too", async () => {
  const engine = new FakeEngine("e");
  const url = engine.serve();
  await engine.close();
  // No transport given: fetch, whose error only says "fetch failed" (the reason is its cause).
  const backend = new Backend(
    validateBackendConfig({ id: "b", baseUrl: url, kind: "llm", models: ["m"] }),
  );
  const result = await backend.probe(AbortSignal.timeout(5_000));
  assertEquals([result.ok, result.failure], [false, "refused"]);
  assertMatch(result.message!, /refused/i);
});

Deno.test("health: a backend that answers 503 is unhealthy at once; 429 is counted like a timeout", async () => {
  const { engine, gateway, backend, close } = await stack();
  try {
    engine.behavior = { healthStatus: 429 };
    await gateway.checker.checkAll();
    await gateway.checker.checkAll();
    assertEquals([backend.health, backend.failedProbes], ["healthy", 2], "busy is not down");
    await gateway.checker.checkAll();
    assertEquals(backend.health, "unhealthy");

    engine.behavior = {};
    await gateway.checker.checkAll();
    assertEquals(backend.health, "healthy");
    engine.behavior = { healthStatus: 503 };
    const result = await gateway.checker.check(backend);
    assertEquals([result.status, result.failure], [503, "answered"]);
    assertEquals([backend.health, backend.failedProbes], ["unhealthy", 1]);
    assertEquals(backend.snapshot().healthMessage, "answered HTTP 503");
  } finally {
    await close();
  }
});

Deno.test("health: a new backend whose first probe times out gets no requests", async () => {
  const engine = new FakeEngine("e", HANG);
  const url = engine.serve();
  const gateway = await createGateway({
    logger: QUIET,
    health: { intervalMs: 600_000, timeoutMs: 150 },
  });
  try {
    const backend = gateway.dispatcher.addBackend({
      id: "new",
      baseUrl: url,
      kind: "llm",
      models: ["m"],
    });
    assertEquals(backend.health, "unknown");
    await gateway.checker.check(backend);
    assertEquals(backend.health, "unhealthy", "never seen healthy: no traffic on a guess");
    assertEquals(await chat(gateway), { status: 503, code: "no_backend_available" });
  } finally {
    await gateway.close();
    await engine.close();
  }
});

Deno.test("health: failureThreshold and successThreshold are the gateway's health options", async () => {
  const { engine, gateway, backend, close } = await stack({
    failureThreshold: 2,
    successThreshold: 2,
  });
  try {
    assertEquals([gateway.checker.failureThreshold, gateway.checker.successThreshold], [2, 2]);
    engine.behavior = HANG;
    await gateway.checker.checkAll();
    assertEquals(backend.health, "healthy");
    await gateway.checker.checkAll();
    assertEquals(backend.health, "unhealthy");

    engine.behavior = {};
    await gateway.checker.checkAll();
    assertEquals(backend.health, "unhealthy", "one pass of two");
    engine.behavior = HANG;
    await gateway.checker.checkAll();
    engine.behavior = {};
    await gateway.checker.checkAll();
    assertEquals(backend.health, "unhealthy", "the passes must be in a row");
    await gateway.checker.checkAll();
    assertEquals(backend.health, "healthy");

    // Marked down by someone else (an engine restarting): passes count from then.
    backend.setHealth("unhealthy", "restarting");
    await gateway.checker.checkAll();
    assertEquals(backend.health, "unhealthy");
    await gateway.checker.checkAll();
    assertEquals(backend.health, "healthy");
  } finally {
    await close();
  }
});

Deno.test("HealthChecker thresholds default to 3 failures and 1 pass; 1 failure restores the old rule", async () => {
  const defaults = new HealthChecker(() => []);
  assertEquals([defaults.failureThreshold, defaults.successThreshold], [3, 1]);
  const odd = new HealthChecker(() => [], { failureThreshold: 0, successThreshold: NaN });
  assertEquals([odd.failureThreshold, odd.successThreshold], [1, 1]);

  const { engine, gateway, backend, close } = await stack({ failureThreshold: 1 });
  try {
    engine.behavior = HANG;
    await gateway.checker.checkAll();
    assertEquals(backend.health, "unhealthy");
  } finally {
    await close();
  }
});

Deno.test("Backend.restarted() forgets the failed probes of the process it replaced", () => {
  const backend = new Backend(
    validateBackendConfig({
      id: "b",
      baseUrl: "http://127.0.0.1:9/v1",
      kind: "llm",
      models: ["m"],
    }),
  );
  backend.setHealth("healthy");
  backend.countProbe(false);
  backend.countProbe(false);
  assertEquals(backend.failedProbes, 2);
  backend.restarted();
  assertEquals([backend.health, backend.failedProbes, backend.passedProbes], ["healthy", 0, 0]);
  assert(backend.isEligible());
});

Deno.test("HealthChecker counts a result another replica shared once, however often it reads it", async () => {
  // Another replica always holds the round's claim and shared one timed-out probe; this replica
  // reads it again each round until that replica shares its next result.
  let shared = JSON.stringify({ ok: false, message: "timed out", failure: "timeout", id: "r1" });
  let reads = 0;
  const coordinator = {
    kind: "redis",
    claim: () => Promise.resolve(false),
    get: () => (reads++, Promise.resolve(shared)),
    put: () => Promise.resolve(),
  } as unknown as Coordinator;
  const backend = new Backend(
    validateBackendConfig({ id: "b", baseUrl: "http://b.test/v1", kind: "llm", models: ["m"] }),
    { transport: new HandlerTransport(() => Promise.reject(new Error("never probed here"))) },
  );
  backend.setHealth("healthy");
  const checker = new HealthChecker(() => [backend], { intervalMs: 10, coordinator });
  checker.start();
  try {
    await until(() => reads >= 5);
    assertEquals([backend.health, backend.failedProbes], ["healthy", 1]);
    shared = JSON.stringify({ ok: false, message: "timed out", failure: "timeout", id: "r2" });
    await until(() => backend.failedProbes === 2);
    shared = JSON.stringify({ ok: false, message: "timed out", failure: "timeout", id: "r3" });
    await until(() => backend.health === "unhealthy");
    assertEquals(backend.failedProbes, 3);
  } finally {
    await checker.stop();
  }
});

// Circuit breakers across gateway replicas sharing a real Redis: a circuit one replica opens is
// open on the other too (it sends the failing backend nothing more), and once the cool-down is
// over one replica at a time sends the half-open probe.
import { assertEquals } from "../_assert.ts";
import { setupLogger } from "../../src/core/logging.ts";
import type { GatewayServer } from "../../src/gateway/gateway_server.ts";
import { redisBinary, startRedisReplicas } from "./_redis_replicas.ts";
import { FakeEngine } from "./_fake_backend.ts";

setupLogger("error");

Deno.test({
  name: "a circuit opened on one gateway replica is open on the other; one probe at a time",
  ignore: redisBinary === null,
  fn: async () => {
    const engine = new FakeEngine("flaky", { status: 500 });
    const url = engine.serve();
    const replicas = await startRedisReplicas(2, {
      dispatcher: { circuit: { failureThreshold: 2, cooldownMs: 1_000 }, maxRetries: 0 },
      health: { intervalMs: 60_000 },
      backends: [{ id: "flaky", baseUrl: url, kind: "llm", models: ["m"] }],
    });
    const chat = async (gateway: GatewayServer) => {
      const res = await fetch(`${gateway.baseUrl}/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }] }),
      });
      await res.body?.cancel();
      return res.status;
    };
    try {
      const [a, b] = replicas.gateways;
      // Two failures open A's circuit.
      assertEquals([await chat(a), await chat(a)], [502, 502]);
      // A publishes the open circuit just after answering.
      await new Promise((r) => setTimeout(r, 100));
      const sent = engine.count();
      // B has seen no failure itself, yet sends the backend nothing.
      for (let i = 0; i < 5; i++) assertEquals(await chat(b), 503);
      assertEquals(engine.count(), sent);

      // After the cool-down the backend has recovered: the probes go one at a time, and both
      // replicas' circuits close.
      engine.behavior = {};
      await new Promise((r) => setTimeout(r, 1_100));
      engine.maxInFlight = 0;
      engine.behavior = { delayMs: 100 };
      const first = await Promise.all([chat(a), chat(b), chat(a), chat(b)]);
      assertEquals(engine.maxInFlight, 1, `probes at once; answers ${first}`);
      const later = await Promise.all([chat(a), chat(b)]);
      assertEquals(later, [200, 200]);
    } finally {
      await replicas.stop();
      await engine.close();
    }
  },
});

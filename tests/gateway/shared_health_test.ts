// Health probes shared by gateway replicas on a real Redis: each round one replica probes a
// backend and the other applies its result, so the backend gets about one probe per round (not
// one per replica), and both replicas see it go unhealthy and come back.
import { assert, assertEquals } from "../_assert.ts";
import { setupLogger } from "../../src/core/logging.ts";
import type { GatewayServer } from "../../src/gateway/gateway_server.ts";
import { redisBinary, startRedisReplicas } from "./_redis_replicas.ts";
import { FakeEngine } from "./_fake_backend.ts";

setupLogger("error");
const INTERVAL_MS = 200;

Deno.test({
  name: "gateway replicas on Redis share health probes: one per round, results seen by both",
  ignore: redisBinary === null,
  fn: async () => {
    const engine = new FakeEngine("e");
    const url = engine.serve();
    const healthOf = (g: GatewayServer) => g.gateway.dispatcher.backends()[0].health;
    const replicas = await startRedisReplicas(2, {
      health: { intervalMs: INTERVAL_MS },
      backends: [{ id: "e", baseUrl: url, kind: "llm", models: ["m"] }],
    });
    const gateways = replicas.gateways;
    try {
      const before = engine.healthChecks;
      const started = Date.now();
      await new Promise((r) => setTimeout(r, 2_000));
      const probes = engine.healthChecks - before;
      // A claim lasts 0.8 of a round: at most one probe per 160 ms whoever asks; two replicas
      // probing alone would make about 20 in 2 s.
      const most = Math.ceil((Date.now() - started) / (INTERVAL_MS * 0.8)) + 1;
      assert(probes <= most, `${probes} probes in 2 s, at most ${most} when shared`);
      assertEquals(gateways.map(healthOf), ["healthy", "healthy"]);

      engine.behavior = { healthStatus: 500 };
      for (const g of gateways) {
        const deadline = Date.now() + 5_000;
        while (healthOf(g) !== "unhealthy" && Date.now() < deadline) {
          await new Promise((r) => setTimeout(r, 20));
        }
      }
      assertEquals(gateways.map(healthOf), ["unhealthy", "unhealthy"]);
    } finally {
      await replicas.stop();
      await engine.close();
    }
  },
});

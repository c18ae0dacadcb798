// Health probes shared by gateway replicas on a real Redis: each round one replica probes a
// backend and the other applies its result, so the backend gets about one probe per round (not
// one per replica), and both replicas see it go unhealthy and come back.
import { assert, assertEquals } from "../_assert.ts";
import { setupLogger } from "../../src/core/logging.ts";
import { type GatewayServer, startGateway } from "../../src/gateway/gateway_server.ts";
import type { HttpLogger } from "../../src/http/logger.ts";
import { RedisCoordinator } from "../../src/coord/redis_coordinator.ts";
import { findRedisServer, startRedis } from "../_helpers/redis_server.ts";
import { FakeEngine } from "./_fake_backend.ts";

setupLogger("error");
const QUIET: HttpLogger = { error: () => {}, warn: () => {} };
const redisBinary = findRedisServer();
const INTERVAL_MS = 200;

Deno.test({
  name: "gateway replicas on Redis share health probes: one per round, results seen by both",
  ignore: redisBinary === null,
  fn: async () => {
    const redis = await startRedis(redisBinary!);
    const engine = new FakeEngine("e");
    const url = engine.serve();
    const coordinators: RedisCoordinator[] = [];
    const gateways: GatewayServer[] = [];
    const healthOf = (g: GatewayServer) => g.gateway.dispatcher.backends()[0].health;
    try {
      for (let i = 0; i < 2; i++) {
        const coordinator = await RedisCoordinator.connect(redis.url);
        coordinators.push(coordinator);
        gateways.push(
          await startGateway({
            logger: QUIET,
            coordinator,
            health: { intervalMs: INTERVAL_MS },
            backends: [{ id: "e", baseUrl: url, kind: "llm", models: ["m"] }],
          }),
        );
      }
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
      for (const g of gateways) await g.stop();
      for (const c of coordinators) await c.close();
      await engine.close();
      await redis.stop();
    }
  },
});

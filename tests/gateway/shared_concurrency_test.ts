// A backend's max_concurrency across gateway replicas: two gateways over real sockets share a
// real Redis coordinator and one slow backend allowed 2 requests at once; however the requests
// are spread over the replicas, the backend never sees more than 2 at once, and all are answered.
import { assertEquals } from "../_assert.ts";
import { setupLogger } from "../../src/core/logging.ts";
import { type GatewayServer, startGateway } from "../../src/gateway/gateway_server.ts";
import type { HttpLogger } from "../../src/http/logger.ts";
import { RedisCoordinator } from "../../src/coord/redis_coordinator.ts";
import { findRedisServer, startRedis } from "../_helpers/redis_server.ts";
import { FakeEngine } from "./_fake_backend.ts";

setupLogger("error");
const QUIET: HttpLogger = { error: () => {}, warn: () => {} };
const redisBinary = findRedisServer();

Deno.test({
  name: "a backend's max_concurrency holds across two gateway replicas sharing Redis",
  ignore: redisBinary === null,
  fn: async () => {
    const redis = await startRedis(redisBinary!);
    const engine = new FakeEngine("slow", { delayMs: 60 });
    const url = engine.serve();
    const coordinators: RedisCoordinator[] = [];
    const gateways: GatewayServer[] = [];
    try {
      for (let i = 0; i < 2; i++) {
        const coordinator = await RedisCoordinator.connect(redis.url);
        coordinators.push(coordinator);
        gateways.push(
          await startGateway({
            logger: QUIET,
            coordinator,
            backends: [{ id: "slow", baseUrl: url, kind: "llm", models: ["m"], maxConcurrency: 2 }],
          }),
        );
      }
      const statuses = await Promise.all(
        Array.from({ length: 12 }, async (_, i) => {
          const res = await fetch(`${gateways[i % 2].baseUrl}/chat/completions`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }] }),
          });
          await res.body?.cancel();
          return res.status;
        }),
      );
      assertEquals(statuses, Array(12).fill(200));
      assertEquals(engine.count(), 12);
      // Each replica alone allows 2: without the shared slots the backend would see up to 4.
      assertEquals(engine.maxInFlight, 2);
    } finally {
      for (const g of gateways) await g.stop();
      for (const c of coordinators) await c.close();
      await engine.close();
      await redis.stop();
    }
  },
});

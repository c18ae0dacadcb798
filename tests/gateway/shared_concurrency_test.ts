// A backend's max_concurrency across gateway replicas: two gateways over real sockets share a
// real Redis coordinator and one slow backend allowed 2 requests at once; however the requests
// are spread over the replicas, the backend never sees more than 2 at once, and all are answered.
import { assertEquals } from "../_assert.ts";
import { setupLogger } from "../../src/core/logging.ts";
import { redisBinary, startRedisReplicas } from "./_redis_replicas.ts";
import { FakeEngine } from "./_fake_backend.ts";

setupLogger("error");

Deno.test({
  name: "a backend's max_concurrency holds across two gateway replicas sharing Redis",
  ignore: redisBinary === null,
  fn: async () => {
    const engine = new FakeEngine("slow", { delayMs: 60 });
    const url = engine.serve();
    const replicas = await startRedisReplicas(2, {
      backends: [{ id: "slow", baseUrl: url, kind: "llm", models: ["m"], maxConcurrency: 2 }],
    });
    const gateways = replicas.gateways;
    try {
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
      await replicas.stop();
      await engine.close();
    }
  },
});

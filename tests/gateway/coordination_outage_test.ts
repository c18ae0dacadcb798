// Two gateway replicas on a real Redis that goes down, then comes back: a key with rate limits gets
// a prompt 503 coordination_unavailable with Retry-After (limits fail closed), requests that need
// no shared limit (a key without limits, the admin key) are still answered, the backend is never
// blamed (no error, circuit closed), /v1/management/replicas is a 503 too and readiness says not
// ready; once Redis is back all of it works again.
import { join } from "node:path";
import { assert, assertEquals, assertMatch } from "../_assert.ts";
import { setupLogger } from "../../src/core/logging.ts";
import { type GatewayServer, startGateway } from "../../src/gateway/gateway_server.ts";
import type { HttpLogger } from "../../src/http/logger.ts";
import { openStateStore } from "../../src/state/open_state_store.ts";
import type { StateStore } from "../../src/state/state_store.ts";
import { RedisCoordinator } from "../../src/coord/redis_coordinator.ts";
import { findRedisServer, startRedis } from "../_helpers/redis_server.ts";
import { FakeEngine } from "./_fake_backend.ts";

setupLogger("critical");
const QUIET: HttpLogger = { error: () => {}, warn: () => {} };
const ADMIN = "admin-secret-for-tests";
const redisBinary = findRedisServer();
const CHAT = { model: "m1", messages: [{ role: "user", content: "hi" }] };

Deno.test({
  name: "Redis down: limited keys get a fast 503 coordination_unavailable, the rest is served, " +
    "no backend is blamed, readiness is 503; all recovers with Redis",
  ignore: redisBinary === null,
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "svc-coord-outage-" });
    let redis = await startRedis(redisBinary!);
    const engine = new FakeEngine("e1");
    const url = engine.serve();
    const states: StateStore[] = [];
    const coordinators: RedisCoordinator[] = [];
    const gateways: GatewayServer[] = [];
    try {
      for (let i = 0; i < 2; i++) {
        const state = await openStateStore(`sqlite:${join(dir, "state.db")}`);
        states.push(state);
        const coordinator = await RedisCoordinator.connect(redis.url);
        coordinators.push(coordinator);
        gateways.push(
          await startGateway({
            logger: QUIET,
            adminApiKey: ADMIN,
            inferenceNeedsKey: true,
            state,
            coordinator,
            backends: [{ id: "e1", baseUrl: url, kind: "llm", models: ["m1"] }],
          }),
        );
      }
      const call = async (
        gw: number,
        key: string,
        method: string,
        path: string,
        body?: unknown,
      ) => {
        const started = Date.now();
        const res = await fetch(`${gateways[gw].baseUrl}${path}`, {
          method,
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
        return { res, json: await res.json(), ms: Date.now() - started };
      };
      const newKey = async (limits: { rpm?: number }) => {
        const made = await call(0, ADMIN, "POST", "/management/keys", {
          name: "k",
          scope: "inference",
          ...limits,
        });
        assertEquals(made.res.status, 201);
        return made.json.key as string;
      };
      const limited = await newKey({ rpm: 1000 });
      const free = await newKey({});
      for (const gw of [0, 1]) {
        assertEquals((await call(gw, limited, "POST", "/chat/completions", CHAT)).res.status, 200);
      }
      const ready = (gw: number) => fetch(`${gateways[gw].url}/health/ready`);

      await redis.stop();
      for (const gw of [0, 1]) {
        const refused = await call(gw, limited, "POST", "/chat/completions", CHAT);
        assertEquals(refused.res.status, 503, JSON.stringify(refused.json));
        assertEquals(refused.json.error.code, "coordination_unavailable");
        assertEquals(refused.res.headers.get("retry-after"), "1");
        assert(refused.ms < 1_500, `answered after ${refused.ms} ms`);
        // What needs no shared limit goes on with this replica's own state.
        for (const key of [free, ADMIN]) {
          const served = await call(gw, key, "POST", "/chat/completions", CHAT);
          assertEquals(served.res.status, 200, JSON.stringify(served.json));
        }
        const replicas = await call(gw, ADMIN, "GET", "/management/replicas");
        assertEquals(replicas.res.status, 503);
        assertEquals(replicas.json.error.code, "coordination_unavailable");
        const notReady = await ready(gw);
        const body = await notReady.json();
        assertEquals(notReady.status, 503);
        assertMatch(body.error.message, /coordination Redis/);
        // Never the backend's fault.
        const backend = gateways[gw].gateway.dispatcher.backend("e1")!;
        assertEquals(backend.snapshot().errors, 0);
        assertEquals(backend.circuit.state, "closed");
      }

      redis = await startRedis(redisBinary!, redis.port);
      for (const gw of [0, 1]) {
        const deadline = Date.now() + 15_000;
        let status = 0;
        while ((status = await ready(gw).then(async (r) => (await r.body?.cancel(), r.status)))) {
          if (status === 200 || Date.now() > deadline) break;
          await new Promise((r) => setTimeout(r, 50));
        }
        assertEquals(status, 200, "ready again once Redis is back");
        assertEquals((await call(gw, limited, "POST", "/chat/completions", CHAT)).res.status, 200);
      }
    } finally {
      for (const g of gateways) await g.stop();
      for (const c of coordinators) await c.close();
      for (const s of states) await s.close();
      await redis.stop();
      await engine.close();
      await Deno.remove(dir, { recursive: true });
    }
  },
});

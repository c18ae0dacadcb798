// Per-key rate limits across replicas: two gateways over real sockets share one state store and
// one coordinator (a real Redis; in process when one gateway is alone): a key's rpm admits exactly
// that many requests whichever replica gets them, then 429 with Retry-After and OpenAI's
// x-ratelimit-* headers; a key's tpm closes once its answers' tokens fill the minute.
import { join } from "node:path";
import { assert, assertEquals, assertMatch } from "../_assert.ts";
import { setupLogger } from "../../src/core/logging.ts";
import { type GatewayServer, startGateway } from "../../src/gateway/gateway_server.ts";
import type { HttpLogger } from "../../src/http/logger.ts";
import { openStateStore } from "../../src/state/open_state_store.ts";
import { openCoordinator } from "../../src/coord/open_coordinator.ts";
import type { Coordinator } from "../../src/coord/coordinator.ts";
import { findRedisServer, startRedis } from "../_helpers/redis_server.ts";
import { FakeEngine } from "./_fake_backend.ts";

setupLogger("error");
const QUIET: HttpLogger = { error: () => {}, warn: () => {} };
const ADMIN = "admin-secret-for-tests";
const redisBinary = findRedisServer();

/** Waits out the last 2 s of a rate window, so one check's requests fall in one window. */
async function awayFromWindowEdge(): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < 2_000) await new Promise((r) => setTimeout(r, left + 50));
}

for (const shared of [false, true]) {
  Deno.test({
    name: `key rate limits ${shared ? "on Redis, across two replicas" : "in one process"}: ` +
      "exact rpm, tpm from usage, 429 with x-ratelimit headers",
    ignore: shared && redisBinary === null,
    fn: async () => {
      const dir = await Deno.makeTempDir({ prefix: "svc-rate-" });
      const redis = shared ? await startRedis(redisBinary!) : undefined;
      const engine = new FakeEngine("e1");
      const url = engine.serve();
      const states = [];
      const coordinators: Coordinator[] = [];
      const gateways: GatewayServer[] = [];
      try {
        for (let i = 0; i < (shared ? 2 : 1); i++) {
          const state = await openStateStore(`sqlite:${join(dir, "state.db")}`);
          const coordinator = await openCoordinator(redis?.url);
          states.push(state);
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
        const call = (gateway: number, key: string, method: string, path: string, body?: unknown) =>
          fetch(`${gateways[gateway % gateways.length].baseUrl}${path}`, {
            method,
            headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
            ...(body === undefined ? {} : { body: JSON.stringify(body) }),
          });
        const newKey = async (limits: { rpm?: number; tpm?: number }) => {
          const res = await call(0, ADMIN, "POST", "/management/keys", {
            name: "limited",
            scope: "inference",
            ...limits,
          });
          assertEquals(res.status, 201);
          return (await res.json()).key as string;
        };
        const chat = { model: "m1", messages: [{ role: "user", content: "hi" }] };

        await awayFromWindowEdge();
        const rpmKey = await newKey({ rpm: 3 });
        const answers = await Promise.all(
          Array.from({ length: 10 }, (_, i) => call(i, rpmKey, "POST", "/chat/completions", chat)),
        );
        const statuses = answers.map((r) => r.status);
        assertEquals(statuses.filter((s) => s === 200).length, 3, String(statuses));
        assertEquals(statuses.filter((s) => s === 429).length, 7, String(statuses));
        const ok = answers.find((r) => r.status === 200)!;
        assertEquals(ok.headers.get("x-ratelimit-limit-requests"), "3");
        assertMatch(ok.headers.get("x-ratelimit-reset-requests") ?? "", /^\d+(ms|s|m\d+s)$/);
        const refused = answers.find((r) => r.status === 429)!;
        const retryAfter = Number(refused.headers.get("retry-after"));
        assert(retryAfter >= 1 && retryAfter <= 60, `retry-after ${retryAfter}`);
        assertEquals(refused.headers.get("x-ratelimit-remaining-requests"), "0");
        const body = await refused.json();
        assertEquals([body.error.type, body.error.code], [
          "rate_limit_error",
          "rate_limit_exceeded",
        ]);
        assertMatch(body.error.message, /3 requests per minute/);
        await Promise.all(answers.filter((r) => !r.bodyUsed).map((r) => r.body?.cancel()));

        // The fake engine's answers use 2 tokens each: a tpm of 4 admits two, then refuses.
        await awayFromWindowEdge();
        const tpmKey = await newKey({ tpm: 4 });
        for (let i = 0; i < 2; i++) {
          const res = await call(i, tpmKey, "POST", "/chat/completions", chat);
          assertEquals(res.status, 200);
          await res.body?.cancel();
        }
        // Tokens are charged after the answer: wait until the replicas see them.
        let last: Response | undefined;
        for (let tries = 0; tries < 100; tries++) {
          last = await call(tries, tpmKey, "POST", "/chat/completions", chat);
          if (last.status === 429) break;
          await last.body?.cancel();
          await new Promise((r) => setTimeout(r, 20));
        }
        assertEquals(last!.status, 429);
        assertMatch((await last!.json()).error.message, /4 tokens per minute/);
        assertEquals(last!.headers.get("x-ratelimit-remaining-tokens"), "0");
      } finally {
        for (const g of gateways) await g.stop();
        for (const c of coordinators) await c.close();
        for (const s of states) await s.close();
        await engine.close();
        await redis?.stop();
        await Deno.remove(dir, { recursive: true });
      }
    },
  });
}

// The state store (a real PostgreSQL, reached through a TCP proxy that is cut and restored) goes
// down under a gateway: a managed key gets a prompt 503 state_unavailable with Retry-After (not a
// 500), so does GET /v1/management/keys, readiness says not ready, the static admin key is still
// served; once the database is reachable again all of it works again. Engine registrations and
// removals get the same 503, and the stored Responses' failures reach readiness too.
import { assert, assertEquals, assertMatch } from "../_assert.ts";
import { setupLogger } from "../../src/core/logging.ts";
import { startGateway } from "../../src/gateway/gateway_server.ts";
import type { HttpLogger } from "../../src/http/logger.ts";
import { openStateStore } from "../../src/state/open_state_store.ts";
import { freshPostgresUrl, POSTGRES_MISSING } from "../state/_postgres.ts";
import { startTcpProxy } from "../_helpers/tcp_proxy.ts";
import { FakeEngine } from "./_fake_backend.ts";
import { StateEngineStore } from "../../src/gateway/engines/state_engine_store.ts";
import { createGatewayApp } from "../../src/gateway/gateway_app.ts";
import { Dispatcher } from "../../src/gateway/dispatcher.ts";
import { StateHealth } from "../../src/gateway/state_health.ts";

setupLogger("critical");
const QUIET: HttpLogger = { error: () => {}, warn: () => {} };
const ADMIN = "admin-secret-for-tests";
const CHAT = { model: "m1", messages: [{ role: "user", content: "hi" }] };

Deno.test({
  name: "Postgres down: managed keys and the key routes get a fast 503 state_unavailable, " +
    "readiness is 503, the admin key is served; all recovers with the database",
  ignore: POSTGRES_MISSING !== undefined,
  fn: async () => {
    const direct = new URL(await freshPostgresUrl());
    const proxy = startTcpProxy(Number(direct.port));
    direct.port = String(proxy.port);
    const state = await openStateStore(direct.toString());
    const engine = new FakeEngine("e1");
    const gw = await startGateway({
      logger: QUIET,
      adminApiKey: ADMIN,
      inferenceNeedsKey: true,
      state,
      backends: [{ id: "e1", baseUrl: engine.serve(), kind: "llm", models: ["m1"] }],
    });
    const call = async (key: string, method: string, path: string, body?: unknown) => {
      const started = Date.now();
      const res = await fetch(`${gw.baseUrl}${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { res, json: await res.json(), ms: Date.now() - started };
    };
    const ready = () =>
      fetch(`${gw.url}/health/ready`).then(async (r) => ({
        status: r.status,
        json: await r.json(),
      }));
    try {
      const made = await call(ADMIN, "POST", "/management/keys", { name: "k", scope: "inference" });
      assertEquals(made.res.status, 201);
      const key = made.json.key as string; // never used yet: not in the lookup cache

      await proxy.cut();
      const refused = await call(key, "POST", "/chat/completions", CHAT);
      assertEquals(refused.res.status, 503, JSON.stringify(refused.json));
      assertEquals(refused.json.error.code, "state_unavailable");
      assertEquals(refused.res.headers.get("retry-after"), "1");
      assert(refused.ms < 4_000, `answered after ${refused.ms} ms`);
      const listed = await call(ADMIN, "GET", "/management/keys");
      assertEquals(listed.res.status, 503, JSON.stringify(listed.json));
      assertEquals(listed.json.error.code, "state_unavailable");
      const notReady = await ready();
      assertEquals(notReady.status, 503);
      assertMatch(notReady.json.error.message, /state store/);
      // The operator's static key needs no lookup.
      assertEquals((await call(ADMIN, "POST", "/chat/completions", CHAT)).res.status, 200);

      proxy.restore();
      const deadline = Date.now() + 20_000;
      while ((await ready()).status !== 200) {
        assert(Date.now() < deadline, "ready again once the database is back");
        await new Promise((r) => setTimeout(r, 100));
      }
      assertEquals((await call(key, "POST", "/chat/completions", CHAT)).res.status, 200);
    } finally {
      await gw.stop();
      await state.close();
      await proxy.stop();
      await engine.close();
    }
  },
});

Deno.test({
  name: "Postgres down: registering and removing engines get a 503 state_unavailable, not a 500; " +
    "both work again with the database",
  ignore: POSTGRES_MISSING !== undefined,
  fn: async () => {
    const direct = new URL(await freshPostgresUrl());
    const proxy = startTcpProxy(Number(direct.port));
    direct.port = String(proxy.port);
    const state = await openStateStore(direct.toString());
    const home = await Deno.makeTempDir({ prefix: "svc-outage-" });
    const engines = [new FakeEngine("e1"), new FakeEngine("e2")];
    const urls = engines.map((e) => e.serve());
    const gw = await startGateway({
      logger: QUIET,
      adminApiKey: ADMIN,
      state,
      management: { home, store: new StateEngineStore(state), remoteOnly: true },
    });
    const call = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${gw.url}/v1/management${path}`, {
        method,
        headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { res, json: await res.json() };
    };
    const register = (id: string, baseUrl: string) =>
      call("POST", "/engines/register", { id, base_url: baseUrl, kind: "llm", models: [id] });
    // deno-lint-ignore no-explicit-any
    const unavailable = (answer: { res: Response; json: any }) => {
      assertEquals(answer.res.status, 503, JSON.stringify(answer.json));
      assertEquals(answer.json.error.code, "state_unavailable");
      assertEquals(answer.res.headers.get("retry-after"), "1");
      assertMatch(answer.json.error.message, /state store.*Engines cannot be registered/);
    };
    try {
      assertEquals((await register("e1", urls[0])).res.status, 201);

      await proxy.cut();
      unavailable(await register("e2", urls[1]));
      unavailable(await call("DELETE", "/engines/e1?drain_timeout_ms=0"));
      // The refused registration is not served.
      assertEquals((await call("GET", "/engines/e2")).res.status, 404);

      proxy.restore();
      const deadline = Date.now() + 20_000;
      /** `ask` until the database answers (503 before), then `want`. */
      const once = async (what: string, want: number, ask: () => ReturnType<typeof call>) => {
        while (true) {
          const again = await ask();
          if (again.res.status === want) return;
          assertEquals(again.res.status, 503, JSON.stringify(again.json));
          assert(Date.now() < deadline, `${what} once the database is back`);
          await new Promise((r) => setTimeout(r, 100));
        }
      };
      // The refused removal stopped e1 here, but the store still lists it: asked again, the
      // removal is saved (it answered 200 without saving, and the store kept e1).
      await once("removes", 200, () => call("DELETE", "/engines/e1?drain_timeout_ms=0"));
      assertEquals(await new StateEngineStore(state).load(), []);
      await once("registers", 201, () => register("e2", urls[1]));
      assertEquals((await call("GET", "/engines/e2")).json.state, "ready");
    } finally {
      await gw.stop();
      await state.close();
      await proxy.stop();
      await Promise.all(engines.map((e) => e.close()));
      await Deno.remove(home, { recursive: true });
    }
  },
});

Deno.test({
  name: "Postgres down: a stored Response that cannot be read is a 503 that readiness sees " +
    "(StateHealth records it), cleared by the next read that works",
  ignore: POSTGRES_MISSING !== undefined,
  fn: async () => {
    const direct = new URL(await freshPostgresUrl());
    const proxy = startTcpProxy(Number(direct.port));
    direct.port = String(proxy.port);
    const state = await openStateStore(direct.toString());
    // No probe runs (createGateway's watch is not here): only the request can tell the outage.
    const stateHealth = new StateHealth();
    const dispatcher = new Dispatcher();
    const server = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen: () => {} },
      createGatewayApp({ dispatcher, state, stateHealth }),
    );
    const url = `http://127.0.0.1:${server.addr.port}/v1/responses/resp_${"0".repeat(32)}`;
    try {
      assertEquals((await fetch(url).then(async (r) => [r.status, await r.json()]))[0], 404);
      await proxy.cut();
      const res = await fetch(url);
      const body = await res.json();
      assertEquals(res.status, 503, JSON.stringify(body));
      assertEquals(body.error.code, "state_unavailable");
      assertMatch(stateHealth.unavailable() ?? "", /cannot reach its state store/);
      proxy.restore();
      const deadline = Date.now() + 20_000;
      while ((await fetch(url).then(async (r) => [r.status, await r.json()]))[0] !== 404) {
        assert(Date.now() < deadline, "found unknown again once the database is back");
        await new Promise((r) => setTimeout(r, 100));
      }
      assertEquals(stateHealth.unavailable(), null);
    } finally {
      await server.shutdown();
      dispatcher.close();
      await state.close();
      await proxy.stop();
    }
  },
});

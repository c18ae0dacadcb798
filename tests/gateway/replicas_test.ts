// Two gateway replicas (in-process, each on its own port) sharing one state store — SQLite always,
// a real PostgreSQL where its binaries exist: a registration on one is served by the other within
// 2 s (the same id registered on both at once: one 201, one 409; none given: both 201, with
// distinct ids), a Responses chain started on one continues on the other, a key revoked on one is
// refused by the other within 2 s.
import OpenAI from "openai";
import { join } from "node:path";
import { assert, assertEquals } from "../_assert.ts";
import { setupLogger } from "../../src/core/logging.ts";
import { StateEngineStore } from "../../src/gateway/engines/state_engine_store.ts";
import { type GatewayServer, startGateway } from "../../src/gateway/gateway_server.ts";
import type { HttpLogger } from "../../src/http/logger.ts";
import { openStateStore } from "../../src/state/open_state_store.ts";
import type { StateStore } from "../../src/state/state_store.ts";
import { freshPostgresUrl, POSTGRES_MISSING } from "../state/_postgres.ts";
import { FakeEngine } from "./_fake_backend.ts";

setupLogger("error");
const QUIET: HttpLogger = { error: () => {}, warn: () => {} };
const ADMIN = "admin-secret-for-tests";

async function replica(state: StateStore, home: string): Promise<GatewayServer> {
  return await startGateway({
    logger: QUIET,
    adminApiKey: ADMIN,
    inferenceNeedsKey: true,
    state,
    management: {
      home,
      store: new StateEngineStore(state, { pollMs: 200 }),
      remoteOnly: true,
    },
  });
}

async function within<T>(ms: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`not seen within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function api(base: string, key: string) {
  return async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: await res.json() };
  };
}

const VARIANTS = [
  {
    name: "sqlite",
    ignore: undefined as string | undefined,
    url: (dir: string) => Promise.resolve(`sqlite:${join(dir, "state.db")}`),
  },
  { name: "postgres", ignore: POSTGRES_MISSING, url: () => freshPostgresUrl() },
];

for (const v of VARIANTS) {
  Deno.test({
    name: `replicas on ${v.name}: registrations, Responses chains and revocations are shared`,
    ignore: v.ignore !== undefined,
    fn: async () => {
      const dir = await Deno.makeTempDir();
      const url = await v.url(dir);
      const engine = new FakeEngine("e1");
      const engineUrl = engine.serve();
      const other = new FakeEngine("e2");
      const otherUrl = other.serve();
      const states = [await openStateStore(url), await openStateStore(url)];
      const [a, b] = [await replica(states[0], dir), await replica(states[1], dir)];
      try {
        const adminA = api(a.baseUrl, ADMIN);
        const adminB = api(b.baseUrl, ADMIN);
        // Registered on A and B at once: one is made, the other is a 409 (was a 500 on
        // PostgreSQL, a duplicate key); served by both within 2 s.
        const registration = { id: "e1", base_url: engineUrl, kind: "chat", models: ["m1"] };
        const regs = await Promise.all(
          [adminA, adminB].map((admin) =>
            admin("POST", "/management/engines/register", registration)
          ),
        );
        assertEquals(regs.map((r) => r.status).sort(), [201, 409], JSON.stringify(regs));
        for (const admin of [adminA, adminB]) {
          await within(2000, async () => {
            const models = await admin("GET", "/models");
            return models.body.data.some((m: { id: string }) => m.id === "m1") ? true : undefined;
          });
        }

        // A key made on A works on B; a chain started on A continues on B.
        const made = await adminA("POST", "/management/keys", { name: "u", scope: "inference" });
        assertEquals(made.status, 201);
        const secret = made.body.key as string;
        const clientA = new OpenAI({ baseURL: a.baseUrl, apiKey: secret, maxRetries: 0 });
        const clientB = new OpenAI({ baseURL: b.baseUrl, apiKey: secret, maxRetries: 0 });
        const first = await clientA.responses.create({ model: "m1", input: "My name is Ada." });
        const second = await clientB.responses.create({
          model: "m1",
          input: "And my name?",
          previous_response_id: first.id,
        });
        assert(second.id !== first.id);
        const history = engine.seen.at(-1)!.body.messages as { content: string }[];
        assert(history.some((m) => m.content === "My name is Ada."), JSON.stringify(history));
        assertEquals((await clientB.responses.retrieve(first.id)).id, first.id);

        // Revoked on A, refused by B within 2 s.
        const revoked = await adminA("DELETE", `/management/keys/${made.body.id}`);
        assertEquals(revoked.status, 200);
        await within(2000, async () => {
          const res = await api(b.baseUrl, secret)("GET", "/models");
          return res.status === 401 ? res : undefined;
        });

        // Removed on B, gone from A within 2 s.
        assertEquals((await adminB("DELETE", "/management/engines/e1")).status, 200);
        await within(2000, async () => {
          const models = await adminA("GET", "/models");
          return models.body.data.length === 0 ? true : undefined;
        });

        // Registered without ids on A and B at once: both made, with ids of their own (an id one
        // made up that the other took first in the store gives way to the next).
        const regsNoId = await Promise.all(
          [[adminA, engineUrl, "m2"], [adminB, otherUrl, "m3"]].map(([admin, url, model]) =>
            (admin as typeof adminA)("POST", "/management/engines/register", {
              base_url: url,
              kind: "chat",
              models: [model],
            })
          ),
        );
        assertEquals(regsNoId.map((r) => r.status), [201, 201], JSON.stringify(regsNoId));
        assert(regsNoId[0].body.id !== regsNoId[1].body.id, JSON.stringify(regsNoId));
      } finally {
        await a.stop();
        await b.stop();
        for (const s of states) await s.close();
        await engine.close();
        await other.close();
        await Deno.remove(dir, { recursive: true });
      }
    },
  });
}

// Stored responses belong to the key that made them, on every replica: two gateways over real
// sockets share one state store (SQLite always, a real PostgreSQL where its binaries exist); another
// managed key (or the admin key) gets 404 response_not_found on get / input_items / delete, 400
// previous_response_not_found or item_not_found when chaining, and cannot evict the owner's
// responses by storing many of its own. A limited key's x-ratelimit-* headers reach /v1/responses
// answers and browsers may read them. A state store out of reach is a 503 with Retry-After, never
// "not found".
import { join } from "node:path";
import { assert, assertEquals } from "../_assert.ts";
import { setupLogger } from "../../src/core/logging.ts";
import { type GatewayServer, startGateway } from "../../src/gateway/gateway_server.ts";
import type { HttpLogger } from "../../src/http/logger.ts";
import { openStateStore } from "../../src/state/open_state_store.ts";
import type { StateStore } from "../../src/state/state_store.ts";
import { freshPostgresUrl, POSTGRES_MISSING } from "../state/_postgres.ts";
import { FakeEngine } from "./_fake_backend.ts";

setupLogger("silent");
const QUIET: HttpLogger = { error: () => {}, warn: () => {} };
const ADMIN = "admin-secret-for-tests";
const MODEL = "m1";

// deno-lint-ignore no-explicit-any
type Json = any;

function api(base: string, key: string) {
  return async (method: string, path: string, body?: unknown, headers = {}) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, headers: res.headers, body: await res.json() as Json };
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

async function replica(state: StateStore, engineUrl: string): Promise<GatewayServer> {
  return await startGateway({
    logger: QUIET,
    adminApiKey: ADMIN,
    inferenceNeedsKey: true,
    state,
    maxStoredResponses: 2,
    backends: [{ id: "e1", baseUrl: engineUrl, kind: "llm", models: [MODEL] }],
  });
}

for (const v of VARIANTS) {
  Deno.test({
    name: `response owners on ${v.name}: another key cannot see, chain, delete or evict them`,
    ignore: v.ignore !== undefined,
    fn: async () => {
      const dir = await Deno.makeTempDir({ prefix: "svc-owners-" });
      const url = await v.url(dir);
      const engine = new FakeEngine("e1");
      const engineUrl = engine.serve();
      const states = [await openStateStore(url), await openStateStore(url)];
      const [a, b] = [await replica(states[0], engineUrl), await replica(states[1], engineUrl)];
      try {
        const admin = api(a.baseUrl, ADMIN);
        const key = async (name: string, rpm?: number) => {
          const made = await admin("POST", "/management/keys", { name, scope: "inference", rpm });
          assertEquals(made.status, 201, JSON.stringify(made.body));
          return made.body.key as string;
        };
        const [alice, mallory] = [await key("alice", 100), await key("mallory")];
        // Alice, from a web page on replica A: her rate limits are on the answer, and readable.
        const created = await api(a.baseUrl, alice)("POST", "/responses", {
          model: MODEL,
          input: "My secret is 42.",
        }, { origin: "https://app.example" });
        assertEquals(created.status, 200, JSON.stringify(created.body));
        assertEquals(created.headers.get("x-ratelimit-limit-requests"), "100");
        assert(created.headers.has("x-ratelimit-remaining-requests"));
        const exposed = created.headers.get("access-control-expose-headers") ?? "";
        for (const name of ["x-ratelimit-remaining-requests", "x-ratelimit-reset-tokens"]) {
          assert(exposed.includes(name), exposed);
        }
        const id = created.body.id as string;
        const itemId = created.body.output[0].id as string;

        // Mallory, on either replica, and the admin key: as if it did not exist.
        for (
          const [base, secret] of [[b.baseUrl, mallory], [a.baseUrl, mallory], [a.baseUrl, ADMIN]]
        ) {
          const as = api(base, secret);
          for (
            const [method, path] of [
              ["GET", `/responses/${id}`],
              ["GET", `/responses/${id}/input_items`],
              ["DELETE", `/responses/${id}`],
            ]
          ) {
            const res = await as(method, path);
            assertEquals(res.status, 404, `${method} ${path}: ${JSON.stringify(res.body)}`);
            assertEquals(res.body.error.code, "response_not_found");
          }
          const chained = await as("POST", "/responses", {
            model: MODEL,
            input: "What is my secret?",
            previous_response_id: id,
          });
          assertEquals(chained.status, 400);
          assertEquals(chained.body.error.code, "previous_response_not_found");
          const referenced = await as("POST", "/responses", {
            model: MODEL,
            input: [{ type: "item_reference", id: itemId }],
          });
          assertEquals(referenced.status, 400);
          assertEquals(referenced.body.error.code, "item_not_found");
        }
        assert(!engine.seen.some((s) => JSON.stringify(s.body).includes("What is my secret?")));

        // Mallory stores far beyond the cap of 2: only her own oldest go.
        const hers: string[] = [];
        for (let i = 0; i < 3; i++) {
          const res = await api(b.baseUrl, mallory)("POST", "/responses", {
            model: MODEL,
            input: `spam ${i}`,
          });
          assertEquals(res.status, 200);
          hers.push(res.body.id);
        }
        assertEquals((await api(b.baseUrl, mallory)("GET", `/responses/${hers[0]}`)).status, 404);
        assertEquals((await api(b.baseUrl, mallory)("GET", `/responses/${hers[2]}`)).status, 200);

        // Alice, on replica B: hers is all there, continues and deletes.
        const asAlice = api(b.baseUrl, alice);
        assertEquals((await asAlice("GET", `/responses/${id}`)).body.id, id);
        assertEquals((await asAlice("GET", `/responses/${id}/input_items`)).status, 200);
        const next = await asAlice("POST", "/responses", {
          model: MODEL,
          input: [{ type: "item_reference", id: itemId }, { role: "user", content: "Again?" }],
          previous_response_id: id,
        });
        assertEquals(next.status, 200, JSON.stringify(next.body));
        const history = engine.seen.at(-1)!.body.messages as { content: string }[];
        assert(history.some((m) => m.content === "My secret is 42."), JSON.stringify(history));
        assertEquals((await asAlice("DELETE", `/responses/${id}`)).body.deleted, true);
        assertEquals((await asAlice("GET", `/responses/${id}`)).status, 404);
      } finally {
        await a.stop();
        await b.stop();
        for (const s of states) await s.close();
        await engine.close();
        await Deno.remove(dir, { recursive: true });
      }
    },
  });

  Deno.test({
    name: `response owners on ${v.name}: a state store out of reach is 503 with Retry-After`,
    ignore: v.ignore !== undefined,
    fn: async () => {
      const dir = await Deno.makeTempDir({ prefix: "svc-owners-" });
      const url = await v.url(dir);
      const engine = new FakeEngine("e1");
      const engineUrl = engine.serve();
      const [up, down] = [await openStateStore(url), await openStateStore(url)];
      const [a, b] = [await replica(up, engineUrl), await replica(down, engineUrl)];
      try {
        // Stored through A; B's connection to the store is then gone.
        const created = await api(a.baseUrl, ADMIN)("POST", "/responses", {
          model: MODEL,
          input: "hello",
        });
        assertEquals(created.status, 200);
        const id = created.body.id as string;
        await down.close();
        const asAdmin = api(b.baseUrl, ADMIN);
        for (
          const [method, path, body] of [
            ["GET", `/responses/${id}`],
            ["GET", `/responses/${id}/input_items`],
            ["DELETE", `/responses/${id}`],
            ["POST", "/responses", { model: MODEL, input: "on", previous_response_id: id }],
          ] as const
        ) {
          const res = await asAdmin(method, path, body);
          assertEquals(res.status, 503, `${method} ${path}: ${JSON.stringify(res.body)}`);
          assertEquals(res.body.error.code, "state_unavailable");
          assert(Number(res.headers.get("retry-after")) > 0);
        }
        // Still there for a replica that reaches the store.
        assertEquals((await api(a.baseUrl, ADMIN)("GET", `/responses/${id}`)).status, 200);
      } finally {
        await a.stop();
        await b.stop();
        await up.close();
        await engine.close();
        await Deno.remove(dir, { recursive: true });
      }
    },
  });
}

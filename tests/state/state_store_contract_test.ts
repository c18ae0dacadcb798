// The StateStore contract, run against SQLite always and against a real PostgreSQL where its
// binaries exist: migrations once and in order (also with two openers at once), engine rows with
// optimistic versions, response caps, keys, usage rollups.
import { join } from "node:path";
import { assert, assertEquals, assertRejects } from "../_assert.ts";
import { ConflictError } from "../../src/core/errors.ts";
import { MIGRATIONS } from "../../src/state/_migrations.ts";
import { openStateStore } from "../../src/state/open_state_store.ts";
import { openPostgres } from "../../src/state/postgres_driver.ts";
import { openSqlite } from "../../src/state/sqlite_driver.ts";
import type { ApiKeyRecord, StateStore } from "../../src/state/state_store.ts";
import { freshPostgresUrl, POSTGRES_MISSING } from "./_postgres.ts";

interface Variant {
  name: string;
  ignore?: string;
  url(): Promise<{ url: string; cleanup(): Promise<void> }>;
}

const VARIANTS: Variant[] = [
  {
    name: "sqlite",
    url: async () => {
      const dir = await Deno.makeTempDir();
      return {
        url: `sqlite:${join(dir, "state.db")}`,
        cleanup: () => Deno.remove(dir, { recursive: true }),
      };
    },
  },
  {
    name: "postgres",
    ignore: POSTGRES_MISSING,
    url: async () => ({ url: await freshPostgresUrl(), cleanup: () => Promise.resolve() }),
  },
];

function contract(title: string, fn: (open: () => Promise<StateStore>) => Promise<void>): void {
  for (const v of VARIANTS) {
    Deno.test({
      name: `${v.name}: ${title}`,
      ignore: v.ignore !== undefined,
      fn: async () => {
        const { url, cleanup } = await v.url();
        const opened: StateStore[] = [];
        try {
          await fn(async () => {
            const s = await openStateStore(url);
            opened.push(s);
            return s;
          });
        } finally {
          for (const s of opened) await s.close();
          await cleanup();
        }
      },
    });
  }
}
if (POSTGRES_MISSING) console.warn(`postgres variants ignored: ${POSTGRES_MISSING}`);

contract("two stores opened at once migrate once and share state", async (open) => {
  const [a, b] = await Promise.all([open(), open()]);
  await a.putEngine("e1", { baseUrl: "http://x/v1" }, null);
  const seen = await b.listEngines();
  assertEquals(seen.engines.map((e) => e.id), ["e1"]);
  assertEquals(seen.version, await a.enginesVersion());
  // A third opener finds the schema current and applies nothing.
  const c = await open();
  assertEquals((await c.listEngines()).engines.length, 1);
});

contract("putEngine() refuses a stale version so no registration is lost", async (open) => {
  const a = await open();
  const b = await open();
  const v0 = await a.enginesVersion();
  const v1 = await a.putEngine("e1", { n: 1 }, null);
  assertEquals(v1, 1);
  // Another replica registering the same id at once gets a conflict, not an overwrite.
  await assertRejects(() => b.putEngine("e1", { n: 2 }, null), ConflictError);
  await assertRejects(() => b.putEngine("e1", { n: 2 }, 5), ConflictError);
  assertEquals(await b.putEngine("e1", { n: 2 }, 1), 2);
  await b.putEngine("e2", { n: 3 }, null);
  const listing = await a.listEngines();
  assertEquals(listing.engines.map((e) => [e.id, e.version, e.data.n]), [["e1", 2, 2], [
    "e2",
    1,
    3,
  ]]);
  assert(listing.version >= v0 + 3);
  assertEquals(await a.deleteEngine("e1"), true);
  assertEquals(await a.deleteEngine("e1"), false);
  assertEquals((await b.listEngines()).engines.map((e) => e.id), ["e2"]);
});

contract(
  "putEngine() at the same moment from two replicas: one wins, one conflicts",
  async (open) => {
    const a = await open();
    const b = await open();
    const outcomes = async (writes: Promise<number>[]) =>
      (await Promise.allSettled(writes)).map((r) =>
        r.status === "fulfilled" ? r.value : (r.reason as Error).constructor.name
      ).sort();
    for (let i = 0; i < 5; i++) {
      // Two first registrations of one id, then two updates of the same version.
      const first = [a.putEngine(`e${i}`, { n: 1 }, null), b.putEngine(`e${i}`, { n: 2 }, null)];
      assertEquals(await outcomes(first), [1, "ConflictError"]);
      const next = [a.putEngine(`e${i}`, { n: 3 }, 1), b.putEngine(`e${i}`, { n: 4 }, 1)];
      assertEquals(await outcomes(next), [2, "ConflictError"]);
    }
  },
);

contract("concurrent registrations of different engines all survive", async (open) => {
  const a = await open();
  const b = await open();
  await Promise.all(
    Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).putEngine(`e${i}`, { i }, null)),
  );
  assertEquals((await a.listEngines()).engines.length, 20);
});

contract("putResponse() keeps the newest within the entry and byte caps", async (open) => {
  const s = await open();
  const caps = { maxEntries: 3, maxTotalBytes: 1_000_000 };
  for (let i = 0; i < 5; i++) await s.putResponse(`r${i}`, "", JSON.stringify({ i }), caps);
  assertEquals(await s.getResponse("r0", ""), undefined);
  assertEquals(await s.getResponse("r1", ""), undefined);
  assertEquals(await s.getResponse("r4", ""), JSON.stringify({ i: 4 }));
  // The byte cap: two 46-byte entries fit in 95, the third evicts the oldest.
  const big = (n: number) => JSON.stringify({ pad: "x".repeat(30), n });
  const bytes = { maxEntries: 100, maxTotalBytes: 95 };
  await s.putResponse("b1", "", big(1), bytes);
  await s.putResponse("b2", "", big(2), bytes);
  assertEquals(await s.getResponse("r4", ""), undefined);
  await s.putResponse("b3", "", big(3), bytes);
  assertEquals(await s.getResponse("b1", ""), undefined);
  assertEquals(await s.getResponse("b3", ""), big(3));
  assertEquals(await s.deleteResponse("b3", ""), true);
  assertEquals(await s.deleteResponse("b3", ""), false);
});

contract("a response is its owner's: others neither read, delete nor evict it", async (open) => {
  const a = await open();
  const b = await open();
  const caps = { maxEntries: 2, maxTotalBytes: 1_000_000 };
  await a.putResponse("mine", "key_a", JSON.stringify({ n: 0 }), caps);
  // Another replica, another key: nothing to see, nothing to delete.
  assertEquals(await b.getResponse("mine", "key_b"), undefined);
  assertEquals(await b.getResponse("mine", ""), undefined);
  assertEquals(await b.deleteResponse("mine", "key_b"), false);
  // key_b writing far beyond the cap evicts only its own oldest.
  for (let i = 1; i <= 5; i++) await b.putResponse(`b${i}`, "key_b", JSON.stringify({ i }), caps);
  assertEquals(await a.getResponse("mine", "key_a"), JSON.stringify({ n: 0 }));
  assertEquals(await b.getResponse("b3", "key_b"), undefined);
  assertEquals(await b.getResponse("b5", "key_b"), JSON.stringify({ i: 5 }));
  // The byte cap too is per owner.
  await b.putResponse("big", "key_b", JSON.stringify({ pad: "x".repeat(200) }), {
    maxEntries: 100,
    maxTotalBytes: 212, // the new one (210 bytes) alone
  });
  assertEquals(await b.getResponse("b5", "key_b"), undefined);
  assertEquals(await a.getResponse("mine", "key_a"), JSON.stringify({ n: 0 }));
  assertEquals(await a.deleteResponse("mine", "key_a"), true);
});

for (const v of VARIANTS) {
  Deno.test({
    name: `${v.name}: responses stored before owners (schema 1) become the shared owner's`,
    ignore: v.ignore !== undefined,
    fn: async () => {
      const { url, cleanup } = await v.url();
      try {
        // A database at schema version 1 with one response, as an older svc left it.
        const db = url.startsWith("postgres")
          ? await openPostgres(url)
          : await openSqlite(url.slice("sqlite:".length));
        try {
          await db.transaction(async (tx) => {
            await tx.run(`CREATE TABLE svc_migrations (
              version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)`);
            for (const statement of MIGRATIONS[0][db.dialect]) await tx.run(statement);
            await tx.run(
              "INSERT INTO svc_migrations (version, name, applied_at) VALUES (1, 'v1', 0)",
            );
            await tx.run(
              "INSERT INTO svc_responses (id, bytes, data, created_at) VALUES ('old', 2, '{}', 0)",
            );
          });
        } finally {
          await db.close();
        }
        const s = await openStateStore(url);
        try {
          assertEquals(await s.getResponse("old", ""), "{}");
          assertEquals(await s.getResponse("old", "key_a"), undefined);
          await s.putResponse("new", "key_a", "{}", { maxEntries: 1, maxTotalBytes: 100 });
          assertEquals(await s.getResponse("old", ""), "{}");
          assertEquals(await s.getResponse("new", "key_a"), "{}");
        } finally {
          await s.close();
        }
      } finally {
        await cleanup();
      }
    },
  });
}

contract("keys are found by hash, listed and revoked", async (open) => {
  const s = await open();
  const key: ApiKeyRecord = {
    id: "key_1",
    name: "ci",
    scope: "inference",
    hash: "ab".repeat(32),
    prefix: "sk-svc-abc",
    rpm: 60,
    tpm: null,
    models: ["m1"],
    createdAt: 100,
    revokedAt: null,
  };
  await s.createKey(key);
  assertEquals(await s.findKeyByHash(key.hash), key);
  assertEquals(await s.findKeyByHash("cd".repeat(32)), undefined);
  await assertRejects(() => s.createKey(key), Error);
  assertEquals(await s.revokeKey("key_1", 200), true);
  assertEquals(await s.revokeKey("key_1", 300), false);
  assertEquals(await s.revokeKey("key_nope", 300), false);
  assertEquals((await s.listKeys())[0].revokedAt, 200);
});

contract("addUsage() sums per key, model and day", async (open) => {
  const a = await open();
  const b = await open();
  const row = { keyId: "k", model: "m", day: "2026-01-02", requests: 1 };
  await Promise.all([
    a.addUsage({ ...row, promptTokens: 3, completionTokens: 5 }),
    b.addUsage({ ...row, promptTokens: 7, completionTokens: 11 }),
    a.addUsage({ ...row, day: "2026-01-03", promptTokens: 1, completionTokens: 1 }),
  ]);
  assertEquals(await a.listUsage({ since: "2026-01-02" }), [
    { ...row, requests: 2, promptTokens: 10, completionTokens: 16 },
    { ...row, day: "2026-01-03", promptTokens: 1, completionTokens: 1 },
  ]);
  assertEquals((await b.listUsage({ keyId: "other" })).length, 0);
});

Deno.test("openStateStore() names the accepted forms for an unknown URL", async () => {
  const err = await assertRejects(() => openStateStore("redis://x"), Error);
  assert(/sqlite:<path> or postgres:\/\//.test(err.message), err.message);
});

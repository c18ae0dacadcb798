// The coordinator contract, in process and on a real Redis shared by two "replicas" (two
// clients): exact rate limits under concurrency, shared slots that a dead holder loses after
// their time to live, one claim at a time, expiring values and members.
import { assert, assertEquals, assertMatch } from "../_assert.ts";
import { type Coordinator, isCoordinationUnavailable } from "../../src/coord/coordinator.ts";
import { LocalCoordinator } from "../../src/coord/local_coordinator.ts";
import { RedisCoordinator } from "../../src/coord/redis_coordinator.ts";
import { openCoordinator } from "../../src/coord/open_coordinator.ts";
import { ConfigurationError, type ServiceUnavailableError } from "../../src/core/errors.ts";
import { findRedisServer, type RedisServer, startRedis } from "../_helpers/redis_server.ts";
import { freePort } from "../_helpers/free_port.ts";
import { waitFor } from "../_helpers/wait.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Waits out the last second of a rate window, so counts of one step fall in one window. */
async function awayFromWindowEdge(): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < 1_000) await sleep(left + 50);
}
const redisBinary = findRedisServer();

/** Two replicas' views of one coordination space, and how to end it. */
interface Pair {
  a: Coordinator;
  b: Coordinator;
  close(): Promise<void>;
}

function localPair(): Promise<Pair> {
  const one = new LocalCoordinator();
  return Promise.resolve({ a: one, b: one, close: () => one.close() });
}

async function redisPair(): Promise<Pair> {
  const server: RedisServer = await startRedis(redisBinary!);
  const a = await RedisCoordinator.connect(server.url);
  const b = await RedisCoordinator.connect(server.url);
  return {
    a,
    b,
    close: async () => {
      await Promise.all([a.close(), b.close()]);
      await server.stop();
    },
  };
}

const KINDS: [string, () => Promise<Pair>, boolean][] = [
  ["in process", localPair, false],
  ["on Redis", redisPair, redisBinary === null],
];

for (const [where, open, ignore] of KINDS) {
  Deno.test({
    name: `coordinator ${where}: rates, slots, claims, values and members hold across replicas`,
    ignore,
    fn: async (t) => {
      const { a, b, close } = await open();
      try {
        await t.step(
          "an rpm limit admits exactly that many of many concurrent requests",
          async () => {
            const decisions = await Promise.all(
              Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).admit("key-1", { rpm: 5 })),
            );
            assertEquals(decisions.filter((d) => d.allowed).length, 5);
            const refused = decisions.find((d) => !d.allowed)!;
            assertEquals(refused.limitedBy, "requests");
            assert(refused.retryAfterMs > 0 && refused.retryAfterMs <= 60_000);
            assertEquals(refused.requests?.remaining, 0);
            // Another key has its own window.
            assert((await a.admit("key-2", { rpm: 5 })).allowed);
          },
        );
        await t.step("tokens charged after answers close a tpm limit", async () => {
          await awayFromWindowEdge();
          const first = await a.admit("key-3", { tpm: 100 });
          assertEquals([first.allowed, first.tokens?.remaining], [true, 100]);
          await b.charge("key-3", 60);
          assertEquals((await a.admit("key-3", { tpm: 100 })).tokens?.remaining, 40);
          await a.charge("key-3", 40);
          const refused = await b.admit("key-3", { tpm: 100 });
          assertEquals([refused.allowed, refused.limitedBy], [false, "tokens"]);
        });
        await t.step("slots are shared: at most max held, freed on release", async () => {
          const one = await a.acquire("backend-x", 2);
          const two = await b.acquire("backend-x", 2);
          assert(one !== null && two !== null);
          assertEquals(await a.acquire("backend-x", 2), null);
          await two.release();
          await two.release(); // twice frees one slot only
          const three = await a.acquire("backend-x", 2);
          assert(three !== null);
          assertEquals(await b.acquire("backend-x", 2), null);
          await Promise.all([one.release(), three.release()]);
        });
        await t.step("one claim at a time until it expires or is released", async () => {
          assert(await a.claim("probe:x", 10_000));
          assertEquals(await b.claim("probe:x", 10_000), false);
          await a.release("probe:x");
          assert(await b.claim("probe:x", 150));
          await sleep(300);
          assert(await a.claim("probe:x", 10_000), "the claim expired");
        });
        await t.step("values expire; members are those with a live heartbeat", async () => {
          await a.put("open:x", "123", 10_000);
          assertEquals(await b.get("open:x"), "123");
          await a.put("open:y", "1", 99.6); // fractional milliseconds are fine
          await a.heartbeat("replica-a", 10_000);
          await b.heartbeat("replica-b", 100);
          await sleep(250);
          assertEquals(await b.get("open:y"), null);
          assertEquals(await b.members(), ["replica-a"]);
        });
      } finally {
        await close();
      }
    },
  });
}

Deno.test({
  name: "coordinator on Redis: a dead replica's slots expire after their time to live",
  ignore: redisBinary === null,
  fn: async () => {
    const server = await startRedis(redisBinary!);
    const dying = await RedisCoordinator.connect(server.url);
    const living = await RedisCoordinator.connect(server.url);
    try {
      assert(await dying.acquire("backend-y", 1, 300) !== null);
      assertEquals(await living.acquire("backend-y", 1, 300), null);
      await dying.close(); // gone without releasing: no more renewals
      await sleep(500);
      const lease = await living.acquire("backend-y", 1, 10_000);
      assert(lease !== null, "the dead holder's slot expired");
      await lease.release();
    } finally {
      await living.close();
      await server.stop();
    }
  },
});

Deno.test({
  name: "coordinator on Redis: a held slot is renewed past its time to live",
  ignore: redisBinary === null,
  fn: async () => {
    const server = await startRedis(redisBinary!);
    const a = await RedisCoordinator.connect(server.url);
    try {
      const lease = await a.acquire("backend-z", 1, 1_000);
      assert(lease !== null);
      await sleep(2_500); // two and a half lifetimes: renewed every 333 ms
      assertEquals(await a.acquire("backend-z", 1, 1_000), null);
      await lease.release();
      assert(await a.acquire("backend-z", 1, 1_000) !== null);
    } finally {
      await a.close();
      await server.stop();
    }
  },
});

Deno.test("openCoordinator: none is in process; redis:// connects; anything else names --coord", async () => {
  assertEquals((await openCoordinator()).kind, "local");
  for (const url of ["postgres://x", "not a url"]) {
    const err = await openCoordinator(url).then(() => null, (e) => e);
    assert(err instanceof ConfigurationError, String(err));
    assertEquals(err.param, "coord");
  }
});

/** Resolves with how long `work` took to reject, and what it rejected with. */
async function rejection(work: Promise<unknown>): Promise<{ ms: number; err: unknown }> {
  const started = Date.now();
  const err = await work.then(() => new Error("it resolved"), (e) => e);
  return { ms: Date.now() - started, err };
}

Deno.test({
  name:
    "coordinator on Redis: down, every call fails at once with a 503 coordination_unavailable; " +
    "it works again once Redis is back",
  ignore: redisBinary === null,
  fn: async () => {
    let server = await startRedis(redisBinary!);
    const a = await RedisCoordinator.connect(server.url);
    try {
      assertEquals(a.unavailable(), null);
      await server.stop();
      for (
        const call of [
          () => a.admit("k", { rpm: 5 }),
          () => a.acquire("backend-q", 2),
          () => a.claim("probe", 1_000),
          () => a.get("v"),
          () => a.members(),
        ]
      ) {
        const { ms, err } = await rejection(call());
        assert(isCoordinationUnavailable(err), String(err));
        assertEquals((err as ServiceUnavailableError).retryAfterSeconds, 1);
        assert(ms < 1_500, `failed after ${ms} ms`);
      }
      assertMatch(a.unavailable() ?? "", /coordination Redis at 127\.0\.0\.1:\d+/);
      server = await startRedis(redisBinary!, server.port);
      await waitFor(() => a.unavailable() === null, { timeoutMs: 15_000, what: "reconnection" });
      assertEquals((await a.admit("k", { rpm: 5 })).allowed, true);
    } finally {
      await a.close();
      await server.stop();
    }
  },
});

Deno.test({
  name:
    "coordinator on Redis: a Redis that hangs fails a call after the command timeout, not later",
  ignore: redisBinary === null,
  fn: async () => {
    const server = await startRedis(redisBinary!);
    const a = await RedisCoordinator.connect(server.url, { commandTimeoutMs: 300 });
    try {
      server.pause();
      const { ms, err } = await rejection(a.admit("k", { rpm: 5 }));
      assert(isCoordinationUnavailable(err), String(err));
      assert(ms < 3_000, `failed after ${ms} ms`);
      assert(a.unavailable() !== null, "a timed-out command makes it unavailable");
      server.resume();
      assertEquals((await a.admit("k", { rpm: 5 })).allowed, true);
      assertEquals(a.unavailable(), null);
    } finally {
      server.resume();
      await a.close();
      await server.stop();
    }
  },
});

Deno.test({
  name: "coordinator on Redis: releasing a claim that expired leaves the next holder's claim alone",
  ignore: redisBinary === null,
  fn: async () => {
    const server = await startRedis(redisBinary!);
    const a = await RedisCoordinator.connect(server.url);
    const b = await RedisCoordinator.connect(server.url);
    try {
      assert(await a.claim("probe:x", 50));
      // a's claim expires (Redis' clock); b then holds it for long.
      while (!(await b.claim("probe:x", 60_000))) await sleep(10);
      await a.release("probe:x"); // late: a no longer holds it
      assertEquals(await a.claim("probe:x", 60_000), false, "b still holds the claim");
      await b.release("probe:x");
      assert(await a.claim("probe:x", 60_000), "b's own release frees it");
    } finally {
      await Promise.all([a.close(), b.close()]);
      await server.stop();
    }
  },
});

Deno.test("coordinator on Redis: nothing listening at the URL is a configuration error at once", async () => {
  const url = `redis://127.0.0.1:${freePort()}`;
  const { ms, err } = await rejection(RedisCoordinator.connect(url));
  assert(err instanceof ConfigurationError, String(err));
  assertMatch(err.message, /cannot reach the coordination Redis at 127\.0\.0\.1:\d+/);
  assertEquals(err.param, "coord");
  assert(ms < 6_000, `failed after ${ms} ms`);
});

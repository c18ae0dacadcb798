import { assert, assertEquals, assertThrows } from "../_assert.ts";
import { ValidationError } from "../../src/core/errors.ts";
import { Backend } from "../../src/gateway/backend.ts";
import {
  type BackendInstanceConfig,
  validateBackendConfig,
} from "../../src/gateway/backend_config.ts";
import { createRoutingStrategy } from "../../src/gateway/routing.ts";

function mk(id: string, config: Partial<BackendInstanceConfig> = {}): Backend {
  return new Backend(validateBackendConfig({
    id,
    baseUrl: "http://127.0.0.1:9/v1",
    kind: "llm",
    models: ["m"],
    ...config,
  }));
}

/** Picks `n` times, each pick immediately finished (no load builds up). */
function picks(n: number, fn: () => Backend): string[] {
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(fn().id);
  return out;
}

Deno.test("round_robin spreads requests by weight, interleaved", () => {
  const a = mk("a", { weight: 2 });
  const b = mk("b", { weight: 1 });
  const rr = createRoutingStrategy("round_robin");
  const order = picks(6, () => rr.select([a, b], {}));
  assertEquals(order, ["a", "b", "a", "a", "b", "a"]);
  const c = mk("c");
  const three = picks(300, () => rr.select([a, b, c], {}));
  assertEquals(three.filter((x) => x === "a").length, 150);
  assertEquals(three.filter((x) => x === "b").length, 75);
  assertEquals(three.filter((x) => x === "c").length, 75);
});

Deno.test("least_loaded picks the fewest in flight relative to maxConcurrency", () => {
  const big = mk("big", { maxConcurrency: 10 });
  const small = mk("small", { maxConcurrency: 2 });
  const ll = createRoutingStrategy("least_loaded");
  for (let i = 0; i < 3; i++) assert(big.tryAcquire()); // 3/10 = 0.3
  assert(small.tryAcquire()); // 1/2 = 0.5
  assertEquals(ll.select([big, small], {}).id, "big");
  for (let i = 0; i < 3; i++) big.tryAcquire(); // 6/10 = 0.6
  assertEquals(ll.select([big, small], {}).id, "small");
});

Deno.test("least_loaded alternates between equally idle instances", () => {
  const a = mk("a");
  const b = mk("b");
  const ll = createRoutingStrategy("least_loaded");
  assertEquals(picks(4, () => ll.select([a, b], {})), ["a", "b", "a", "b"]);
});

Deno.test("latency_aware tries unmeasured instances first, then the fastest", () => {
  const fast = mk("fast");
  const slow = mk("slow");
  const la = createRoutingStrategy("latency_aware", { explorationInterval: 1000 });
  const first = la.select([slow, fast], {});
  first.recordLatency(first === slow ? 300 : 20);
  const second = la.select([slow, fast], {});
  assert(second !== first, "the unmeasured one is explored next");
  second.recordLatency(second === slow ? 300 : 20);
  assertEquals(picks(5, () => la.select([slow, fast], {})), [
    "fast",
    "fast",
    "fast",
    "fast",
    "fast",
  ]);
});

Deno.test("latency_aware weighs an instance's load into its predicted latency", () => {
  const x = mk("x", { maxConcurrency: 2 });
  const y = mk("y", { maxConcurrency: 2 });
  x.recordLatency(100);
  y.recordLatency(140);
  const la = createRoutingStrategy("latency_aware", { explorationInterval: 1000 });
  assertEquals(la.select([x, y], {}).id, "x");
  x.tryAcquire(); // predicted 100 * (1 + 1/2) = 150 > 140
  assertEquals(la.select([x, y], {}).id, "y");
});

Deno.test("latency_aware explores the instance measured longest ago every N picks", () => {
  const a = mk("a");
  const b = mk("b");
  b.recordLatency(500); // b: old and slow
  a.recordLatency(10);
  const la = createRoutingStrategy("latency_aware", { explorationInterval: 3 });
  const order = picks(6, () => {
    const chosen = la.select([a, b], {});
    if (chosen === a) a.recordLatency(10);
    return chosen;
  });
  assertEquals(order, ["a", "a", "b", "a", "a", "b"]);
});

Deno.test("sticky sends a user to the same instance and moves few users when one is added", () => {
  const pool = ["a", "b", "c"].map((id) => mk(id));
  const st = createRoutingStrategy("sticky");
  const before = new Map<string, string>();
  for (let u = 0; u < 300; u++) {
    const key = `user-${u}`;
    const first = st.select(pool, { userKey: key }).id;
    assertEquals(st.select(pool, { userKey: key }).id, first);
    before.set(key, first);
  }
  const counts = ["a", "b", "c"].map((id) => [...before.values()].filter((v) => v === id).length);
  assert(counts.every((n) => n > 60), `spread: ${counts}`);
  const grown = [...pool, mk("d")];
  let moved = 0;
  for (const [key, was] of before) {
    const now = st.select(grown, { userKey: key }).id;
    if (now !== was) {
      moved++;
      assertEquals(now, "d", "a key only ever moves to the new instance");
    }
  }
  assert(moved > 30 && moved < 120, `about a quarter moved: ${moved}`);
  // A busy instance (not among the candidates) sends its keys to their second choice.
  const key = [...before].find(([, v]) => v === "a")![0];
  const second = st.select([pool[1], pool[2]], { userKey: key }).id;
  assertEquals(st.select([pool[1], pool[2]], { userKey: key }).id, second);
});

Deno.test("sticky without a key acts as least_loaded", () => {
  const a = mk("a");
  const b = mk("b");
  a.tryAcquire();
  assertEquals(createRoutingStrategy("sticky").select([a, b], {}).id, "b");
});

Deno.test("createRoutingStrategy() rejects an unknown name", () => {
  assertThrows(() => createRoutingStrategy("random" as never), ValidationError, "round_robin");
});

import { assert, assertEquals, assertRejects, assertThrows } from "../_assert.ts";
import { RateLimitError, ServiceUnavailableError, ValidationError } from "../../src/core/errors.ts";
import { Dispatcher } from "../../src/gateway/dispatcher.ts";
import { createSchedulingPolicy, readSchedulingHints } from "../../src/gateway/scheduling.ts";
import { chat, FakeEngine, SILENT, tags, until } from "./_fake_backend.ts";

function queued(d: Dispatcher): number {
  return d.snapshot().pools.reduce((n, p) => n + p.queueLength, 0);
}

/**
 * One instance with one slot: a first request holds it while `send` queues the others, then the
 * slot is freed and the order in which they reach the instance is returned.
 */
async function orderUnderSaturation(
  policy: "fifo" | "priority" | "slo_aware",
  send: (d: Dispatcher) => Promise<Response>[],
): Promise<string[]> {
  const fake = new FakeEngine("a");
  const d = new Dispatcher({ policy, logger: SILENT });
  d.addBackend(fake.backend({ maxConcurrency: 1 }));
  const release = fake.hold();
  const first = d.dispatch({ kind: "chat", model: "m", body: chat("first") });
  await until(() => fake.seen.length === 1);
  const rest = send(d);
  assertEquals(queued(d), rest.length);
  release();
  for (const res of [first, ...rest]) await (await res).body?.cancel();
  assertEquals(fake.maxInFlight, 1);
  return tags(fake).slice(1);
}

Deno.test("fifo serves waiting requests in arrival order, whatever their priority", async () => {
  const order = await orderUnderSaturation(
    "fifo",
    (d) =>
      [["r1", "1"], ["r2", "9"], ["r3", "5"]].map(([tag, p]) =>
        d.dispatch({
          kind: "chat",
          model: "m",
          body: chat(tag),
          headers: new Headers({ "x-priority": p }),
        })
      ),
  );
  assertEquals(order, ["r1", "r2", "r3"]);
});

Deno.test("priority serves higher priority first, FIFO among equals", async () => {
  const order = await orderUnderSaturation("priority", (d) => [
    d.dispatch({ kind: "chat", model: "m", body: chat("low-1", { priority: 1 }) }),
    d.dispatch({
      kind: "chat",
      model: "m",
      body: chat("high"),
      headers: new Headers({ "x-priority": "9" }),
    }),
    d.dispatch({ kind: "chat", model: "m", body: chat("low-2", { priority: 1 }) }),
    d.dispatch({ kind: "chat", model: "m", body: chat("mid", { priority: 5 }) }),
    d.dispatch({ kind: "chat", model: "m", body: chat("none") }),
  ]);
  assertEquals(order, ["high", "mid", "low-1", "low-2", "none"]);
});

Deno.test("priority: the gateway-only priority field is not sent upstream", async () => {
  const fake = new FakeEngine("a");
  const d = new Dispatcher({ policy: "priority", logger: SILENT });
  d.addBackend(fake.backend());
  await (await d.dispatch({ kind: "chat", model: "m", body: chat("x", { priority: 3 }) })).text();
  assertEquals(fake.seen[0].body.priority, undefined);
});

Deno.test("slo_aware serves the earliest deadline first", async () => {
  const deadline = (ms: string) => new Headers({ "x-deadline-ms": ms });
  const order = await orderUnderSaturation("slo_aware", (d) => [
    d.dispatch({ kind: "chat", model: "m", body: chat("d9000"), headers: deadline("9000") }),
    d.dispatch({ kind: "chat", model: "m", body: chat("default") }), // default SLO 30 s
    d.dispatch({ kind: "chat", model: "m", body: chat("d2000"), headers: deadline("2000") }),
    d.dispatch({ kind: "chat", model: "m", body: chat("d5000"), headers: deadline("5000") }),
  ]);
  assertEquals(order, ["d2000", "d5000", "d9000", "default"]);
});

Deno.test("slo_aware refuses at once a request whose deadline cannot be met", async () => {
  const fake = new FakeEngine("a");
  const d = new Dispatcher({ policy: "slo_aware", logger: SILENT });
  const backend = d.addBackend(fake.backend({ maxConcurrency: 1 }));
  backend.recordLatency(1000); // observed: about 1 s per request
  const release = fake.hold();
  const send = (tag: string, ms: number) =>
    d.dispatch({
      kind: "chat",
      model: "m",
      body: chat(tag),
      headers: new Headers({ "x-deadline-ms": String(ms) }),
    });
  const first = send("first", 60_000);
  await until(() => fake.seen.length === 1);
  // Wait estimates: slot frees in ~1 s per request ahead, then ~1 s of work.
  const q1 = send("q1", 3500); // 0 ahead: done in ~2 s
  const q2 = send("q2", 3600); // 1 ahead: ~3 s
  const started = performance.now();
  const err = await assertRejects(() => send("q3", 3700), ServiceUnavailableError, "deadline");
  assertEquals(err.code, "deadline_unmeetable"); // 2 ahead: ~4 s > 3.7 s
  assert(err.retryAfterSeconds >= 1);
  await assertRejects(() => send("too-short", 1500), ServiceUnavailableError, "cannot be met");
  assert(performance.now() - started < 500, "refused early, not after waiting");
  const jump = send("jump", 2500); // earliest deadline: nothing ahead, ~2 s
  assertEquals(queued(d), 3);
  release();
  for (const r of [first, q1, q2, jump]) await (await r).body?.cancel();
  assertEquals(tags(fake), ["first", "jump", "q1", "q2"]);
  assertEquals(d.snapshot().pools[0].rejected, 2);
});

Deno.test("slo_aware rejects a waiting request when its deadline passes", async () => {
  const fake = new FakeEngine("a");
  const d = new Dispatcher({ policy: "slo_aware", logger: SILENT });
  d.addBackend(fake.backend({ maxConcurrency: 1 }));
  const release = fake.hold();
  const first = d.dispatch({ kind: "chat", model: "m", body: chat("first") });
  await until(() => fake.seen.length === 1);
  const late = d.dispatch({
    kind: "chat",
    model: "m",
    body: chat("late"),
    headers: new Headers({ "x-deadline-ms": "30" }),
  });
  await assertRejects(() => late, ServiceUnavailableError, "deadline passed");
  release();
  await (await first).body?.cancel();
  assertEquals(tags(fake), ["first"]);
});

Deno.test("cost_optimized picks local first, then the cheapest cloud instance", async () => {
  const local = new FakeEngine("local");
  const cheap = new FakeEngine("cheap");
  const pricey = new FakeEngine("pricey");
  const d = new Dispatcher({ policy: "cost_optimized", logger: SILENT });
  d.addBackend(pricey.backend({ cost: 5, local: false, maxConcurrency: 1 }));
  d.addBackend(cheap.backend({ cost: 1, local: false, maxConcurrency: 1 }));
  d.addBackend(local.backend({ cost: 2, maxConcurrency: 1 }));
  // Idle: every request goes to the local instance, although a cloud one is cheaper.
  for (let i = 0; i < 3; i++) {
    await (await d.dispatch({ kind: "chat", model: "m", body: chat(`idle-${i}`) })).text();
  }
  assertEquals([local.seen.length, cheap.seen.length, pricey.seen.length], [3, 0, 0]);
  // Saturated: local is busy, so the cheapest cloud instance, then the next.
  const holds = [local.hold(), cheap.hold(), pricey.hold()];
  const busy = [0, 1, 2].map((i) =>
    d.dispatch({ kind: "chat", model: "m", body: chat(`busy-${i}`) })
  );
  await until(() => local.seen.length === 4 && cheap.seen.length === 1 && pricey.seen.length === 1);
  holds.forEach((h) => h());
  for (const r of busy) await (await r).text();
});

Deno.test("adaptive spreads load below half utilization and prefers the fast instance above", async () => {
  const fast = new FakeEngine("fast");
  const slow = new FakeEngine("slow");
  const d = new Dispatcher({ logger: SILENT }); // adaptive is the default
  assertEquals(d.policy.type, "adaptive");
  d.addBackend(fast.backend({ maxConcurrency: 4 })).recordLatency(10);
  d.addBackend(slow.backend({ maxConcurrency: 4 })).recordLatency(100);
  const holds = [fast.hold(), slow.hold()];
  const sent: Promise<Response>[] = [];
  const send = async (n: number) => {
    for (let i = 0; i < n; i++) {
      sent.push(d.dispatch({ kind: "chat", model: "m", body: chat(`r${sent.length}`) }));
      await until(() => fast.seen.length + slow.seen.length === sent.length);
    }
  };
  await send(4); // utilization 0 → 3/8: least loaded, alternating
  assertEquals([fast.seen.length, slow.seen.length], [2, 2]);
  await send(2); // utilization 4/8 and 5/8: latency-aware, the fast instance
  assertEquals([fast.seen.length, slow.seen.length], [4, 2]);
  await send(1); // fast is full
  assertEquals([fast.seen.length, slow.seen.length], [4, 3]);
  holds.forEach((h) => h());
  for (const r of sent) await (await r).text();
});

Deno.test("hybrid keeps separate queues for chat and embeddings", async () => {
  const llm = new FakeEngine("llm");
  const emb = new FakeEngine("emb");
  const d = new Dispatcher({ policy: "hybrid", maxQueue: 1, logger: SILENT });
  d.addBackend(llm.backend({ maxConcurrency: 1 }));
  d.addBackend(emb.backend({ kind: "embedding", models: ["e"], maxConcurrency: 1 }));
  const release = llm.hold();
  const a = d.dispatch({ kind: "chat", model: "m", body: chat("a") });
  await until(() => llm.seen.length === 1);
  const b = d.dispatch({ kind: "chat", model: "m", body: chat("b") }); // waits
  await assertRejects(
    () => d.dispatch({ kind: "chat", model: "m", body: chat("c") }),
    RateLimitError,
  );
  // The chat queue is full, yet embeddings are admitted and answered.
  const res = await d.dispatch({ kind: "embedding", model: "e", body: { model: "e", input: "x" } });
  assertEquals(res.status, 200);
  await res.body?.cancel();
  assertEquals(d.snapshot().pools.map((p) => p.name).sort(), ["embedding", "llm"]);
  release();
  for (const r of [a, b]) await (await r).text();
});

Deno.test("hybrid merges waiting embedding requests into one upstream request", async () => {
  const emb = new FakeEngine("emb");
  const d = new Dispatcher({ policy: "hybrid", logger: SILENT });
  d.addBackend(
    emb.backend({ kind: "embedding", models: ["e"], aliases: { alias: "e" }, maxConcurrency: 1 }),
  );
  const release = emb.hold();
  const embed = (input: unknown, model = "e") =>
    d.dispatch({ kind: "embedding", model, body: { model, input } });
  const first = embed("first");
  await until(() => emb.seen.length === 1);
  const waiting = [embed("a"), embed(["bb", "ccc"]), embed("dddd", "alias"), embed([[1, 2]])];
  await until(() => queued(d) === 4);
  release();
  const answers = await Promise.all(waiting.map(async (r) => await (await r).json()));
  await (await first).body?.cancel();
  // One merged request for the three text requests; the token-id request goes alone.
  const inputs = emb.seen.map((r) => r.body.input);
  assertEquals(inputs, ["first", ["a", "bb", "ccc", "dddd"], [[1, 2]]]);
  assertEquals(emb.seen[1].body.model, "e");
  assertEquals(answers[0].data.map((x: { embedding: number[] }) => x.embedding), [[1, 0]]);
  assertEquals(
    answers[1].data.map((x: { index: number; embedding: number[] }) => [x.index, x.embedding]),
    [
      [0, [2, 1]],
      [1, [3, 2]],
    ],
  );
  assertEquals(answers[2].data[0].embedding, [4, 3]);
  // Usage of the merged request (4 inputs x 2 tokens) is shared by input size.
  const shares = answers.slice(0, 3).map((a) => a.usage.prompt_tokens);
  assertEquals(shares.reduce((x: number, y: number) => x + y, 0), 8);
  assertEquals(answers[3].usage.prompt_tokens, 2);
});

Deno.test("hybrid sends merged requests one by one when the merged one is refused (4xx)", async () => {
  const emb = new FakeEngine("emb", { rejectInput: "bad" });
  const d = new Dispatcher({ policy: "hybrid", logger: SILENT });
  d.addBackend(emb.backend({ kind: "embedding", models: ["e"], maxConcurrency: 1 }));
  const release = emb.hold();
  const embed = (input: string) =>
    d.dispatch({ kind: "embedding", model: "e", body: { model: "e", input } });
  const first = embed("first");
  await until(() => emb.seen.length === 1);
  const waiting = [embed("ok1"), embed("bad"), embed("ok2")];
  await until(() => queued(d) === 3);
  release();
  const statuses = await Promise.all(waiting.map(async (r) => {
    const res = await r;
    await res.body?.cancel();
    return res.status;
  }));
  await (await first).body?.cancel();
  assertEquals(statuses, [200, 400, 200]);
  assertEquals(emb.seen.map((r) => r.body.input), [
    "first",
    ["ok1", "bad", "ok2"],
    "ok1",
    "bad",
    "ok2",
  ]);
});

Deno.test("fifo does not merge embedding requests", async () => {
  const emb = new FakeEngine("emb");
  const d = new Dispatcher({ policy: "fifo", logger: SILENT });
  d.addBackend(emb.backend({ kind: "embedding", models: ["e"], maxConcurrency: 1 }));
  const release = emb.hold();
  const all = ["a", "b", "c"].map((input) =>
    d.dispatch({ kind: "embedding", model: "e", body: { model: "e", input } })
  );
  await until(() => emb.seen.length === 1 && queued(d) === 2);
  release();
  for (const r of all) await (await r).text();
  assertEquals(emb.seen.map((r) => r.body.input), ["a", "b", "c"]);
});

Deno.test("readSchedulingHints() reads priority, deadline and user, and rejects bad values", () => {
  assertEquals(readSchedulingHints(undefined, undefined), { priority: 0 });
  assertEquals(
    readSchedulingHints(
      new Headers({ "x-priority": "-3", "x-deadline-ms": "250", "x-user-id": "h" }),
      {
        priority: 7,
        user: "b",
      },
    ),
    { priority: -3, deadlineMs: 250, userKey: "h" },
  );
  assertEquals(readSchedulingHints(undefined, { priority: 7, user: "b" }), {
    priority: 7,
    userKey: "b",
  });
  assertEquals(
    assertThrows(
      () => readSchedulingHints(new Headers({ "x-priority": "high" }), {}),
      ValidationError,
    ).param,
    "x-priority",
  );
  assertEquals(
    assertThrows(() => readSchedulingHints(undefined, { priority: 1.5 }), ValidationError).param,
    "priority",
  );
  assertEquals(
    assertThrows(
      () => readSchedulingHints(new Headers({ "x-deadline-ms": "0" }), {}),
      ValidationError,
    ).param,
    "x-deadline-ms",
  );
});

Deno.test("createSchedulingPolicy() knows every policy and rejects others", () => {
  for (
    const p of ["fifo", "priority", "slo_aware", "cost_optimized", "adaptive", "hybrid"] as const
  ) {
    assertEquals(createSchedulingPolicy(p).type, p);
  }
  assertEquals(createSchedulingPolicy("hybrid").poolOf("embedding"), "embedding");
  assertEquals(createSchedulingPolicy("fifo").poolOf("embedding"), "all");
  assertThrows(() => createSchedulingPolicy("lottery" as never), ValidationError, "adaptive");
});

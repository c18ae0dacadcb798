// The pool's wait queue with several models: a freed slot goes to the first waiter that can use
// it, whatever waits ahead for other instances; losing the only instance refuses its waiters.
import { assertEquals, assertRejects } from "../_assert.ts";
import { ServiceUnavailableError } from "../../src/core/errors.ts";
import { Backend } from "../../src/gateway/backend.ts";
import { validateBackendConfig } from "../../src/gateway/backend_config.ts";
import { BackendPool, type Grant, type PoolTicket } from "../../src/gateway/backend_pool.ts";
import { createSchedulingPolicy } from "../../src/gateway/scheduling.ts";

let seq = 0;
function ticket(model: string): PoolTicket {
  return {
    seq: ++seq,
    priority: 0,
    deadline: performance.now() + 60_000,
    model,
    kind: "llm",
    exclude: new Set(),
    batchSize: 1,
  };
}

function backend(id: string, model: string): Backend {
  const b = new Backend(validateBackendConfig({
    id,
    baseUrl: `http://127.0.0.1:1/${id}/v1`,
    kind: "llm",
    models: [model],
    maxConcurrency: 1,
  }));
  b.setHealth("healthy");
  return b;
}

// A fifo pool of instance a (model ma) and b (mb), one slot each, both taken.
async function busyPool(): Promise<{ a: Backend; b: Backend; pool: BackendPool }> {
  const a = backend("a", "ma");
  const b = backend("b", "mb");
  const pool = new BackendPool("all", createSchedulingPolicy("fifo"), { maxQueue: 16 });
  pool.add(a);
  pool.add(b);
  await pool.acquire(ticket("ma"));
  await pool.acquire(ticket("mb"));
  return { a, b, pool };
}

// Which waiters have been granted so far, in order.
function track(pool: BackendPool, models: string[]): { order: string[]; done: Promise<unknown> } {
  const order: string[] = [];
  const done = Promise.all(models.map(async (model, i) => {
    const grant = await pool.acquire(ticket(model)) as Grant<PoolTicket>;
    order.push(`${model}${i}`);
    return grant;
  }));
  return { order, done };
}

Deno.test("BackendPool gives a freed slot to the first waiter that can use it, in order per model", async () => {
  const { a, b, pool } = await busyPool();
  const waiting = track(pool, ["ma", "ma", "mb"]);
  await Promise.resolve();
  assertEquals(pool.queueLength, 3);

  b.release("success", 1); // the mb waiter passes both ma waiters queued ahead of it
  await new Promise((r) => setTimeout(r, 0));
  assertEquals(waiting.order, ["mb2"]);
  a.release("success", 1);
  await new Promise((r) => setTimeout(r, 0));
  a.release("success", 1);
  await waiting.done;
  assertEquals(waiting.order, ["mb2", "ma0", "ma1"]);
  assertEquals(pool.queueLength, 0);
});

Deno.test("BackendPool refuses waiters at once when their only instance goes down, every slot busy", async () => {
  const { a, b, pool } = await busyPool();
  const forA = pool.acquire(ticket("ma"));
  const forB = pool.acquire(ticket("mb"));
  a.setHealth("unhealthy", "probe failed");
  await assertRejects(() => forA, ServiceUnavailableError);
  assertEquals(pool.queueLength, 1, "the mb waiter still waits");
  b.release("success", 1);
  assertEquals(((await forB) as Grant<PoolTicket>).backend.id, "b");
});

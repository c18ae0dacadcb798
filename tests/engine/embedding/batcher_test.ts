import { assert, assertEquals, assertRejects } from "../../_assert.ts";
import { EmbeddingBatcher } from "../../../src/engine/embedding/batcher.ts";
import { CancelledError, RateLimitError } from "../../../src/core/errors.ts";

/** A runner that records its batches and answers each row with [length, first id]. */
function recorder(delayMs = 0) {
  const batches: number[][][] = [];
  const run = async (rows: number[][]) => {
    batches.push(rows);
    if (delayMs) await new Promise((r) => setTimeout(r, delayMs));
    return rows.map((r) => new Float32Array([r.length, r[0]]));
  };
  return { batches, run };
}

const ids = (length: number, first: number) => [first, ...Array(length - 1).fill(7)];

Deno.test("EmbeddingBatcher gathers concurrent inputs into one batch and answers each its own", async () => {
  const { batches, run } = recorder();
  const batcher = new EmbeddingBatcher(run, {
    maxBatchTokens: 1000,
    maxBatchSize: 64,
    maxQueue: 1000,
  });
  const results = await Promise.all([1, 2, 3, 4].map((i) => batcher.submit(ids(i, i * 10))));
  assertEquals(batches.length, 1);
  results.forEach((v, i) => assertEquals([...v], [i + 1, (i + 1) * 10]));
});

Deno.test("EmbeddingBatcher splits by token budget and groups similar lengths", async () => {
  const { batches, run } = recorder();
  const batcher = new EmbeddingBatcher(run, {
    maxBatchTokens: 40,
    maxBatchSize: 64,
    maxQueue: 1000,
  });
  const lengths = [2, 20, 3, 19, 2, 18];
  const results = await Promise.all(lengths.map((n, i) => batcher.submit(ids(n, i))));
  results.forEach((v, i) => assertEquals([...v], [lengths[i], i]));
  for (const batch of batches) {
    const longest = Math.max(...batch.map((r) => r.length));
    assert(
      longest * batch.length <= 40 || batch.length === 1,
      `batch over budget: ${batch.length}x${longest}`,
    );
  }
  // Short inputs are not padded up to the long ones: no batch mixes 2-3 token and 18-20 token rows.
  for (const batch of batches) {
    const lens = batch.map((r) => r.length);
    assert(Math.max(...lens) - Math.min(...lens) <= 2, `mixed lengths ${lens}`);
  }
});

Deno.test("EmbeddingBatcher runs an input longer than the budget alone", async () => {
  const { batches, run } = recorder();
  const batcher = new EmbeddingBatcher(run, {
    maxBatchTokens: 4,
    maxBatchSize: 8,
    maxQueue: 1000,
  });
  const v = await batcher.submit(ids(10, 5));
  assertEquals([...v], [10, 5]);
  assertEquals(batches.length, 1);
});

Deno.test("EmbeddingBatcher drops a cancelled input before it runs", async () => {
  const { batches, run } = recorder(20);
  const batcher = new EmbeddingBatcher(run, {
    maxBatchTokens: 100,
    maxBatchSize: 1,
    maxQueue: 1000,
  });
  const first = batcher.submit(ids(3, 1));
  const controller = new AbortController();
  const second = batcher.submit(ids(3, 2), controller.signal);
  const outcome = assertRejects(() => second, CancelledError);
  controller.abort();
  await first;
  await outcome;
  assertEquals(batches.length, 1);
});

Deno.test("EmbeddingBatcher fails every input of a batch whose run fails", async () => {
  const batcher = new EmbeddingBatcher(() => Promise.reject(new Error("boom")), {
    maxBatchTokens: 100,
    maxBatchSize: 8,
    maxQueue: 1000,
  });
  const all = [1, 2].map((i) => batcher.submit(ids(2, i)).then(() => "ok", (e) => e.message));
  assertEquals(await Promise.all(all), ["boom", "boom"]);
});

Deno.test("EmbeddingBatcher refuses a request that does not fit its queue, keeping what waits", async () => {
  const { batches, run } = recorder(20);
  const batcher = new EmbeddingBatcher(run, {
    maxBatchTokens: 100,
    maxBatchSize: 2,
    maxQueue: 4,
  });
  const first = batcher.submitAll([ids(2, 1), ids(2, 2), ids(2, 3)]);
  const second = batcher.submitAll([ids(2, 4)]);
  await assertRejects(() => batcher.submitAll([ids(2, 5), ids(2, 6)]), RateLimitError);
  const [a, b] = await Promise.all([first, second]);
  assertEquals(a.map((v) => v[1]), [1, 2, 3]);
  assertEquals(b.map((v) => v[1]), [4]);
  assertEquals(batches.flat().length, 4);
});

Deno.test("EmbeddingBatcher fails only the input the model fails on when a batch run fails", async () => {
  const POISON = 666;
  const runs: number[][][] = [];
  const batcher = new EmbeddingBatcher((rows) => {
    runs.push(rows);
    if (rows.some((r) => r.includes(POISON))) return Promise.reject(new Error("boom"));
    return Promise.resolve(rows.map((r) => new Float32Array(r)));
  }, { maxBatchTokens: 100, maxBatchSize: 8, maxQueue: 1000 });
  const all = [[1, 2], [POISON, 3], [4, 5]].map((row) =>
    batcher.submit(row).then((v) => [...v], (e) => e.message)
  );
  assertEquals(await Promise.all(all), [[1, 2], "boom", [4, 5]]);
  assertEquals(runs[0].length, 3, "the three were batched together first");
});

/** A model stub the test finishes by hand: each call waits until `finish()` answers it. */
function heldModel() {
  const calls: number[][][] = [];
  const finishers: (() => void)[] = [];
  const run = (rows: number[][]) => {
    calls.push(rows);
    return new Promise<Float32Array[]>((resolve) => {
      finishers.push(() => resolve(rows.map((r) => new Float32Array([r.length, r[0]]))));
    });
  };
  return { calls, run, finish: () => finishers.shift()!() };
}

// Resolves after every pending microtask, before any timer: "at once", as opposed to a window.
const microtasksDone = () => new Promise<void>((r) => queueMicrotask(() => queueMicrotask(r)));

Deno.test("EmbeddingBatcher hands a lone input to an idle model at once, without a batching window", async () => {
  const model = heldModel();
  const batcher = new EmbeddingBatcher(model.run, {
    maxBatchTokens: 1000,
    maxBatchSize: 64,
    maxQueue: 1000,
  });
  let timerFired = false;
  const timer = setTimeout(() => timerFired = true, 0);
  const answer = batcher.submit(ids(3, 1));
  await microtasksDone();
  assertEquals(model.calls, [[ids(3, 1)]], "the model got the input within the same turn");
  assertEquals(timerFired, false, "no timer ran before the model was called");
  clearTimeout(timer);
  model.finish();
  assertEquals([...await answer], [3, 1]);
});

Deno.test("EmbeddingBatcher batches what arrives while the model is busy into the next call", async () => {
  const model = heldModel();
  const batcher = new EmbeddingBatcher(model.run, {
    maxBatchTokens: 1000,
    maxBatchSize: 64,
    maxQueue: 1000,
  });
  const first = batcher.submit(ids(2, 1));
  await microtasksDone();
  assertEquals(model.calls.length, 1);
  // Three requests arrive while the first batch runs: none of them reaches the busy model.
  const second = batcher.submit(ids(2, 2));
  const third = batcher.submitAll([ids(2, 3), ids(2, 4)]);
  await microtasksDone();
  assertEquals(model.calls.length, 1, "nothing is sent to a busy model");
  assertEquals(batcher.stats().queueDepth, 3);
  model.finish();
  await first;
  await microtasksDone();
  // The model is free: everything that waited goes in one call, at once.
  assertEquals(model.calls.length, 2);
  assertEquals(model.calls[1].map((r) => r[0]).sort(), [2, 3, 4]);
  model.finish();
  assertEquals([(await second)[1], ...(await third).map((v) => v[1])], [2, 3, 4]);
  assertEquals(batcher.stats().batchSizes, [[1, 1], [3, 1]]);
});

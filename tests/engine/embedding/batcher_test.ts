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
    maxWaitMs: 5,
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
    maxWaitMs: 5,
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
    maxWaitMs: 0,
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
    maxWaitMs: 0,
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
    maxWaitMs: 1,
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
    maxWaitMs: 0,
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
  }, { maxBatchTokens: 100, maxBatchSize: 8, maxWaitMs: 5, maxQueue: 1000 });
  const all = [[1, 2], [POISON, 3], [4, 5]].map((row) =>
    batcher.submit(row).then((v) => [...v], (e) => e.message)
  );
  assertEquals(await Promise.all(all), [[1, 2], "boom", [4, 5]]);
  assertEquals(runs[0].length, 3, "the three were batched together first");
});

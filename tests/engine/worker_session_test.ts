import { assert, assertEquals } from "../_assert.ts";
import { demoFolder } from "../_helpers/demo_engines.ts";
import { loadModel } from "../../src/engine/load_model.ts";
import type { ModelSession, PlainTensor } from "../../src/engine/onnx_session.ts";
import { WorkerSession } from "../../src/engine/worker_session.ts";

/** Encoder feeds of `rows` × `tokens` (ids counting up from 5), for the inputs `session` takes. */
function encoderFeeds(
  session: ModelSession,
  rows: number,
  tokens: number,
): Record<string, PlainTensor> {
  const dims = [rows, tokens];
  const ids = BigInt64Array.from({ length: rows * tokens }, (_, i) => BigInt(5 + (i % 50)));
  const feeds: Record<string, PlainTensor> = { input_ids: { type: "int64", data: ids, dims } };
  if (session.has("attention_mask")) {
    feeds.attention_mask = { type: "int64", data: new BigInt64Array(rows * tokens).fill(1n), dims };
  }
  if (session.has("token_type_ids")) {
    feeds.token_type_ids = { type: "int64", data: new BigInt64Array(rows * tokens), dims };
  }
  return feeds;
}

function maxDiff(a: PlainTensor, b: PlainTensor): number {
  assertEquals(a.dims, b.dims);
  let m = 0;
  for (let i = 0; i < a.data.length; i++) m = Math.max(m, Math.abs(a.data[i] - b.data[i]));
  return m;
}

async function load(kind: "embedding" | "rerank", inlineMaxTokens?: number) {
  const folder = await demoFolder(kind === "embedding" ? "demo/embed" : "demo/rerank");
  const model = await loadModel(folder, kind, { device: "cpu", dtype: "q8", inlineMaxTokens });
  assert(model.session instanceof WorkerSession);
  return model.session;
}

for (const kind of ["embedding", "rerank"] as const) {
  Deno.test(`loadModel() runs small ${kind} calls in this thread while the worker is idle, with the worker's outputs`, async () => {
    const session = await load(kind);
    const workerOnly = await load(kind, 0);
    try {
      const small = await session.run(encoderFeeds(session, 1, 8));
      assertEquals(session.stats(), { workerRuns: 0, inlineRuns: 1 });
      const large = await session.run(encoderFeeds(session, 4, 64)); // 256 tokens > 128
      assertEquals(session.stats(), { workerRuns: 1, inlineRuns: 1 });

      const smallRef = await workerOnly.run(encoderFeeds(session, 1, 8));
      const largeRef = await workerOnly.run(encoderFeeds(session, 4, 64));
      assertEquals(workerOnly.stats(), { workerRuns: 2, inlineRuns: 0 });
      for (const name of session.outputNames) {
        assert(maxDiff(small[name], smallRef[name]) < 1e-5, `${name} of the small run`);
        assert(maxDiff(large[name], largeRef[name]) < 1e-5, `${name} of the large run`);
      }
    } finally {
      await session.release();
      await workerOnly.release();
    }
  });
}

Deno.test("WorkerSession sends a small run to the worker while a run is in flight there", async () => {
  const session = await load("embedding", 64);
  try {
    const busy = session.run(encoderFeeds(session, 2, 64)); // 128 tokens > 64: the worker
    const small = session.run(encoderFeeds(session, 1, 4));
    await Promise.all([busy, small]);
    assertEquals(session.stats(), { workerRuns: 2, inlineRuns: 0 });
    await session.run(encoderFeeds(session, 1, 4));
    assertEquals(session.stats(), { workerRuns: 2, inlineRuns: 1 });
  } finally {
    await session.release();
  }
});

Deno.test("loadModel() keeps every run of a chat model in its worker", async () => {
  const model = await loadModel(await demoFolder("demo/chat"), "chat", {
    device: "cpu",
    dtype: "q8",
  });
  const session = model.session;
  try {
    assert(session instanceof WorkerSession);
    const heads = Number(model.config.num_key_value_heads);
    const headDim = Number(model.config.head_dim ?? 16);
    const one = (v: bigint) => ({
      type: "int64" as const,
      data: BigInt64Array.of(v),
      dims: [1, 1],
    });
    const feeds: Record<string, PlainTensor> = {
      input_ids: one(5n),
      attention_mask: one(1n),
      position_ids: one(0n),
      num_logits_to_keep: { type: "int64", data: BigInt64Array.of(1n), dims: [] },
    };
    for (const name of session.inputNames.filter((n) => n.startsWith("past_key_values."))) {
      feeds[name] = { type: "float32", data: new Float32Array(0), dims: [1, heads, 0, headDim] };
    }
    await session.run(feeds);
    assertEquals(session.stats(), { workerRuns: 1, inlineRuns: 0 });
  } finally {
    await session.release();
  }
});

/**
 * Where a decode step's time goes: the raw chat session run in this process for one new token
 * per sequence at several batch sizes and cache lengths, beside the time to copy the cache bytes
 * the step moves (onnxruntime-node copies every `present` output into JavaScript memory).
 *
 * @module
 */

import { loadModel } from "../src/engine/load_model.ts";
import { materializeDemoModel } from "../src/engine/generated_models/demo_models.ts";
import type { PlainTensor } from "../src/engine/onnx_session.ts";
import type { BenchContext } from "./_context.ts";
import { median } from "./_stats.ts";

/** One measured configuration. */
export interface DecodeStepRow {
  batch: number;
  past: number;
  /** Median session.run time of one decode step, ms. */
  stepMs: number;
  /** Size of the cache the step returns, MiB. */
  cacheMiB: number;
  /** Time to allocate and copy that many bytes once in JavaScript, ms. */
  copyMs: number;
}

/**
 * Times raw decode steps of `model` (the benchmark chat model) for each batch × cache length.
 *
 * @example
 * ```ts
 * const rows = await profileDecodeSteps(ctx, "demo/chat-bench");
 * ```
 */
export async function profileDecodeSteps(
  ctx: BenchContext,
  model: string,
  shapes: { batches: number[]; pasts: number[] } = { batches: [1, 4, 16], pasts: [64, 256] },
): Promise<DecodeStepRow[]> {
  const folder = await materializeDemoModel(model, ctx.cacheDir);
  // In this thread: the profile feeds the same arrays again, which a worker session would take over.
  const loaded = await loadModel(folder, "chat", {
    device: ctx.device,
    dtype: ctx.dtype,
    inWorker: false,
  });
  const config = loaded.config;
  const heads = Number(config.num_attention_heads);
  const kvHeads = Number(config.num_key_value_heads ?? heads);
  const headDim = Number(config.head_dim ?? Number(config.hidden_size) / heads);
  const pastNames = loaded.session.inputNames.filter((n) => n.startsWith("past_key_values."));
  const rows: DecodeStepRow[] = [];
  try {
    for (const batch of shapes.batches) {
      for (const past of shapes.pasts) {
        const cache = new Float32Array(batch * kvHeads * past * headDim).map(() => Math.random());
        const feeds: Record<string, PlainTensor> = {
          input_ids: { type: "int64", data: new BigInt64Array(batch).fill(42n), dims: [batch, 1] },
          attention_mask: {
            type: "int64",
            data: new BigInt64Array(batch * (past + 1)).fill(1n),
            dims: [batch, past + 1],
          },
          position_ids: {
            type: "int64",
            data: new BigInt64Array(batch).fill(BigInt(past)),
            dims: [batch, 1],
          },
          num_logits_to_keep: { type: "int64", data: BigInt64Array.of(1n), dims: [] },
        };
        for (const name of pastNames) {
          feeds[name] = { type: "float32", data: cache, dims: [batch, kvHeads, past, headDim] };
        }
        const times: number[] = [];
        const steps = ctx.quick ? 3 : 6;
        for (let i = 0; i <= steps; i++) {
          const start = performance.now();
          await loaded.session.run(feeds);
          if (i > 0) times.push(performance.now() - start);
        }
        const floats = pastNames.length * batch * kvHeads * (past + 1) * headDim;
        const copyStart = performance.now();
        for (const _ of pastNames) {
          new Float32Array(floats / pastNames.length).set(
            cache.subarray(0, floats / pastNames.length),
          );
        }
        rows.push({
          batch,
          past,
          stepMs: median(times),
          cacheMiB: (floats * 4) / 2 ** 20,
          copyMs: performance.now() - copyStart,
        });
        const row = rows[rows.length - 1];
        ctx.log(
          `  decode step, batch ${batch}, ${past} cached: ${row.stepMs.toFixed(1)} ms ` +
            `(cache ${row.cacheMiB.toFixed(0)} MiB, one copy ${row.copyMs.toFixed(1)} ms)`,
        );
      }
    }
  } finally {
    await loaded.session.release();
  }
  return rows;
}

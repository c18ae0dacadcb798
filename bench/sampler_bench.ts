/**
 * `deno bench` micro-benchmarks of the decode loop's pure hot paths, at the benchmark chat
 * model's shape (vocabulary 49152; 30 layers, 3 KV heads of 64, 16 sequences):
 *
 * - choosing one token from a logits row: greedy (the baseline) vs temperature, top-p, top-k,
 *   penalties and top logprobs;
 * - rebuilding the batch KV cache when a sequence joins or leaves (`assembleCache`) vs a plain
 *   copy of the same bytes, and the left-padded attention mask.
 *
 * Run: `deno bench bench/sampler_bench.ts`
 *
 * @module
 */

import { SequenceSampler } from "../src/engine/decoding/sampler.ts";
import type { SamplingParams } from "../src/core/inference_types.ts";
import {
  assembleCache,
  type CacheSlice,
  type CacheTensor,
  leftPaddedMask,
} from "../src/engine/chat/kv_cache.ts";

const VOCAB = 49152;
const LAYERS = 30;
const KV_HEADS = 3;
const HEAD_DIM = 64;
const SEQUENCES = 16;
const CACHED = 128;

/** Seeded normal-ish logits (sum of uniforms), scaled like a real model's. */
function logitsRow(seed: number): Float32Array {
  let state = seed >>> 0;
  const uniform = () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 4294967296;
  };
  return Float32Array.from({ length: VOCAB }, () => (uniform() + uniform() + uniform() - 1.5) * 6);
}

const ROWS = Array.from({ length: 8 }, (_, i) => logitsRow(i + 1));

function samplerBench(name: string, params: SamplingParams, baseline = false): void {
  const sampler = new SequenceSampler({ seed: 7, ...params });
  let i = 0;
  Deno.bench({
    name,
    group: `sample one token (vocab ${VOCAB})`,
    baseline,
    fn: () => {
      sampler.sample(ROWS[i++ % ROWS.length]);
    },
  });
}

samplerBench("greedy (temperature 0)", { temperature: 0 }, true);
samplerBench("temperature 0.8, whole vocabulary", { temperature: 0.8 });
samplerBench("temperature 0.8, top-p 0.9", { temperature: 0.8, topP: 0.9 });
samplerBench("temperature 0.8, top-k 50, top-p 0.95", { temperature: 0.8, topK: 50, topP: 0.95 });
samplerBench("greedy + repetition/presence/frequency penalties", {
  temperature: 0,
  repetitionPenalty: 1.1,
  presencePenalty: 0.5,
  frequencyPenalty: 0.5,
});
samplerBench("greedy + top_logprobs 5", { temperature: 0, topLogprobs: 5 });

{
  // What every sample() pays before choosing: one copy of the row into scratch space.
  const scratch = new Float32Array(VOCAB);
  let i = 0;
  Deno.bench({
    name: "reference: copy of one logits row (Float32Array.set)",
    group: `sample one token (vocab ${VOCAB})`,
    fn: () => scratch.set(ROWS[i++ % ROWS.length]),
  });
}

/** The batch cache of `SEQUENCES` rows, `CACHED` tokens each, as a decode step returns it. */
function batchCache(): CacheTensor[] {
  return Array.from({ length: LAYERS * 2 }, (_, layer) => ({
    data: new Float32Array(SEQUENCES * KV_HEADS * CACHED * HEAD_DIM).fill(layer),
    dims: [SEQUENCES, KV_HEADS, CACHED, HEAD_DIM] as const,
  }));
}

const CACHE = batchCache();
const CACHE_GROUP =
  `KV cache: ${LAYERS} layers × K/V, ${SEQUENCES} seqs × ${CACHED} tokens (${cacheMiB()} MiB)`;

function cacheMiB(): string {
  return ((LAYERS * 2 * SEQUENCES * KV_HEADS * CACHED * HEAD_DIM * 4) / 2 ** 20).toFixed(0);
}

Deno.bench({
  name: "reference: copy the same bytes (new arrays + TypedArray.set)",
  group: CACHE_GROUP,
  baseline: true,
  fn: () => {
    for (const t of CACHE) new Float32Array(t.data.length).set(t.data);
  },
});

Deno.bench({
  name: "assembleCache: one sequence leaves (16 -> 15 rows)",
  group: CACHE_GROUP,
  fn: () => {
    const slices: CacheSlice[] = [];
    for (let row = 1; row < SEQUENCES; row++) {
      slices.push({ layers: CACHE, row, length: CACHED - row });
    }
    assembleCache(slices);
  },
});

{
  // A newcomer with a 60-token prompt joins 15 running sequences.
  const prefill: CacheTensor[] = Array.from({ length: LAYERS * 2 }, () => ({
    data: new Float32Array(KV_HEADS * 60 * HEAD_DIM).fill(1),
    dims: [1, KV_HEADS, 60, HEAD_DIM] as const,
  }));
  Deno.bench({
    name: "assembleCache: one sequence joins (15 + 1 rows)",
    group: CACHE_GROUP,
    fn: () => {
      const slices: CacheSlice[] = [];
      for (let row = 0; row < SEQUENCES - 1; row++) {
        slices.push({ layers: CACHE, row, length: CACHED - row });
      }
      slices.push({ layers: prefill, row: 0, length: 60 });
      assembleCache(slices);
    },
  });
}

{
  const lengths = Array.from({ length: SEQUENCES }, (_, i) => CACHED - i);
  Deno.bench({
    name: `leftPaddedMask (${SEQUENCES} × ${CACHED + 1})`,
    group: CACHE_GROUP,
    fn: () => {
      leftPaddedMask(lengths, CACHED, 1);
    },
  });
}

/**
 * The raw decode step of the benchmark chat model (SmolLM2-135M shape, random weights) in each
 * weight encoding and with each onnxruntime session setting worth trying on a CPU: one new token
 * per sequence at batch 1, 4 and 16 with 64 cached tokens, run by onnxruntime-node in this
 * process (no engine, no worker, no HTTP). Variants are measured interleaved (the order rotates
 * every round) and reported as medians, so a busy machine weighs on all of them alike.
 *
 * Encodings: fp32 `MatMul`; our q8 (int8 weights per tensor, activations per row, `MatMulInteger`);
 * `MatMulNBits` 4-bit with float compute (accuracy level 0, as q4 exports ship by default) and
 * with int8 compute (accuracy level 4); `MatMulNBits` 8-bit with int8 compute (the arithmetic of
 * llama.cpp's Q8_0).
 *
 * With `--fused`, also the same shape as onnxruntime-genai's builder exports it (attention and
 * RoPE in one `GroupQueryAttention` node per layer, packed Q/K/V) against our standard-op graph.
 *
 * Run: deno run --allow-all bench/decode_formats.ts [--rounds 3] [--steps 5] [--options] [--fused]
 * The model files are written once under `.svc/cache/decode-formats/`.
 *
 * @module
 */

import { parseArgs } from "node:util";
import { join } from "node:path";
import * as ort from "onnxruntime-node";
import { OutputPaths } from "../src/config/output_paths.ts";
import type { WeightFormat } from "../src/engine/generated_models/layers.ts";
import {
  buildLlamaDecoderGraph,
  llamaHeadDim,
} from "../src/engine/generated_models/llama_decoder.ts";
import { MODEL_GENERATOR_VERSION } from "../src/engine/generated_models/model_folder.ts";
import { buildDecoderCaseGraph } from "../fixtures/generated_models/conformance_decoder_graph.ts";
import { DECODER_CASES } from "../fixtures/generated_models/conformance_decoders.ts";
import { writeOnnxModel } from "../src/engine/generated_models/onnx_writer.ts";
import type { NBitsOptions } from "../src/engine/generated_models/weight_formats.ts";
import { median } from "./_stats.ts";
import {
  benchChatSpec,
  decoderSpec,
  decodeStepFeeds,
  engineSessionOptions,
  feedsFor,
} from "./_decode_feeds.ts";

interface Variant {
  name: string;
  format: WeightFormat;
  nbits?: NBitsOptions;
  options?: ort.InferenceSession.SessionOptions;
  /**
   * The graph as onnxruntime-genai's builder exports it (the `genai-gqa` conformance case at the
   * bench shape): `GroupQueryAttention` with rotary inside and one packed Q/K/V matmul per layer,
   * instead of attention and RoPE from standard ops. Its q4 computes in float (accuracy level 0).
   */
  fused?: boolean;
}

const ENGINE_OPTIONS = engineSessionOptions();

const FORMATS: Variant[] = [
  { name: "fp32", format: "fp32" },
  { name: "q8 (MatMulInteger, ours)", format: "q8" },
  { name: "q4 NBits, float compute", format: "q4", nbits: { bits: 4, accuracyLevel: 0 } },
  { name: "q4 NBits, int8 compute", format: "q4", nbits: { bits: 4, accuracyLevel: 4 } },
  { name: "q8 NBits, int8 compute", format: "q4", nbits: { bits: 8, accuracyLevel: 4 } },
];

const { values } = parseArgs({
  args: Deno.args,
  options: {
    rounds: { type: "string", default: "3" },
    steps: { type: "string", default: "5" },
    options: { type: "boolean", default: false },
    fused: { type: "boolean", default: false },
  },
});
const rounds = Number(values.rounds);
const steps = Number(values.steps);
const BATCHES = [1, 4, 16];
const PAST = 64;

const benchSpec = benchChatSpec();
const spec = decoderSpec(benchSpec);
const dir = join(OutputPaths.resolve().cache, "decode-formats");
await Deno.mkdir(dir, { recursive: true });

/** The model file of a variant's encoding, written on first use. */
async function modelFile(v: Variant): Promise<string> {
  const nb = v.nbits ? `-b${v.nbits.bits}-a${v.nbits.accuracyLevel ?? 0}` : "";
  const kind = v.fused ? "-fused" : "";
  const path = join(dir, `chat-bench-v${MODEL_GENERATOR_VERSION}-${v.format}${nb}${kind}.onnx`);
  if (!(await Deno.stat(path).catch(() => null))) {
    console.error(`writing ${path}`);
    const graph = v.fused
      ? buildDecoderCaseGraph(
        { ...DECODER_CASES["genai-gqa"], headDim: llamaHeadDim(spec), float16Io: false },
        v.format,
        0,
        benchSpec,
      )
      : buildLlamaDecoderGraph(spec, v.format, v.nbits);
    await writeOnnxModel(`${path}.tmp`, graph);
    await Deno.rename(`${path}.tmp`, path);
  }
  return path;
}

/** The standard-op graphs beside the fused ones (`--fused`), float compute on both sides. */
const FUSED: Variant[] = [
  { name: "fp32, standard ops", format: "fp32" },
  { name: "fp32, fused (GroupQueryAttention, packed QKV)", format: "fp32", fused: true },
  { name: "q4 NBits float compute, standard ops", format: "q4", nbits: { bits: 4 } },
  { name: "q4 NBits float compute, fused", format: "q4", fused: true },
];

/** Session settings compared on the fastest encoding with `--options`. */
function optionVariants(best: Variant): Variant[] {
  return [
    { ...best, name: `${best.name}: engine settings (no spinning)` },
    { ...best, name: `${best.name}: spinning`, options: engineSessionOptions(true) },
    {
      ...best,
      name: `${best.name}: 1 intra-op thread`,
      options: { ...ENGINE_OPTIONS, intraOpNumThreads: 1 },
    },
    {
      ...best,
      name: `${best.name}: basic graph optimization`,
      options: { ...ENGINE_OPTIONS, graphOptimizationLevel: "basic" },
    },
    {
      ...best,
      name: `${best.name}: no memory arena`,
      options: { ...ENGINE_OPTIONS, enableCpuMemArena: false },
    },
  ];
}

async function measure(variants: Variant[]): Promise<Map<string, number[]>> {
  const sessions = [];
  for (const v of variants) {
    const session = await ort.InferenceSession.create(
      await modelFile(v),
      v.options ?? ENGINE_OPTIONS,
    );
    sessions.push({ v, session });
  }
  const times = new Map<string, number[][]>(); // name -> per batch -> step ms
  const inputs = BATCHES.map((batch) => decodeStepFeeds(spec, batch, PAST));
  for (let r = 0; r < rounds; r++) {
    for (let k = 0; k < sessions.length; k++) {
      const { v, session } = sessions[(k + r) % sessions.length];
      const row = times.get(v.name) ?? BATCHES.map(() => []);
      times.set(v.name, row);
      for (let b = 0; b < BATCHES.length; b++) {
        const feed = feedsFor(session, inputs[b]); // the fused graph takes fewer
        await session.run(feed); // warm-up
        for (let s = 0; s < steps; s++) {
          const start = performance.now();
          await session.run(feed);
          row[b].push(performance.now() - start);
        }
      }
    }
  }
  for (const { session } of sessions) await session.release();
  return new Map([...times].map(([name, row]) => [name, row.map(median)]));
}

function print(title: string, result: Map<string, number[]>): void {
  const base = result.values().next().value!;
  console.log(`\n${title}\n`);
  console.log(
    `| variant | ${BATCHES.map((b) => `batch ${b} ms`).join(" | ")} | vs first, batch 1 |`,
  );
  console.log(`| --- | ${BATCHES.map(() => "---:").join(" | ")} | ---: |`);
  for (const [name, ms] of result) {
    console.log(
      `| ${name} | ${ms.map((m) => m.toFixed(1)).join(" | ")} | ${(base[0] / ms[0]).toFixed(2)}x |`,
    );
  }
}

const formats = await measure(FORMATS);
print(
  `Raw decode step, ${PAST} cached tokens, medians of ${rounds} interleaved rounds × ${steps} steps`,
  formats,
);
if (values.fused) {
  print("Standard-op graphs against fused ones (same shape, float compute)", await measure(FUSED));
}
if (values.options) {
  const best = FORMATS.reduce((a, b) => formats.get(a.name)![0] <= formats.get(b.name)![0] ? a : b);
  print(`Session settings on ${best.name}`, await measure(optionVariants(best)));
}

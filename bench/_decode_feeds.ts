/**
 * What the raw-session decode benchmarks (decode_formats, decode_op_profile, decode_prealloc)
 * hand onnxruntime-node: the bench chat model, the session options the engine uses, and the feeds
 * of one decode step of a generated llama-shape decoder (one new token per sequence over a random
 * cache).
 *
 * @module
 */

import { join } from "node:path";
import * as ort from "onnxruntime-node";
import { OutputPaths } from "../src/config/output_paths.ts";
import { type Dtype, onnxPathFor } from "../src/engine/dtype.ts";
import {
  DEMO_MODEL_SPECS,
  materializeDemoModel,
} from "../src/engine/generated_models/demo_models.ts";
import {
  type LlamaDecoderSpec,
  llamaHeadDim,
} from "../src/engine/generated_models/llama_decoder.ts";
import type { DecoderFolderSpec } from "../src/engine/generated_models/model_folder.ts";
import { CHAT_MODEL } from "./_models.ts";

/** The bench chat model's folder spec (shape and seed). */
export function benchChatSpec(): DecoderFolderSpec {
  const demo = DEMO_MODEL_SPECS[CHAT_MODEL];
  if (demo.kind !== "chat") throw new Error(`${CHAT_MODEL} is not a chat model`);
  return demo.spec;
}

/** The bench chat model's ONNX file of `dtype`, its folder generated on first use. */
export async function benchChatFile(dtype: Dtype): Promise<string> {
  const folder = await materializeDemoModel(CHAT_MODEL, OutputPaths.resolve().cache);
  return join(folder, onnxPathFor(dtype));
}

/** The session options of the engine's CPU sessions (runtime.ts): no spinning, unless asked. */
export function engineSessionOptions(spinning = false): ort.InferenceSession.SessionOptions {
  const allow = spinning ? "1" : "0";
  return {
    extra: {
      session: { intra_op: { allow_spinning: allow }, inter_op: { allow_spinning: allow } },
    },
  };
}

/** A demo folder's spec as the graph builder takes it (the EOS bias token matters only there). */
export function decoderSpec(spec: DecoderFolderSpec): LlamaDecoderSpec {
  return { ...spec, eosLogitBiasTokenId: 0 };
}

/**
 * Feeds of one decode step: `batch` sequences of `past` cached tokens (random values, the same for
 * every layer) and one new token each; or, with `tokens` > 1, a prefill of that many new tokens
 * each. A graph without `position_ids` or `num_logits_to_keep` takes the others (see
 * {@link feedsFor}).
 */
export function decodeStepFeeds(
  spec: LlamaDecoderSpec,
  batch: number,
  past: number,
  tokens = 1,
): Record<string, ort.Tensor> {
  const i64 = (n: number, v: bigint) => new BigInt64Array(n).fill(v);
  const shape = [batch, spec.numKvHeads, past, llamaHeadDim(spec)];
  const cache = new Float32Array(shape.reduce((a, b) => a * b)).map(() => Math.random() - 0.5);
  const positions = BigInt64Array.from(
    { length: batch * tokens },
    (_, i) => BigInt(past + i % tokens),
  );
  const all = past + tokens;
  const feeds: Record<string, ort.Tensor> = {
    input_ids: new ort.Tensor("int64", i64(batch * tokens, 42n), [batch, tokens]),
    attention_mask: new ort.Tensor("int64", i64(batch * all, 1n), [batch, all]),
    position_ids: new ort.Tensor("int64", positions, [batch, tokens]),
    num_logits_to_keep: new ort.Tensor("int64", BigInt64Array.of(1n), []),
  };
  for (const name of cacheNames(spec)) {
    feeds[`past_key_values.${name}`] = new ort.Tensor("float32", cache, shape);
  }
  return feeds;
}

/** The cache names of every layer: `0.key`, `0.value`, `1.key`, … */
export function cacheNames(spec: LlamaDecoderSpec): string[] {
  return Array.from({ length: spec.numLayers }, (_, i) => [`${i}.key`, `${i}.value`]).flat();
}

/** The feeds a session takes among `feeds`. */
export function feedsFor(
  session: ort.InferenceSession,
  feeds: Record<string, ort.Tensor>,
): Record<string, ort.Tensor> {
  return Object.fromEntries(Object.entries(feeds).filter(([n]) => session.inputNames.includes(n)));
}

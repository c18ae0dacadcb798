/**
 * Writes the tiny demo chat decoder (`demo/chat`'s shape and seed) in one weight format: the q4
 * files with either MatMulNBits accuracy level, for the dtype-choice tests.
 *
 * @module
 */

import { DEMO_MODEL_SPECS } from "../../src/engine/generated_models/demo_models.ts";
import { buildLlamaDecoderGraph } from "../../src/engine/generated_models/llama_decoder.ts";
import { writeOnnxModel } from "../../src/engine/generated_models/onnx_writer.ts";
import type { NBitsOptions } from "../../src/engine/generated_models/weight_formats.ts";
import type { WeightFormat } from "../../src/engine/generated_models/layers.ts";

/** Writes the tiny demo chat decoder in `format` to `path`. */
export async function writeTinyDecoder(
  path: string,
  format: WeightFormat,
  nbits?: NBitsOptions,
): Promise<void> {
  const demo = DEMO_MODEL_SPECS["demo/chat"];
  if (demo.kind !== "chat") throw new Error("demo/chat is not a chat model");
  await writeOnnxModel(
    path,
    buildLlamaDecoderGraph({ ...demo.spec, eosLogitBiasTokenId: 0 }, format, nbits),
  );
}

/**
 * The feeds of one encoder run, as the embedding and rerank engines make them: rows of token ids
 * right-padded to the longest row into `[batch, seq]` int64 tensors.
 *
 * @module
 */

import { ServiceError } from "../../core/errors.ts";
import type { ModelSession, PlainTensor } from "../onnx_session.ts";

/** Inputs an encoder may take that we know how to feed (any other is refused at load). */
export const SUPPORTED_ENCODER_INPUTS: readonly string[] = [
  "input_ids",
  "attention_mask",
  "token_type_ids",
];

/**
 * Refuses at load an encoder whose inputs the engines cannot feed (one outside
 * {@link SUPPORTED_ENCODER_INPUTS}, or no `input_ids`): `model` names it in the error
 * (`embedding model 'x'`), `engine` the engine that refuses it (`the embedding engine`).
 *
 * @example
 * ```ts
 * import { checkEncoderInputs } from "./encoder_feeds.ts";
 * checkEncoderInputs({ inputNames: ["input_ids", "attention_mask"] }, "model 'x'", "the engine");
 * ```
 */
export function checkEncoderInputs(
  session: Pick<ModelSession, "inputNames">,
  model: string,
  engine: string,
): void {
  const { inputNames } = session;
  const unsupported = inputNames.filter((n) => !SUPPORTED_ENCODER_INPUTS.includes(n));
  if (unsupported.length === 0 && inputNames.includes("input_ids")) return;
  const what = unsupported.length > 0
    ? `takes the input${unsupported.length > 1 ? "s" : ""} ${unsupported.map((n) => `'${n}'`)}`
    : "takes no 'input_ids'";
  throw new ServiceError(
    `${model} ${what}, which ${engine} cannot feed (it feeds ${
      SUPPORTED_ENCODER_INPUTS.join(", ")
    })`,
  );
}

/** The feeds of one padded batch, and its shape. */
export interface PaddedBatch {
  /** `input_ids`, and `attention_mask` / `token_type_ids` when the session takes them. */
  feeds: Record<string, PlainTensor>;
  /** Rows. */
  batch: number;
  /** Tokens per row after padding: the longest row's. */
  seq: number;
}

/**
 * Pads `rows` of token ids with `padId` and builds the feeds the session takes: `input_ids`,
 * `attention_mask` (1 over each row's own tokens, so padding is ignored) and `token_type_ids`
 * (`typeIds`, each token's segment in a (query, document) pair; all 0, one segment, when left
 * out).
 *
 * @example
 * ```ts
 * import { encoderFeeds } from "./encoder_feeds.ts";
 * const session = { has: (name: string) => name !== "token_type_ids" };
 * const { feeds, seq } = encoderFeeds(session, [[101, 7, 102], [101, 102]], { padId: 0 });
 * console.log(seq, Object.keys(feeds)); // 3 [ "input_ids", "attention_mask" ]
 * ```
 */
export function encoderFeeds(
  session: Pick<ModelSession, "has">,
  rows: readonly (readonly number[])[],
  options: { padId: number; typeIds?: readonly (readonly number[])[] },
): PaddedBatch {
  const batch = rows.length;
  const seq = Math.max(...rows.map((r) => r.length));
  const dims = [batch, seq];
  const ids = new BigInt64Array(batch * seq).fill(BigInt(options.padId));
  rows.forEach((row, b) => {
    for (let t = 0; t < row.length; t++) ids[b * seq + t] = BigInt(row[t]);
  });
  const feeds: Record<string, PlainTensor> = { input_ids: { type: "int64", data: ids, dims } };
  if (session.has("attention_mask")) {
    const mask = new BigInt64Array(batch * seq);
    rows.forEach((row, b) => mask.fill(1n, b * seq, b * seq + row.length));
    feeds.attention_mask = { type: "int64", data: mask, dims };
  }
  if (session.has("token_type_ids")) {
    const types = new BigInt64Array(batch * seq);
    options.typeIds?.forEach((row, b) => {
      for (let t = 0; t < row.length; t++) types[b * seq + t] = BigInt(row[t]);
    });
    feeds.token_type_ids = { type: "int64", data: types, dims };
  }
  return { feeds, batch, seq };
}

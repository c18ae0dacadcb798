// Shared by the generated-model tests: temp folders, transformers.js set up for local files only,
// and small tensor helpers.
import * as transformers from "@huggingface/transformers";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEMO_MODEL_SPECS } from "../../../src/engine/generated_models/demo_models.ts";
import type { BertEncoderSpec } from "../../../src/engine/generated_models/bert_encoder.ts";
import type { DecoderFolderSpec } from "../../../src/engine/generated_models/model_folder.ts";

export { transformers };

/**
 * transformers.js reading local folders only. Its cache folder is pointed away from
 * node_modules; nothing is written there since nothing is downloaded.
 */
export function setUpTransformers(): typeof transformers {
  transformers.env.allowRemoteModels = false;
  transformers.env.allowLocalModels = true;
  transformers.env.cacheDir = join(tmpdir(), "svc-tfjs-test-cache");
  return transformers;
}

/** The tiny demo specs, for tests that write variants. */
export const TINY_CHAT: DecoderFolderSpec = DEMO_MODEL_SPECS["demo/chat"].spec as DecoderFolderSpec;
export const TINY_EMBED: BertEncoderSpec = DEMO_MODEL_SPECS["demo/embed"].spec as BertEncoderSpec;

/** int64 tensor `[rows, cols]` from numbers. */
export function int64(rows: number[][]): transformers.Tensor {
  const flat = rows.flat().map((v) => BigInt(v));
  return new transformers.Tensor("int64", BigInt64Array.from(flat), [rows.length, rows[0].length]);
}

/** Index of the largest value of `row`. */
export function argmax(row: ArrayLike<number>): number {
  let best = 0;
  for (let i = 1; i < row.length; i++) if (row[i] > row[best]) best = i;
  return best;
}

/** Largest absolute difference of two equally long arrays. */
export function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) throw new Error(`lengths differ: ${a.length} vs ${b.length}`);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

/** SHA-256 hex of every file under `dir`, by relative path. */
export async function hashTree(dir: string, prefix = ""): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for await (const e of Deno.readDir(dir)) {
    const rel = prefix ? `${prefix}/${e.name}` : e.name;
    if (e.isDirectory) Object.assign(out, await hashTree(`${dir}/${e.name}`, rel));
    else {
      const digest = await crypto.subtle.digest("SHA-256", await Deno.readFile(`${dir}/${e.name}`));
      out[rel] = Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join(
        "",
      );
    }
  }
  return out;
}

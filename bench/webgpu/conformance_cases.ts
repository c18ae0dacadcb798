/**
 * For on_device.sh: writes every conformance decoder folder under a root and prints the case list
 * of `_decoder_oracle_probe.ts` (all families and dtypes, the ones a GPU run has verified least
 * first); or, with `--summary <jsonl>`, prints one line per probed case: OK or what differed.
 *
 * @module
 */

import { join } from "node:path";
import {
  DECODER_CASES,
  writeDecoderCase,
} from "../../fixtures/generated_models/conformance_decoders.ts";
import type { OracleResult } from "../../tests/engine/conformance/_decoder_oracle_probe.ts";

/** Cases a GPU run verified with the cache kept on the GPU (bench/RESULTS.md): probed last. */
const VERIFIED = new Set([
  ...["fp32", "fp16", "q4", "q4f16", "q8"].map((d) => `genai-gqa ${d}`),
  ...["fp32", "fp16", "q4f16"].map((d) => `genai-gqa-rotary-embedding ${d}`),
  "optimum-merged fp32",
  ...["fp32", "fp16", "q4", "q4f16", "q8", "int8", "uint8", "bnb4"].map((d) =>
    `optimum-llama ${d}`
  ),
  ...["fp32", "fp16", "q4", "q4f16"].map((d) => `optimum-qwen3 ${d}`),
  ...["fp32", "fp16", "q4", "q4f16", "q8"].map((d) => `optimum-gemma3 ${d}`),
  "tjs-quantize-fp32-io fp32",
]);

if (Deno.args[0] === "--summary") {
  const lines = (await Deno.readTextFile(Deno.args[1])).split("\n").filter(Boolean);
  for (const line of lines) {
    const r = JSON.parse(line) as OracleResult;
    const same = (a: string[], b: string[]) => JSON.stringify(a) === JSON.stringify(b);
    const ok = !r.error && same(r.alone, r.oracle) && same(r.batched, r.oracle) &&
      same(r.prefixed, r.prefixOracle) && same(r.prefixedBatched, r.prefixOracle.slice(1));
    console.log(r.name, r.dtype, ok ? "OK" : `DIFFERS ${r.error ?? ""}`, r.cachedTokens);
  }
} else {
  const root = Deno.args[0];
  const cases = [];
  for (const [name, { dtypes }] of Object.entries(DECODER_CASES)) {
    await writeDecoderCase(join(root, name), name);
    for (const dtype of dtypes) cases.push({ name, folder: join(root, name), dtype });
  }
  const verified = (c: { name: string; dtype: string }) => VERIFIED.has(`${c.name} ${c.dtype}`);
  console.log(JSON.stringify(cases.sort((a, b) => Number(verified(a)) - Number(verified(b)))));
}

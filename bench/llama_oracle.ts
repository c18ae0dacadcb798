/**
 * llama.cpp as the oracle for our GGUF files (not run in CI: it needs a built llama-server, see
 * `bench/build_llama_server.sh`). Checks that llama-server loads the bench chat model's GGUF,
 * tokenizes chat prompts to the ids our tokenizer gives, and greedy-decodes what transformers.js'
 * own `generate()` decodes on the fp32 ONNX folder of the same weights. Where the two pick
 * different tokens, prints both candidates' logits from the ONNX model, so a near-tie (F16 vs
 * fp32 rounding) is told apart from a wrong file.
 *
 * Usage: deno run --allow-all bench/llama_oracle.ts [--type F16|Q8_0] [--tokens 16]
 *
 * @module
 */

import { parseArgs } from "node:util";
import * as transformers from "@huggingface/transformers";
import { OutputPaths } from "../src/config/output_paths.ts";
import { materializeDemoModel } from "../src/engine/generated_models/demo_models.ts";
import type { LlamaGgufType } from "../fixtures/generated_models/llama_gguf.ts";
import { benchGguf, findLlamaServer, LLAMA_BUILD_HINT, LlamaServer } from "./_llama_server.ts";
import { chatPrompt } from "./_texts.ts";

const MODEL = "demo/chat-bench";

const { values } = parseArgs({
  args: Deno.args,
  options: { type: { type: "string", default: "F16" }, tokens: { type: "string", default: "16" } },
});
const type = values.type as LlamaGgufType;
const steps = Number(values.tokens);
const binary = await findLlamaServer();
if (!binary) {
  console.error(LLAMA_BUILD_HINT);
  Deno.exit(2);
}
transformers.env.allowRemoteModels = false;
const cacheDir = OutputPaths.resolve().cache;
const folder = await materializeDemoModel(MODEL, cacheDir);
const gguf = await benchGguf(cacheDir, MODEL, type);
const tok = await transformers.AutoTokenizer.from_pretrained(folder);
const model = await transformers.AutoModelForCausalLM.from_pretrained(folder, {
  device: "cpu",
  dtype: "fp32",
});
const server = await LlamaServer.start(binary, gguf, { parallel: 1 });
const int64 = (ids: number[]) =>
  new transformers.Tensor("int64", BigInt64Array.from(ids.map(BigInt)), [1, ids.length]);

let failures = 0;
try {
  for (let i = 0; i < 4; i++) {
    const text = tok.apply_chat_template([{ role: "user", content: chatPrompt(i, 40) }], {
      tokenize: false,
      add_generation_prompt: true,
    }) as string;
    const ours = tok.encode(text);
    const theirs = await server.tokenize(text);
    const sameIds = JSON.stringify(ours) === JSON.stringify(theirs);
    if (!sameIds) failures++;
    console.log(`prompt ${i}: ${ours.length} tokens, llama.cpp tokenizes the same: ${sameIds}`);

    const seq = await model.generate({
      input_ids: int64(ours),
      attention_mask: int64(ours.map(() => 1)),
      max_new_tokens: steps,
      do_sample: false,
    }) as transformers.Tensor;
    const reference = (seq.tolist() as bigint[][])[0].slice(ours.length).map(Number);
    const res = await fetch(`${server.baseUrl}/completion`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        prompt: ours,
        n_predict: steps,
        temperature: 0,
        top_k: 1,
        ignore_eos: true,
        cache_prompt: false,
        return_tokens: true,
      }),
    });
    const llama = ((await res.json()).tokens as number[]).slice(0, steps);
    const firstDiff = reference.findIndex((t, k) => llama[k] !== t);
    console.log(`  transformers.js: ${reference.join(" ")}`);
    console.log(`  llama.cpp ${type}:  ${llama.join(" ")}`);
    if (firstDiff < 0) continue;
    // Logits of the ONNX model where the two part: a near-tie explains a flip, a gap does not.
    const ids = [...ours, ...reference.slice(0, firstDiff)];
    const out = await model({ input_ids: int64(ids), attention_mask: int64(ids.map(() => 1)) });
    const vocab = out.logits.dims[2];
    const row = (out.logits.data as Float32Array).subarray((ids.length - 1) * vocab);
    const gap = row[reference[firstDiff]] - row[llama[firstDiff]];
    console.log(
      `  first difference at step ${firstDiff}: ONNX logit of ours ${
        row[reference[firstDiff]].toFixed(4)
      }, of llama.cpp's ${row[llama[firstDiff]].toFixed(4)} (gap ${gap.toFixed(4)})`,
    );
    if (gap > 0.05) failures++;
  }
} finally {
  await server.stop();
  await model.dispose();
}
console.log(failures === 0 ? "llama.cpp agrees" : `${failures} disagreement(s)`);
Deno.exit(failures === 0 ? 0 : 1);

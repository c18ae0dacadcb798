// ChatEngine.promptLogprobs() (legacy completions' echo with logprobs) against transformers.js'
// own forward pass of the whole prompt on the same folder, log-softmaxed: on demo/chat (which
// takes num_logits_to_keep) and on a variant that returns every position's logits, whole and in
// chunks of a few positions.
import { assert, assertEquals } from "../../_assert.ts";
import { setupLogger } from "../../../src/core/logging.ts";
import { loadModel } from "../../../src/engine/load_model.ts";
import { ChatEngine } from "../../../src/engine/chat/chat_engine.ts";
import { writeDecoderFolder } from "../../../src/engine/generated_models/model_folder.ts";
import {
  logSoftmaxAt,
  packedLogprobs,
  positionLogprobs,
} from "../../../src/engine/decoding/log_softmax.ts";
import { addedAround } from "../../../src/engine/chat/prompt_scorer.ts";
import { demoFolder } from "../../_helpers/demo_engines.ts";
import { int64, setUpTransformers, TINY_CHAT } from "../generated_models/_fixtures.ts";

setupLogger("error");
const { AutoModelForCausalLM } = setUpTransformers();

const TOLERANCE = 1e-3;
const PROMPT = "The quick brown fox jumps over the lazy dog, again and again.";

/** Every position's log-softmax from transformers.js' forward pass over `ids` (no cache). */
async function oracle(folder: string, ids: number[]): Promise<Float32Array[]> {
  const model = await AutoModelForCausalLM.from_pretrained(folder, {
    device: "cpu",
    dtype: "fp32",
  });
  try {
    const out = await model({
      input_ids: int64([ids]),
      attention_mask: int64([ids.map(() => 1)]),
    });
    const [, positions, vocab] = out.logits.dims as number[];
    const data = out.logits.data as Float32Array;
    return Array.from({ length: positions }, (_, p) => {
      const row = data.subarray(p * vocab, (p + 1) * vocab);
      let max = -Infinity;
      for (const x of row) max = Math.max(max, x);
      let sum = 0;
      for (const x of row) sum += Math.exp(x - max);
      const lse = max + Math.log(sum);
      return Float32Array.from(row, (x) => x - lse);
    });
  } finally {
    await model.dispose();
  }
}

async function checkFolder(folder: string, maxPrefillLogits?: number): Promise<void> {
  const model = await loadModel(folder, "chat", { device: "cpu", dtype: "fp32" });
  const engine = await ChatEngine.create(model, {
    id: "test/chat",
    ...(maxPrefillLogits ? { scheduler: { maxPrefillLogits } } : {}),
  });
  try {
    const ids = engine.promptIds({ prompt: PROMPT });
    const expected = await oracle(folder, ids);
    const [got, again] = await engine.promptLogprobs([{ prompt: PROMPT }, { tokenIds: ids }], {
      topLogprobs: 3,
    });
    assertEquals(again, got, "a token-id prompt gets the same as its text");
    assertEquals(got.length, ids.length);
    assertEquals(got[0].logprob, null);
    assertEquals(got[0].topLogprobs, null);
    for (let i = 1; i < ids.length; i++) {
      const want = expected[i - 1];
      const lp = got[i];
      assert(Math.abs(lp.logprob! - want[ids[i]]) < TOLERANCE, `token ${i}: ${lp.logprob}`);
      const top = lp.topLogprobs!;
      assertEquals(top.length, 3);
      const best = [...want.keys()].sort((a, b) => want[b] - want[a]).slice(0, 3);
      top.forEach((t, k) => {
        assert(Math.abs(t.logprob - want[best[k]]) < TOLERANCE, `token ${i}, alternative ${k}`);
        assert(k === 0 || t.logprob <= top[k - 1].logprob);
      });
      assertEquals(lp.token, model.tokenizer.decode([ids[i]], { skip_special_tokens: false }));
    }
  } finally {
    await engine.dispose();
  }
}

Deno.test("ChatEngine.promptLogprobs() equals transformers.js' log-softmax of a full forward pass (num_logits_to_keep model)", async () => {
  await checkFolder(await demoFolder("demo/chat"));
  // Chunks of 5 positions through the cache (5 × vocab logits per call).
  await checkFolder(await demoFolder("demo/chat"), 5 * TINY_CHAT.vocabSize);
});

Deno.test("ChatEngine.promptLogprobs() equals the oracle on a model that returns every position's logits, in chunks", async () => {
  const folder = await Deno.makeTempDir({ prefix: "svc-chat-all-logits-" });
  try {
    await writeDecoderFolder(folder, { ...TINY_CHAT, numLogitsToKeep: false }, {
      id: "test/all-logits",
      formats: ["fp32"],
    });
    await checkFolder(folder);
    await checkFolder(folder, 4 * TINY_CHAT.vocabSize);
  } finally {
    await Deno.remove(folder, { recursive: true });
  }
});

Deno.test("ChatEngine.promptLogprobs() refuses an empty prompt, ids outside the vocabulary and a prompt as long as the context", async () => {
  const model = await loadModel(await demoFolder("demo/chat"), "chat", {
    device: "cpu",
    dtype: "q8",
  });
  const engine = await ChatEngine.create(model, { id: "demo/chat" });
  try {
    const refused = async (inputs: Parameters<ChatEngine["promptLogprobs"]>[0], param: string) => {
      const err = await engine.promptLogprobs(inputs, { topLogprobs: 1 }).then(
        () => undefined,
        (e) => e,
      );
      assertEquals(err?.param, param);
    };
    await refused([{ prompt: "ok" }, { tokenIds: [1, 99999] }], "prompt.1");
    await refused([{ tokenIds: new Array(engine.info.contextLength).fill(5) }], "prompt");
    // One token: nothing before it, so no log-probability.
    const [one] = await engine.promptLogprobs([{ tokenIds: [7] }], { topLogprobs: 2 });
    assertEquals(one.map((t) => t.logprob), [null]);
  } finally {
    await engine.dispose();
  }
});

Deno.test("logSoftmaxAt() gives the log-probability of a token and the best alternatives, best first", () => {
  const row = Float32Array.of(1, 3, 2, 3);
  const { logprob, top } = logSoftmaxAt(row, 2, 3);
  const lse = Math.log(Math.exp(1) + 2 * Math.exp(3) + Math.exp(2));
  assert(Math.abs(logprob - (2 - lse)) < 1e-6);
  assertEquals(top.map((t) => t.tokenId), [1, 3, 2]);
  assertEquals(logSoftmaxAt(row, 0, 0).top, []);
});

Deno.test("packedLogprobs() packs logSoftmaxAt() of the last positions of a call's logits", () => {
  const [positions, vocab, top] = [5, 7, 3];
  const logits = Float32Array.from({ length: positions * vocab }, (_, i) => Math.sin(i * 1.7) * 4);
  const targets = Int32Array.of(6, 0, 3); // the last three positions
  const packed = packedLogprobs(logits, [1, positions, vocab], { targets, top });
  for (let i = 0; i < targets.length; i++) {
    const row = logits.subarray((2 + i) * vocab, (3 + i) * vocab);
    assertEquals(positionLogprobs(packed, i, top), logSoftmaxAt(row, targets[i], top));
  }
  // More alternatives asked than the vocabulary has: the rest is left out.
  const wide = packedLogprobs(logits, [1, positions, vocab], { targets: Int32Array.of(1), top: 9 });
  assertEquals(positionLogprobs(wide, 0, 9).top.length, vocab);
});

Deno.test("addedAround() finds the tokens a tokenizer put before and after a text", () => {
  assertEquals(addedAround([1, 7, 8], [1]), { before: 1, after: 0 });
  assertEquals(addedAround([101, 7, 102], [101, 102]), { before: 1, after: 1 });
  // A text that starts with the BOS token's own text: only the first is the tokenizer's.
  assertEquals(addedAround([1, 1, 7], [1]), { before: 1, after: 0 });
  assertEquals(addedAround([7, 8], []), { before: 0, after: 0 });
  assertEquals(addedAround([7, 8], [1]), { before: 0, after: 0 });
});

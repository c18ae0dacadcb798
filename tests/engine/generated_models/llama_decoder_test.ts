import { assert, assertEquals } from "../../_assert.ts";
import {
  type DecoderFolderSpec,
  writeDecoderFolder,
} from "../../../src/engine/generated_models/model_folder.ts";
import { argmax, hashTree, int64, maxAbsDiff, setUpTransformers, TINY_CHAT } from "./_fixtures.ts";

const { AutoModelForCausalLM, AutoTokenizer, Tensor } = setUpTransformers();
type Model = Awaited<ReturnType<typeof AutoModelForCausalLM.from_pretrained>>;
type Tok = Awaited<ReturnType<typeof AutoTokenizer.from_pretrained>>;
// deno-lint-ignore no-explicit-any
type Outputs = Record<string, any>;

const PROMPTS = ["Hi there!", "Tell me a long story about dragons and castles, please.", "2+2?"];
// How far q8 logits may move between mathematically equal computations: activations are rounded
// to int8 per token, so float noise of ~1e-7 (another summation order) can flip one rounding and
// shift logits (std 3) by a few hundredths. fp32 results agree to float noise.
// q4 (MatMulNBits, accuracy level 4) quantizes activations to int8 per block of 32 alike.
const LOGIT_TOLERANCE = { fp32: 1e-4, q8: 0.25, q4: 0.25 } as const;

/** `token` is the argmax of `row`, or (q8) within `tolerance` of it. */
function isTop(row: Float32Array, token: number, tolerance: number): boolean {
  return token === argmax(row) || (tolerance > 1e-3 && row[token] >= row[argmax(row)] - tolerance);
}

async function writeChat(
  overrides: Partial<DecoderFolderSpec>,
  formats: ("fp32" | "q8" | "q4")[] = ["fp32", "q8"],
): Promise<string> {
  const folder = await Deno.makeTempDir({ prefix: "svc-chat-" });
  await writeDecoderFolder(folder, { ...TINY_CHAT, ...overrides }, { id: "test/chat", formats });
  return folder;
}

function chatIds(tok: Tok, prompt: string): number[] {
  const text = tok.apply_chat_template([{ role: "user", content: prompt }], {
    tokenize: false,
    add_generation_prompt: true,
  }) as string;
  return tok.encode(text);
}

/** Forward pass over `ids` with no cache; the logits of every position. */
async function fullForward(model: Model, ids: number[]): Promise<Float32Array> {
  const out: Outputs = await model({
    input_ids: int64([ids]),
    attention_mask: int64([ids.map(() => 1)]),
  });
  return out.logits.data as Float32Array;
}

async function greedy(
  model: Model,
  ids: number[][],
  mask: number[][],
  n: number,
): Promise<number[][]> {
  const seq = await model.generate({
    input_ids: int64(ids),
    attention_mask: int64(mask),
    max_new_tokens: n,
    do_sample: false,
  }) as InstanceType<typeof Tensor>;
  return (seq.tolist() as bigint[][]).map((row) => row.slice(ids[0].length).map(Number));
}

async function withModel(
  folder: string,
  dtype: "fp32" | "q8" | "q4",
  fn: (model: Model, tok: Tok, vocab: number) => Promise<void>,
): Promise<void> {
  const tok = await AutoTokenizer.from_pretrained(folder);
  const model = await AutoModelForCausalLM.from_pretrained(folder, { device: "cpu", dtype });
  try {
    await fn(model, tok, TINY_CHAT.vocabSize);
  } finally {
    await model.dispose();
  }
}

Deno.test("generated decoder: KV-cache decoding equals full forward passes", async (t) => {
  const untied = await writeChat({ eosLogitBias: 0 }, ["fp32", "q8", "q4"]);
  const tied = await writeChat({ eosLogitBias: 0, tieWordEmbeddings: true, seed: 7 });
  try {
    for (const [name, folder] of [["untied", untied], ["tied", tied]]) {
      for (const dtype of ["fp32", "q8", "q4"] as const) {
        if (dtype === "q4" && folder === tied) continue; // q4 files are written for untied heads

        await t.step(
          `${name} ${dtype}: greedy generate() with cache matches argmax without cache`,
          () =>
            withModel(folder, dtype, async (model, tok, V) => {
              const prompt = chatIds(tok, PROMPTS[1]);
              const gen = (await greedy(model, [prompt], [prompt.map(() => 1)], 12))[0];
              assertEquals(gen.length, 12);
              for (let k = 0; k < gen.length; k++) {
                const ids = [...prompt, ...gen.slice(0, k)];
                const row = (await fullForward(model, ids)).subarray((ids.length - 1) * V);
                assert(
                  isTop(row, gen[k], LOGIT_TOLERANCE[dtype]),
                  `step ${k}: ${gen[k]} vs ${argmax(row)}`,
                );
              }
            }),
        );
        await t.step(
          `${name} ${dtype}: forward with past_key_values gives the full pass's logits`,
          () =>
            withModel(folder, dtype, async (model, tok, V) => {
              const prompt = chatIds(tok, PROMPTS[0]);
              const follow = [11, 500, 3000, 42];
              const all = [...prompt, ...follow];
              const full = await fullForward(model, all);
              // Prefill: the cache starts empty (past length 0).
              let out: Outputs = await model({
                input_ids: int64([prompt]),
                attention_mask: int64([prompt.map(() => 1)]),
              });
              const prefill = out.logits.data as Float32Array;
              const tolerance = LOGIT_TOLERANCE[dtype];
              assert(
                maxAbsDiff(prefill, full.subarray(0, prompt.length * V)) < tolerance,
                "prefill",
              );
              for (let k = 0; k < follow.length; k++) {
                const past: Outputs = {};
                for (const [key, value] of Object.entries(out)) {
                  if (key.startsWith("present.")) {
                    past[key.replace("present.", "past_key_values.")] = value;
                  }
                }
                assertEquals(past["past_key_values.0.key"].dims, [1, 2, prompt.length + k, 16]);
                out = await model({
                  input_ids: int64([[follow[k]]]),
                  attention_mask: int64([all.slice(0, prompt.length + k + 1).map(() => 1)]),
                  past_key_values: past,
                });
                const pos = prompt.length + k;
                const diff = maxAbsDiff(
                  out.logits.data as Float32Array,
                  full.subarray(pos * V, (pos + 1) * V),
                );
                assert(diff < tolerance, `step ${k}: cached and full logits differ by ${diff}`);
              }
            }),
        );
      }
    }
  } finally {
    await Deno.remove(untied, { recursive: true });
    await Deno.remove(tied, { recursive: true });
  }
});

Deno.test("generated decoder: RoPE makes logits depend on relative positions only", async () => {
  const folder = await writeChat({});
  try {
    await withModel(folder, "fp32", async (model, tok) => {
      const ids = chatIds(tok, PROMPTS[1]);
      const run = async (offset: number): Promise<Float32Array> => {
        const out: Outputs = await model({
          input_ids: int64([ids]),
          attention_mask: int64([ids.map(() => 1)]),
          position_ids: int64([ids.map((_, i) => i + offset)]),
        });
        return out.logits.data as Float32Array;
      };
      const base = await run(0);
      const shifted = await run(37);
      assert(
        maxAbsDiff(base, shifted) < 1e-3,
        `shift changed logits by ${maxAbsDiff(base, shifted)}`,
      );
      // Positions do matter: reversing the token order changes the last logits.
      const reversed: Outputs = await model({
        input_ids: int64([[...ids].reverse()]),
        attention_mask: int64([ids.map(() => 1)]),
      });
      assert(maxAbsDiff(reversed.logits.data as Float32Array, base) > 0.1);
    });
  } finally {
    await Deno.remove(folder, { recursive: true });
  }
});

Deno.test("generated decoder: a left-padded batch generates what single runs do", async () => {
  const folder = await writeChat({ eosLogitBias: 0 });
  try {
    for (const dtype of ["fp32", "q8"] as const) {
      await withModel(folder, dtype, async (model, tok, V) => {
        const prompts = PROMPTS.map((p) => chatIds(tok, p));
        const width = Math.max(...prompts.map((p) => p.length));
        const ids = prompts.map((p) => [...Array(width - p.length).fill(tok.pad_token_id), ...p]);
        const mask = prompts.map((p) => [...Array(width - p.length).fill(0), ...p.map(() => 1)]);
        const batch = await greedy(model, ids, mask, 10);
        const first: Outputs = await model({ input_ids: int64(ids), attention_mask: int64(mask) });
        for (let i = 0; i < prompts.length; i++) {
          // q8 may part ways after a near-tie (see LOGIT_TOLERANCE); fp32 must not.
          const alone = (await greedy(model, [prompts[i]], [prompts[i].map(() => 1)], 10))[0];
          if (dtype === "fp32") assertEquals(batch[i], alone);
          const single = await fullForward(model, prompts[i]);
          const last = (first.logits.data as Float32Array).subarray(
            ((i + 1) * width - 1) * V,
            (i + 1) * width * V,
          );
          const diff = maxAbsDiff(last, single.subarray((prompts[i].length - 1) * V));
          assert(
            diff < LOGIT_TOLERANCE[dtype],
            `${dtype} row ${i}: padded and single differ by ${diff}`,
          );
        }
      });
    }
  } finally {
    await Deno.remove(folder, { recursive: true });
  }
});

Deno.test("generated decoder: the EOS logit bias decides when generations stop", async () => {
  const folders = await Promise.all(
    [100, TINY_CHAT.eosLogitBias, 0].map((b) => writeChat({ eosLogitBias: b })),
  );
  try {
    const ends: number[][] = [];
    for (const folder of folders) {
      const lengths: number[] = [];
      await withModel(folder, "fp32", async (model, tok) => {
        for (
          const p of [
            ...PROMPTS,
            "Hello",
            "Why is the sky blue?",
            "Write a poem",
            "List colors",
            "Bye",
          ]
        ) {
          const ids = chatIds(tok, p);
          const gen = (await greedy(model, [ids], [ids.map(() => 1)], 48))[0];
          const eos = gen.indexOf(tok.eos_token_id!);
          assert(eos === -1 || eos === gen.length - 1, "generation went on past EOS");
          lengths.push(eos === -1 ? Infinity : gen.length);
        }
      });
      ends.push(lengths);
    }
    assert(ends[0].every((n) => n === 1), `bias 100: ${ends[0]}`);
    const stopped = ends[1].filter(Number.isFinite);
    assert(stopped.length >= 5 && stopped.some((n) => n > 3), `demo bias: ${ends[1]}`);
    assert(ends[2].every((n) => n === Infinity), `no bias: ${ends[2]}`);
  } finally {
    for (const f of folders) await Deno.remove(f, { recursive: true });
  }
});

Deno.test("writeDecoderFolder() writes identical files for the same seed, other weights for another", async () => {
  const [a, b, c] = await Promise.all([writeChat({}), writeChat({}), writeChat({ seed: 99 })]);
  try {
    const [ha, hb, hc] = await Promise.all([hashTree(a), hashTree(b), hashTree(c)]);
    assertEquals(ha, hb);
    assert(ha["onnx/model.onnx"] !== hc["onnx/model.onnx"]);
    assertEquals(ha["tokenizer.json"], hc["tokenizer.json"]);
    const config = JSON.parse(await Deno.readTextFile(`${a}/config.json`));
    assertEquals(config.model_type, "llama");
    assertEquals(config.svc_random_weights, true);
    assertEquals(config.num_key_value_heads, 2);
    assertEquals(config.head_dim, 16);
    const gen = JSON.parse(await Deno.readTextFile(`${a}/generation_config.json`));
    assertEquals(gen.eos_token_id[0], config.eos_token_id);
  } finally {
    for (const f of [a, b, c]) await Deno.remove(f, { recursive: true });
  }
});

import { assert, assertEquals } from "../../_assert.ts";
import {
  DECODER_CASES,
  decoderCaseFiles,
  writeDecoderCase,
} from "../../../fixtures/generated_models/conformance_decoders.ts";
import {
  EXPORT_DTYPE_SUFFIX,
  type ExportDtype,
} from "../../../src/engine/generated_models/weight_formats.ts";
import { checkCase } from "./_conformance.ts";
import { hashTree, setUpTransformers } from "./_fixtures.ts";

const transformers = setUpTransformers();

/** Operator types (as they appear in the file) that carry each dtype's weights. */
const WEIGHT_OPS: Record<ExportDtype, string[]> = {
  fp32: ["MatMul"],
  fp16: ["MatMul", "Cast"],
  q4: ["MatMulNBits"],
  q4f16: ["MatMulNBits"],
  q8: ["DynamicQuantizeLinear", "MatMulInteger"],
  int8: ["DynamicQuantizeLinear", "MatMulInteger"],
  uint8: ["DynamicQuantizeLinear", "MatMulInteger"],
  bnb4: ["MatMulBnb4"],
};

function contains(bytes: Uint8Array, text: string): boolean {
  return new TextDecoder("latin1").decode(bytes).includes(text);
}

async function listOnnx(folder: string): Promise<string[]> {
  const names: string[] = [];
  for await (const e of Deno.readDir(`${folder}/onnx`)) names.push(`onnx/${e.name}`);
  return names.sort();
}

for (const [name, c] of Object.entries(DECODER_CASES)) {
  Deno.test(`decoder conformance ${name}: transformers.js (onnxruntime-node) runs every dtype`, async (t) => {
    const folder = await Deno.makeTempDir({ prefix: `svc-conf-${name}-` });
    try {
      await writeDecoderCase(folder, name);
      await t.step("the folder has exactly the case's files", async () => {
        assertEquals(await listOnnx(folder), decoderCaseFiles(c).sort());
        const config = JSON.parse(await Deno.readTextFile(`${folder}/config.json`));
        assertEquals(config.model_type, c.modelType);
        assertEquals(config.head_dim, c.headDim);
        const tjs = config["transformers.js_config"] ?? {};
        assertEquals(tjs.kv_cache_dtype !== undefined, c.kvCacheDtype);
        assertEquals(tjs.use_external_data_format !== undefined, c.declareExternalData);
        for (const dtype of c.externalData?.dtypes ?? []) {
          const file = decoderCaseFiles(c).find((f) =>
            f.endsWith(c.externalData!.suffix) && f.includes(dtype === "fp32" ? "l.onnx" : dtype)
          );
          assert(file, `no data file for ${dtype}`);
          const model = await Deno.stat(
            `${folder}/${file.slice(0, -c.externalData!.suffix.length)}`,
          );
          const data = await Deno.stat(`${folder}/${file}`);
          assert(model.size < data.size / 10, `${file}: the weights are not in the data file`);
        }
      });
      await t.step("each file holds its dtype's weight operators", async () => {
        for (const dtype of c.dtypes) {
          const file = `${folder}/onnx/${c.fileName}${EXPORT_DTYPE_SUFFIX[dtype]}.onnx`;
          const bytes = await Deno.readFile(file);
          const ops = [...WEIGHT_OPS[dtype]];
          if (c.attention === "gqa") ops.push("GroupQueryAttention");
          if (c.gqaRotary === "rotary-embedding" && c.attention === "gqa") {
            ops.push("RotaryEmbedding");
          }
          if (c.merged) ops.push("If", "use_cache_branch");
          for (const op of ops) assert(contains(bytes, op), `${file} has no ${op}`);
        }
      });
      for (const dtype of c.dtypes) {
        await t.step(
          `${dtype}: generate() runs and cached decoding equals full passes`,
          async () => {
            const report = await checkCase(transformers, folder, name, dtype);
            assert(report.generated.length > 0);
          },
        );
      }
    } finally {
      await Deno.remove(folder, { recursive: true });
    }
  });
}

Deno.test("decoder conformance: same case, same bytes (external data included)", async () => {
  const a = await Deno.makeTempDir({ prefix: "svc-conf-a-" });
  const b = await Deno.makeTempDir({ prefix: "svc-conf-b-" });
  try {
    await writeDecoderCase(a, "external-data");
    await writeDecoderCase(b, "external-data");
    assertEquals(await hashTree(a), await hashTree(b));
  } finally {
    await Deno.remove(a, { recursive: true });
    await Deno.remove(b, { recursive: true });
  }
});

Deno.test("decoder conformance optimum-gemma3: transformers.js numbers gemma3_text positions from 1", async () => {
  const folder = await Deno.makeTempDir({ prefix: "svc-conf-gemma3-" });
  try {
    await writeDecoderCase(folder, "optimum-gemma3");
    const model = await transformers.AutoModelForCausalLM.from_pretrained(folder, {
      device: "cpu",
      dtype: "fp32",
      local_files_only: true,
    });
    try {
      const ids = [11, 500, 3000, 42, 7];
      const row = (values: number[]) =>
        new transformers.Tensor("int64", BigInt64Array.from(values, BigInt), [1, values.length]);
      const logits = async (extra: Record<string, unknown>): Promise<Float32Array> => {
        // deno-lint-ignore no-explicit-any
        const out: any = await model({
          input_ids: row(ids),
          attention_mask: row(ids.map(() => 1)),
          ...extra,
        });
        return out.logits.data as Float32Array;
      };
      const implicit = await logits({});
      const fromOne = await logits({ position_ids: row(ids.map((_, i) => i + 1)) });
      const fromZero = await logits({ position_ids: row(ids.map((_, i) => i)) });
      assertEquals(implicit, fromOne);
      const moved = implicit.reduce((m, v, i) => Math.max(m, Math.abs(v - fromZero[i])), 0);
      assert(moved > 0.01, `positions from 0 moved logits by ${moved} only`);
    } finally {
      await model.dispose();
    }
  } finally {
    await Deno.remove(folder, { recursive: true });
  }
});

Deno.test("decoder conformance: left-padded batches generate what single runs do, except under GroupQueryAttention", async (t) => {
  const prompts = [[11, 500, 3000, 42, 7, 99, 1234], [5, 6, 7]];
  const n = 4;
  // deno-lint-ignore no-explicit-any
  const greedy = async (model: any, ids: number[][], mask: number[][]): Promise<number[][]> => {
    const tensor = (rows: number[][]) =>
      new transformers.Tensor("int64", BigInt64Array.from(rows.flat(), BigInt), [
        rows.length,
        rows[0].length,
      ]);
    const seq = await model.generate({
      input_ids: tensor(ids),
      attention_mask: tensor(mask),
      max_new_tokens: n,
      do_sample: false,
      eos_token_id: [], // run all n steps in every row
    });
    return (seq.tolist() as bigint[][]).map((row) => row.slice(ids[0].length).map(Number));
  };
  for (const name of ["optimum-llama", "optimum-merged", "genai-gqa"]) {
    await t.step(name, async () => {
      const c = DECODER_CASES[name];
      const folder = await Deno.makeTempDir({ prefix: `svc-conf-pad-${name}-` });
      try {
        await writeDecoderCase(folder, name);
        const model = await transformers.AutoModelForCausalLM.from_pretrained(folder, {
          device: "cpu",
          dtype: "fp32",
          local_files_only: true,
          model_file_name: c.fileName,
        });
        try {
          const width = Math.max(...prompts.map((p) => p.length));
          const ids = prompts.map((p) => [...Array(width - p.length).fill(0), ...p]);
          const mask = prompts.map((p) => [...Array(width - p.length).fill(0), ...p.map(() => 1)]);
          const batch = await greedy(model, ids, mask);
          const alone = [];
          for (const p of prompts) alone.push((await greedy(model, [p], [p.map(() => 1)]))[0]);
          assertEquals(batch[0], alone[0], "the unpadded row");
          if (c.attention === "gqa") {
            // onnxruntime's GroupQueryAttention takes seqlens_k as right padding
            // (gqa_attention_base.h): a left-padded row computes something else.
            assert(batch[1].join() !== alone[1].join(), "GQA handled left padding");
          } else {
            assertEquals(batch[1], alone[1], "the padded row");
          }
        } finally {
          await model.dispose();
        }
      } finally {
        await Deno.remove(folder, { recursive: true });
      }
    });
  }
});

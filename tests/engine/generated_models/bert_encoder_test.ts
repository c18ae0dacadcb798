import { assert, assertEquals } from "../../_assert.ts";
import { writeEncoderFolder } from "../../../src/engine/generated_models/model_folder.ts";
import { maxAbsDiff, setUpTransformers, TINY_EMBED } from "./_fixtures.ts";

const TEXTS = [
  "Hello world",
  "The quick brown fox jumps over the lazy dog, then runs far away into the forest.",
  "Ünïcödé text, 你好, and an emoji 🙂",
  "short",
];

async function withEmbedFolder(fn: (folder: string) => Promise<void>): Promise<void> {
  const folder = await Deno.makeTempDir({ prefix: "svc-embed-" });
  try {
    await writeEncoderFolder(folder, TINY_EMBED, { id: "test/embed" });
    await fn(folder);
  } finally {
    await Deno.remove(folder, { recursive: true });
  }
}

// fp32 agrees to float noise. q8 rounds activations to int8 per token, so float noise (another
// summation order in a padded batch) can flip one rounding: a shift of about 1e-3 at most.
const TOLERANCE = { fp32: 1e-5, q8: 2e-3 } as const;

for (const dtype of ["fp32", "q8"] as const) {
  Deno.test(`generated encoder (${dtype}) embeds texts with mean pooling, batch equal to single`, async () => {
    const { pipeline } = setUpTransformers();
    await withEmbedFolder(async (folder) => {
      const fe = await pipeline("feature-extraction", folder, { device: "cpu", dtype });
      try {
        const batch = await fe(TEXTS, { pooling: "mean", normalize: true });
        assertEquals(batch.dims, [TEXTS.length, TINY_EMBED.hiddenSize]);
        const data = batch.data as Float32Array;
        const rows = TEXTS.map((_, i) => data.slice(i * 64, (i + 1) * 64));
        for (const row of rows) {
          assert(row.every(Number.isFinite));
          const norm = Math.hypot(...row);
          assert(Math.abs(norm - 1) < 1e-5, `norm ${norm}`);
        }
        // Different texts, different vectors.
        for (let i = 0; i < rows.length; i++) {
          for (let j = i + 1; j < rows.length; j++) {
            assert(maxAbsDiff(rows[i], rows[j]) > 1e-3, `texts ${i} and ${j} embed alike`);
          }
        }
        // Padding is masked: each text alone gives the same vector as in the padded batch.
        for (let i = 0; i < TEXTS.length; i++) {
          const single = await fe(TEXTS[i], { pooling: "mean", normalize: true });
          const diff = maxAbsDiff(single.data as Float32Array, rows[i]);
          assert(diff < TOLERANCE[dtype], `text ${i}: batch and single differ by ${diff}`);
        }
      } finally {
        await fe.dispose();
      }
    });
  });
}

Deno.test("generated encoder's q8 file stays close to fp32", async () => {
  const { pipeline } = setUpTransformers();
  await withEmbedFolder(async (folder) => {
    const out: Float32Array[] = [];
    for (const dtype of ["fp32", "q8"] as const) {
      const fe = await pipeline("feature-extraction", folder, { device: "cpu", dtype });
      out.push((await fe(TEXTS[1], { pooling: "mean", normalize: true })).data as Float32Array);
      await fe.dispose();
    }
    let dot = 0;
    for (let i = 0; i < out[0].length; i++) dot += out[0][i] * out[1][i];
    assert(dot > 0.99 && dot < 1 - 1e-7, `cosine fp32 vs q8 = ${dot}`);
  });
});

Deno.test("generated encoder folder carries sentence-transformers pooling and random-weights marks", async () => {
  await withEmbedFolder(async (folder) => {
    const read = async (p: string) => JSON.parse(await Deno.readTextFile(`${folder}/${p}`));
    const config = await read("config.json");
    assertEquals(config.model_type, "bert");
    assertEquals(config.svc_random_weights, true);
    assertEquals(config.hidden_size, TINY_EMBED.hiddenSize);
    const modules = await read("modules.json");
    assertEquals(modules.map((m: { type: string }) => m.type.split(".").pop()), [
      "Transformer",
      "Pooling",
      "Normalize",
    ]);
    const pooling = await read("1_Pooling/config.json");
    assertEquals(pooling.pooling_mode_mean_tokens, true);
    assertEquals(pooling.pooling_mode_cls_token, false);
    assertEquals((await read("tokenizer_config.json")).model_max_length, TINY_EMBED.maxPositions);
    assert((await Deno.readTextFile(`${folder}/README.md`)).includes("RANDOM WEIGHTS"));
  });
});

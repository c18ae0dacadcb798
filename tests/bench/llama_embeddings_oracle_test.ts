// llama.cpp as the oracle for our BERT GGUF files: llama-server started with `--embedding
// --pooling mean` on the GGUF of a demo embedding model must tokenize to the ids transformers.js'
// tokenizer gives (its /tokenize, [CLS] and [SEP] included) and embed like transformers.js' own
// pipeline("feature-extraction") on the fp32 ONNX file of the same weights (mean pooling, L2
// normalized). Needs a built llama-server (bench/build_llama_server.sh); CI does not build one,
// so there these tests are ignored and say why.
import { join } from "node:path";
import { tmpdir } from "node:os";
import { assert, assertEquals } from "../_assert.ts";
import { cosine } from "../_helpers/vectors.ts";
import { TEST_MODEL_CACHE } from "../_helpers/demo_engines.ts";
import { setUpTransformers } from "../engine/generated_models/_fixtures.ts";
import { materializeDemoModel } from "../../src/engine/generated_models/demo_models.ts";
import type { BertGgufType } from "../../fixtures/generated_models/bert_gguf.ts";
import {
  benchGguf,
  findLlamaServer,
  LLAMA_BUILD_HINT,
  LlamaServer,
} from "../../bench/_llama_server.ts";
import { makeTexts } from "../../bench/_texts.ts";

const binary = await findLlamaServer();
if (!binary) console.log(`llama.cpp embedding oracle tests ignored: ${LLAMA_BUILD_HINT}`);

/** Bench-like texts and harder ones: case, punctuation, digits, accents, CJK, emoji, long words. */
const TEXTS = [
  ...makeTexts(3, 8, 11),
  ...makeTexts(2, 198, 12),
  "Hello, World! The QUICK brown fox jumps over 13 lazy dogs.",
  "Café déjà vu: naïve résumé, ÉCOLE.",
  "unbelievably antidisestablishmentarianism pneumonoultramicroscopic",
  "中文的句子 and 日本語 mixed with English 🙂👍",
  "tabs\tand\nnew lines,   many   spaces... (parentheses) [brackets] {braces} a-b_c@d.e",
  "x",
];

/** Minimum cosine between llama.cpp's vector and transformers.js' fp32 vector, per GGUF type. */
const MIN_COSINE: Record<BertGgufType, number> = { F32: 0.99999, F16: 0.9999, Q8_0: 0.999 };

async function llamaEmbeddings(server: LlamaServer, texts: string[]) {
  const res = await fetch(`${server.baseUrl}/v1/embeddings`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ input: texts, model: "gguf" }),
  });
  const body = await res.json();
  assert(res.ok, `llama-server /v1/embeddings answered ${res.status}: ${JSON.stringify(body)}`);
  const data = [...body.data].sort((a: { index: number }, b: { index: number }) =>
    a.index - b.index
  );
  return {
    vectors: data.map((d: { embedding: number[] }) => d.embedding),
    promptTokens: body.usage.prompt_tokens as number,
  };
}

for (
  const [id, types] of [
    ["demo/embed", ["F32", "F16", "Q8_0"]],
    ["demo/embed-bench", ["F32", "Q8_0"]],
  ] as const
) {
  Deno.test({
    name: `llama-server on the ${id} GGUF (${
      types.join(", ")
    }) tokenizes like our tokenizer and embeds like transformers.js`,
    ignore: !binary,
    fn: async () => {
      const transformers = setUpTransformers();
      const folder = await materializeDemoModel(id, TEST_MODEL_CACHE);
      const extractor = await transformers.pipeline("feature-extraction", folder, {
        device: "cpu",
        dtype: "fp32",
        local_files_only: true,
      });
      try {
        const ours = (await extractor(TEXTS, { pooling: "mean", normalize: true }))
          .tolist() as number[][];
        const ids = TEXTS.map((t) => extractor.tokenizer.encode(t) as number[]);
        const ggufDir = join(tmpdir(), "svc-test-gguf");
        for (const type of types) {
          const gguf = await benchGguf(ggufDir, id, type);
          const server = await LlamaServer.start(binary!, gguf, {
            threads: 1,
            parallel: 2,
            embedding: { pooling: "mean" },
          });
          try {
            for (let i = 0; i < TEXTS.length; i++) {
              assertEquals(
                await server.tokenize(TEXTS[i], { addSpecial: true }),
                ids[i],
                `${type}: token ids of text ${i} (${JSON.stringify(TEXTS[i].slice(0, 40))})`,
              );
            }
            const { vectors, promptTokens } = await llamaEmbeddings(server, TEXTS);
            assertEquals(promptTokens, ids.reduce((n, row) => n + row.length, 0), "usage tokens");
            const cosines = vectors.map((v: number[], i: number) => cosine(v, ours[i]));
            const worst = Math.min(...cosines);
            console.log(
              `${id} ${type}: worst cosine vs transformers.js fp32 ${worst.toFixed(7)} (1 - cos = ${
                (1 - worst).toExponential(1)
              })`,
            );
            assert(
              worst > MIN_COSINE[type],
              `${type}: cosines ${cosines.map((c) => c.toFixed(5))}`,
            );
          } finally {
            await server.stop();
          }
        }
      } finally {
        await extractor.dispose();
      }
    },
  });
}

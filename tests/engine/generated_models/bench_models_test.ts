// Smoke test of the benchmark-size demo models (SmolLM2-135M and all-MiniLM-L6-v2 shapes): they
// are generated (~6 s, ~900 MB on disk), load in transformers.js and run one forward pass each.
import { assert, assertEquals } from "../../_assert.ts";
import { materializeDemoModel } from "../../../src/engine/generated_models/demo_models.ts";
import { int64, setUpTransformers } from "./_fixtures.ts";

Deno.test("materializeDemoModel() gives bench-size models that load and run in fp32 and q8 (chat: q4 too)", async () => {
  const { AutoModel, AutoModelForCausalLM, AutoTokenizer } = setUpTransformers();
  const cache = await Deno.makeTempDir({ prefix: "svc-bench-models-" });
  try {
    const [chat, embed] = await Promise.all([
      materializeDemoModel("demo/chat-bench", cache),
      materializeDemoModel("demo/embed-bench", cache),
    ]);
    const chatConfig = JSON.parse(await Deno.readTextFile(`${chat}/config.json`));
    assertEquals(
      [chatConfig.hidden_size, chatConfig.num_hidden_layers, chatConfig.num_attention_heads],
      [576, 30, 9],
    );
    assertEquals([chatConfig.num_key_value_heads, chatConfig.vocab_size], [3, 49152]);
    const chatTok = await AutoTokenizer.from_pretrained(chat);
    const ids = chatTok.encode("The quick brown fox jumps over the lazy dog.");
    const embedTok = await AutoTokenizer.from_pretrained(embed);
    const enc = embedTok(["a short text", "a somewhat longer text with more words in it"], {
      padding: true,
    });
    for (const dtype of ["fp32", "q8", "q4"] as const) {
      const lm = await AutoModelForCausalLM.from_pretrained(chat, { device: "cpu", dtype });
      try {
        // deno-lint-ignore no-explicit-any
        const out: Record<string, any> = await lm({
          input_ids: int64([ids]),
          attention_mask: int64([ids.map(() => 1)]),
        });
        assertEquals(out.logits.dims, [1, ids.length, 49152]);
        assertEquals(out["present.29.key"].dims, [1, 3, ids.length, 64]);
        assert((out.logits.data as Float32Array).every(Number.isFinite));
      } finally {
        await lm.dispose();
      }
      if (dtype === "q4") continue; // the embedding model has no q4 file
      const encoder = await AutoModel.from_pretrained(embed, { device: "cpu", dtype });
      try {
        const out = await encoder(enc);
        assertEquals(out.last_hidden_state.dims, [2, enc.input_ids.dims[1], 384]);
      } finally {
        await encoder.dispose();
      }
    }
  } finally {
    await Deno.remove(cache, { recursive: true });
  }
});

import { assert, assertEquals, assertNotEquals } from "../../_assert.ts";
import { buildChatTokenizer } from "../../../src/engine/generated_models/chat_tokenizer.ts";
import { buildWordPieceTokenizer } from "../../../src/engine/generated_models/wordpiece_tokenizer.ts";
import { setUpTransformers } from "./_fixtures.ts";

async function loadTokenizer(files: { tokenizerJson: unknown; tokenizerConfig: unknown }) {
  const { AutoTokenizer } = setUpTransformers();
  const dir = await Deno.makeTempDir({ prefix: "svc-tok-" });
  try {
    await Deno.writeTextFile(`${dir}/tokenizer.json`, JSON.stringify(files.tokenizerJson));
    await Deno.writeTextFile(`${dir}/tokenizer_config.json`, JSON.stringify(files.tokenizerConfig));
    return await AutoTokenizer.from_pretrained(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("buildChatTokenizer() gives a byte-level BPE with ChatML template and ids below vocab size", async () => {
  const files = await buildChatTokenizer(4096, { modelMaxLength: 2048 });
  assertEquals(files.vocabSize, 4096);
  assertEquals(files.imEndId, files.imStartId + 1);
  const tok = await loadTokenizer(files);
  assertEquals(tok.eos_token_id, files.imEndId);
  assertEquals(tok.pad_token_id, files.endOfTextId);
  assertEquals(tok.model_max_length, 2048);

  const messages = [
    { role: "system", content: "Be brief." },
    { role: "user", content: "What is the weather?" },
    { role: "assistant", content: "Let me check." },
    { role: "tool", content: "sunny, 21C" },
  ];
  const text = tok.apply_chat_template(messages, { tokenize: false, add_generation_prompt: true });
  assertEquals(
    text,
    "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nWhat is the weather?<|im_end|>\n" +
      "<|im_start|>assistant\nLet me check.<|im_end|>\n<|im_start|>user\n<tool_response>\n" +
      "sunny, 21C\n</tool_response><|im_end|>\n<|im_start|>assistant\n",
  );
  const ids = tok.encode(text as string);
  assert(ids.every((id) => id >= 0 && id < files.vocabSize));
  assertEquals(ids[0], files.imStartId);
  assertEquals(tok.decode(ids), text);

  // Longer text, more tokens; different text, different ids.
  const short = tok.encode("The cat sat.");
  const long = tok.encode("The cat sat. ".repeat(20));
  assert(long.length > 10 * short.length);
  assertNotEquals(tok.encode("The dog sat."), short);

  // Multi-byte characters split across byte tokens and come back whole.
  const emoji = tok.encode("🙂");
  assert(emoji.length > 1, `emoji is ${emoji.length} token(s)`);
  assert(tok.decode(emoji.slice(0, 1)).includes("\uFFFD"));
  assertEquals(tok.decode(emoji), "🙂");
  assertEquals(tok.decode(tok.encode("naïve 你好 Ωmega")), "naïve 你好 Ωmega");
});

Deno.test("buildWordPieceTokenizer() gives an uncased WordPiece tokenizer with [CLS] … [SEP]", async () => {
  const files = await buildWordPieceTokenizer(4096, { modelMaxLength: 256 });
  const tok = await loadTokenizer(files);
  const ids = tok.encode("Hello World");
  assertEquals(ids[0], files.clsId);
  assertEquals(ids.at(-1), files.sepId);
  assertEquals(tok.encode("hello world"), ids); // lowercased
  assertEquals(tok.decode(ids, { skip_special_tokens: true }), "hello world");
  assertNotEquals(tok.encode("goodbye world"), ids);
  assert(tok.encode("the weather is nice today ".repeat(10)).length > 40);
  // Rare words split into ## pieces; unknown characters become [UNK].
  const pieces = tok.tokenize("tokenization");
  assert(
    pieces.length > 1 && pieces.slice(1).every((p: string) => p.startsWith("##")),
    `${pieces}`,
  );
  assert(tok.tokenize("🙂").includes("[UNK]"));

  const big = await buildWordPieceTokenizer(30522, { modelMaxLength: 512 });
  const vocab = (big.tokenizerJson.model as { vocab: Record<string, number> }).vocab;
  assertEquals(Object.keys(vocab).length, 30522);
  assert("你" in vocab && "weather" in vocab && "##ing" in vocab);
});

import { assert, assertEquals } from "../_assert.ts";
import { demoFolder } from "../_helpers/demo_engines.ts";
import { loadTokenizer, type Tokenizer } from "../../src/engine/load_model.ts";
import { encodePairs, encodeTexts } from "../../src/engine/tokenization.ts";
import { truncateIds } from "../../src/engine/truncate_ids.ts";

const QUERIES = ["what is it?", "", "Ünïcödé — 東京 🙂 [SEP] [CLS]", "word ".repeat(300)];
const DOCUMENTS = ["a thing", "", "  spaces  and\ttabs\n", "[SEP]", "long document ".repeat(200)];

// The pair as transformers.js' own call encodes it.
function wholePair(tokenizer: Tokenizer, query: string, document: string) {
  const call = tokenizer as unknown as (
    text: string,
    options: { text_pair: string; return_tensor: false; return_token_type_ids: true },
  ) => { input_ids: number[]; token_type_ids?: number[] };
  const out = call(query, {
    text_pair: document,
    return_tensor: false,
    return_token_type_ids: true,
  });
  return { ids: out.input_ids, types: out.token_type_ids ?? out.input_ids.map(() => 0) };
}

async function tokenizers(): Promise<[string, Tokenizer][]> {
  const ids = ["demo/rerank", "demo/embed", "demo/chat"] as const;
  return await Promise.all(
    ids.map(async (id): Promise<[string, Tokenizer]> => [
      id,
      await loadTokenizer(await demoFolder(id), "cpu"),
    ]),
  );
}

Deno.test("encodePairs() encodes each pair as transformers.js does", async () => {
  for (const [id, tokenizer] of await tokenizers()) {
    for (const query of QUERIES) {
      const pairs = encodePairs(tokenizer, query, DOCUMENTS);
      DOCUMENTS.forEach((document, i) => {
        const whole = wholePair(tokenizer, query, document);
        const what = `${id}: ${JSON.stringify(query.slice(0, 20))} + ${i}`;
        assertEquals(pairs[i], { ...whole, length: whole.ids.length }, what);
      });
    }
  }
});

Deno.test("encodePairs() encodes the query once for all the documents", async () => {
  const tokenizer = await loadTokenizer(await demoFolder("demo/rerank"), "cpu");
  const inner = (tokenizer as unknown as { _tokenizer: { encode_text(t: string | null): unknown } })
    ._tokenizer;
  const texts: (string | null)[] = [];
  const encodeText = inner.encode_text.bind(inner);
  inner.encode_text = (text) => (texts.push(text), encodeText(text));
  const documents = Array.from({ length: 50 }, (_, i) => `document ${i}`);
  encodePairs(tokenizer, "the query", documents);
  assertEquals(texts.filter((t) => t === "the query").length, 1);
  assertEquals(texts.length, 51);
});

Deno.test("encodePairs() with maxTokens cuts a long pair as truncation would, keeping its length", async () => {
  for (const [id, tokenizer] of await tokenizers()) {
    for (const query of QUERIES) {
      const whole = DOCUMENTS.map((d) => wholePair(tokenizer, query, d));
      for (const max of [1, 2, 3, 5, 8, 40, 512]) {
        const cut = encodePairs(tokenizer, query, DOCUMENTS, { maxTokens: max });
        whole.forEach((w, i) => {
          const what = `${id}: ${JSON.stringify(query.slice(0, 20))} + ${i}, max ${max}`;
          assertEquals(cut[i].length, w.ids.length, what);
          assert(cut[i].ids.length <= 2 * max + 8, what);
          const edges = { keepFirst: true, keepLast: true };
          assertEquals(truncateIds(cut[i].ids, max, edges), truncateIds(w.ids, max, edges), what);
          assertEquals(
            truncateIds(cut[i].types, max, edges),
            truncateIds(w.types, max, edges),
            what,
          );
        });
      }
    }
  }
});

Deno.test("encodeTexts() with maxTokens keeps what a cut from either end keeps, with the text's length", async () => {
  const texts = [...QUERIES, ...DOCUMENTS, "word ".repeat(5000)];
  for (const [id, tokenizer] of await tokenizers()) {
    const whole = texts.map((t) => tokenizer.encode(t));
    assertEquals(encodeTexts(tokenizer, texts), whole.map((ids) => ({ ids, length: ids.length })));
    for (const max of [1, 2, 5, 40, 512]) {
      const cut = encodeTexts(tokenizer, texts, { maxTokens: max });
      whole.forEach((ids, i) => {
        const what = `${id}: text ${i}, max ${max}`;
        assertEquals(cut[i].length, ids.length, what);
        assertEquals(cut[i].ids.length, Math.min(ids.length, 2 * max), what);
        for (const side of ["left", "right"] as const) {
          for (const keepFirst of [false, true]) {
            for (const keepLast of [false, true]) {
              const edges = { keepFirst, keepLast, side };
              assertEquals(truncateIds(cut[i].ids, max, edges), truncateIds(ids, max, edges), what);
            }
          }
        }
      });
    }
  }
});

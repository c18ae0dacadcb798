// vLLM's extra /v1/embeddings fields over a real socket, with the official `openai` SDK on
// demo/embed (a WordPiece tokenizer that adds [CLS] and [SEP]): `add_special_tokens: false` embeds
// a text's tokens without them (as sending those token ids does), and `priority` / `request_id`
// are accepted.
import OpenAI from "openai";
import { assertEquals, assertNotEquals } from "../_assert.ts";
import { setupLogger } from "../../src/core/logging.ts";
import { demoEngineServer, postJson } from "../_helpers/demo_server.ts";

setupLogger("error");

const MODEL = "demo/embed";

Deno.test("embeddings: add_special_tokens false embeds texts without [CLS]/[SEP]; priority and request_id are accepted", async () => {
  const server = await demoEngineServer(MODEL);
  try {
    const openai = new OpenAI({
      baseURL: `${server.served.url}/v1`,
      apiKey: "unused",
      maxRetries: 0,
    });
    const texts = ["hello world", "pandas live in china"];
    const bare = await Promise.all(
      texts.map(async (prompt) =>
        (await postJson(server, "/tokenize", { model: MODEL, prompt, add_special_tokens: false }))
          .body.tokens as number[]
      ),
    );
    const fromIds = await openai.embeddings.create({
      model: MODEL,
      input: bare,
      encoding_format: "float",
    });
    const plain = await openai.embeddings.create({
      model: MODEL,
      input: texts,
      encoding_format: "float",
    });
    const body = {
      model: MODEL,
      input: texts,
      add_special_tokens: false,
      priority: 0,
      request_id: "req-1",
    };
    // The SDK's default base64, decoded by it, and float over plain fetch: the same vectors.
    const viaSdk = await openai.embeddings.create(body as { model: string; input: string[] });
    const viaFetch = await postJson(server, "/v1/embeddings", {
      ...body,
      encoding_format: "float",
    });
    assertEquals(viaFetch.status, 200);
    for (const i of [0, 1]) {
      assertEquals(viaSdk.data[i].embedding, fromIds.data[i].embedding, `input ${i}`);
      assertEquals(viaFetch.body.data[i].embedding, fromIds.data[i].embedding, `input ${i}`);
      assertNotEquals(viaSdk.data[i].embedding, plain.data[i].embedding, "special tokens left out");
    }
    assertEquals(viaSdk.usage.prompt_tokens, bare[0].length + bare[1].length);
    assertEquals(plain.usage.prompt_tokens, bare[0].length + bare[1].length + 4);
    // add_special_tokens true is the default.
    const same = await postJson(server, "/v1/embeddings", {
      model: MODEL,
      input: texts,
      add_special_tokens: true,
      encoding_format: "float",
    });
    assertEquals(same.body.data[1].embedding, plain.data[1].embedding);
    // An empty text has no tokens without them: a 400 naming it.
    const empty = await postJson(server, "/v1/embeddings", {
      model: MODEL,
      input: ["a", ""],
      add_special_tokens: false,
    });
    assertEquals(empty.status, 400);
    assertEquals([empty.body.error.param, empty.body.error.code], ["input.1", "invalid_value"]);
  } finally {
    await server.stop();
  }
});

Deno.test("embeddings: truncate_prompt_tokens above the model's maximum is a 400 naming the field and the limit", async () => {
  const server = await demoEngineServer(MODEL);
  try {
    const openai = new OpenAI({
      baseURL: `${server.served.url}/v1`,
      apiKey: "unused",
      maxRetries: 0,
    });
    const max = (await postJson(server, "/tokenize", { model: MODEL, prompt: "x" })).body
      .max_model_len as number;
    const long = Array(max + 10).fill("word").join(" ");
    // At the maximum (or -1) a long input is cut to it, as vLLM does.
    for (const cut of [-1, max]) {
      const ok = await openai.embeddings.create(
        { model: MODEL, input: long, truncate_prompt_tokens: cut } as {
          model: string;
          input: string;
        },
      );
      assertEquals(ok.usage.prompt_tokens, max, `truncate_prompt_tokens ${cut}`);
    }
    const over = await postJson(server, "/v1/embeddings", {
      model: MODEL,
      input: long,
      truncate_prompt_tokens: max + 1,
    });
    assertEquals(over.status, 400, JSON.stringify(over.body));
    assertEquals(over.body.error.param, "truncate_prompt_tokens");
    assertEquals(over.body.error.type, "invalid_request_error");
    assertNotEquals(over.body.error.message.indexOf(`maximum of ${max} tokens`), -1);
  } finally {
    await server.stop();
  }
});

Deno.test("embeddings: truncate_prompt_tokens n cuts every input to n tokens, keeping [CLS] and [SEP]; truncation_side left keeps the last", async () => {
  const server = await demoEngineServer(MODEL);
  try {
    const text = "pandas live in the mountains of china and eat bamboo all day long";
    const ids = (await postJson(server, "/tokenize", { model: MODEL, prompt: text })).body
      .tokens as number[];
    const [cls, body, sep] = [ids[0], ids.slice(1, -1), ids[ids.length - 1]];
    const n = 6;
    // What a Hugging Face tokenizer keeps with truncation to n on either side.
    const sides = {
      right: [cls, ...body.slice(0, n - 2), sep],
      left: [cls, ...body.slice(body.length - (n - 2)), sep],
    };
    for (const [side, kept] of Object.entries(sides)) {
      const cut = await postJson(server, "/v1/embeddings", {
        model: MODEL,
        input: [text, "short"],
        truncate_prompt_tokens: n,
        truncation_side: side,
        encoding_format: "float",
      });
      assertEquals(cut.status, 200, JSON.stringify(cut.body));
      const fromIds = await postJson(server, "/v1/embeddings", {
        model: MODEL,
        input: kept,
        encoding_format: "float",
      });
      assertEquals(cut.body.data[0].embedding, fromIds.body.data[0].embedding, side);
      // An input already within n tokens is left whole.
      const short = await postJson(server, "/v1/embeddings", { model: MODEL, input: "short" });
      assertEquals(cut.body.usage.prompt_tokens, n + short.body.usage.prompt_tokens, side);
    }
    const unknownSide = await postJson(server, "/v1/embeddings", {
      model: MODEL,
      input: text,
      truncation_side: "middle",
    });
    assertEquals([unknownSide.status, unknownSide.body.error.param], [400, "truncation_side"]);
  } finally {
    await server.stop();
  }
});

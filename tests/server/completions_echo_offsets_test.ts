// Legacy /v1/completions `echo` with `logprobs` on a model whose tokenizer puts a BOS token before
// every text (as Llama's and Gemma's do), over a real socket with the official `openai` SDK: a copy
// of demo/chat (random weights) whose tokenizer.json adds `<|endoftext|>` before the text. The
// BOS token is listed first (its logprob null), but `text_offset` indexes into the echoed text,
// which is the prompt as sent: the BOS token takes no characters of it. A token-id prompt echoes
// the text of all its ids, the BOS token's included.
import OpenAI from "openai";
import { join } from "node:path";
import { createEngine } from "../../src/engine/create_engine.ts";
import { createEngineApp } from "../../src/server/engine_app.ts";
import type { HttpLogger } from "../../src/http/logger.ts";
import { serveApp } from "../../src/http/serve.ts";
import { demoFolder, TEST_MODEL_CACHE } from "../_helpers/demo_engines.ts";
import { assertEquals } from "../_assert.ts";
import { setupLogger } from "../../src/core/logging.ts";

setupLogger("error");

const QUIET: HttpLogger = { error: () => {}, warn: () => {} };
const MODEL = "test/bos";
const BOS = "<|endoftext|>";
const PROMPT = "Hello there, how are you today";

type Logprobs = NonNullable<OpenAI.Completions.CompletionChoice["logprobs"]>;

/** A copy of demo/chat whose tokenizer puts {@link BOS} before every text. */
async function bosModelFolder(): Promise<string> {
  const source = await demoFolder("demo/chat");
  const dir = await Deno.makeTempDir({ prefix: "svc-bos-" });
  for (const name of ["config.json", "generation_config.json", "tokenizer_config.json"]) {
    await Deno.copyFile(join(source, name), join(dir, name));
  }
  await Deno.mkdir(join(dir, "onnx"));
  for (const name of ["model.onnx", "model_quantized.onnx"]) {
    await Deno.copyFile(join(source, "onnx", name), join(dir, "onnx", name));
  }
  const tokenizer = JSON.parse(await Deno.readTextFile(join(source, "tokenizer.json")));
  const bosId = tokenizer.added_tokens.find((t: { content: string }) => t.content === BOS).id;
  const bos = { SpecialToken: { id: BOS, type_id: 0 } };
  tokenizer.post_processor = {
    type: "Sequence",
    processors: [tokenizer.post_processor, {
      type: "TemplateProcessing",
      single: [bos, { Sequence: { id: "A", type_id: 0 } }],
      pair: [bos, { Sequence: { id: "A", type_id: 0 } }, { Sequence: { id: "B", type_id: 1 } }],
      special_tokens: { [BOS]: { id: BOS, ids: [bosId], tokens: [BOS] } },
    }],
  };
  await Deno.writeTextFile(join(dir, "tokenizer.json"), JSON.stringify(tokenizer));
  return dir;
}

async function withServer(fn: (client: OpenAI, url: string) => Promise<void>): Promise<void> {
  const folder = await bosModelFolder();
  const engine = await createEngine(folder, {
    id: MODEL,
    device: "cpu",
    cacheDir: TEST_MODEL_CACHE,
  });
  const server = serveApp(createEngineApp({ engines: [engine], logger: QUIET }), {
    hostname: "127.0.0.1",
    port: 0,
    logger: QUIET,
  });
  try {
    await fn(
      new OpenAI({ baseURL: `${server.url}/v1`, apiKey: "none", maxRetries: 0 }),
      server.url,
    );
  } finally {
    await server.shutdown();
    await engine.dispose();
    await Deno.remove(folder, { recursive: true });
  }
}

/** Each listed token's text is in `text` at its offset, from `from` on (tokens before: none). */
function checkOffsets(text: string, lp: Logprobs, from: number): void {
  for (let i = from; i < lp.tokens!.length; i++) {
    const [token, at] = [lp.tokens![i], lp.text_offset![i]];
    assertEquals(text.slice(at, at + token.length), token, `token ${i} at ${at}`);
  }
}

/** A streamed choice's text and its logprobs lists, its chunks joined. */
async function joined(stream: AsyncIterable<OpenAI.Completions.Completion>) {
  let text = "";
  const lp: Logprobs = { tokens: [], token_logprobs: [], top_logprobs: [], text_offset: [] };
  for await (const chunk of stream) {
    for (const c of chunk.choices) {
      text += c.text;
      lp.tokens!.push(...c.logprobs?.tokens ?? []);
      lp.text_offset!.push(...c.logprobs?.text_offset ?? []);
    }
  }
  return { text, lp };
}

Deno.test("completions: echo with logprobs gives text offsets into the echoed prompt when the tokenizer adds a BOS token, streamed or not", async () => {
  await withServer(async (client, url) => {
    const res = await fetch(`${url}/tokenize`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: MODEL, prompt: PROMPT }),
    });
    const ids: number[] = (await res.json()).tokens;
    assertEquals(ids.length > 2, true);
    const body = { model: MODEL, prompt: PROMPT, echo: true, logprobs: 1, seed: 5 };
    for (const maxTokens of [0, 3]) {
      const [choice] = (await client.completions.create({ ...body, max_tokens: maxTokens }))
        .choices;
      const lp = choice.logprobs!;
      assertEquals(choice.text.slice(0, PROMPT.length), PROMPT);
      // The BOS token is listed, with no log-probability and no place in the text.
      assertEquals([lp.tokens![0], lp.token_logprobs![0], lp.text_offset![0]], [BOS, null, 0]);
      assertEquals(lp.text_offset![1], 0);
      checkOffsets(choice.text, lp, 1);
      // Generated tokens start after the echoed prompt.
      if (maxTokens > 0) assertEquals(lp.text_offset![ids.length], PROMPT.length);
      const streamed = await joined(
        await client.completions.create({ ...body, max_tokens: maxTokens, stream: true }),
      );
      assertEquals(streamed.text, choice.text);
      assertEquals(streamed.lp.text_offset, lp.text_offset);
    }
    // Token ids (lm-evaluation-harness sends the BOS id with them): their text is all theirs.
    const [byIds] = (await client.completions.create({ ...body, prompt: ids, max_tokens: 0 }))
      .choices;
    assertEquals(byIds.text, BOS + PROMPT);
    assertEquals(byIds.logprobs!.text_offset![1], BOS.length);
    checkOffsets(byIds.text, byIds.logprobs!, 0);
  });
});

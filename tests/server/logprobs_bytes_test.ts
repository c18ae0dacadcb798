// logprobs over HTTP on demo/chat (a byte-level BPE tokenizer cut to 4096 tokens, where CJK
// characters are split into pieces): each token's `bytes` are its own, so the bytes of the tokens
// put together are the UTF-8 of the text even where a token holds part of a character.
import OpenAI from "openai";
import { assert, assertEquals } from "../_assert.ts";
import { setupLogger } from "../../src/core/logging.ts";
import { demoEngineServer } from "../_helpers/demo_server.ts";

setupLogger("error");
const utf8 = new TextEncoder();
const strictUtf8 = new TextDecoder("utf-8", { fatal: true });
const WORD = "漢字のテスト";

function isWholeUtf8(bytes: number[]): boolean {
  try {
    strictUtf8.decode(Uint8Array.from(bytes));
    return true;
  } catch {
    return false;
  }
}

// A legacy token's bytes: `bytes:\xe6\x97` for a piece of a character, else its text's UTF-8.
function legacyTokenBytes(token: string): number[] {
  if (!token.startsWith("bytes:")) return [...utf8.encode(token)];
  return [...token.slice(6).matchAll(/\\x([0-9a-f]{2})/g)].map((m) => parseInt(m[1], 16));
}

Deno.test("logprobs bytes are each token's own bytes, pieces of characters included (chat and completions)", async () => {
  const server = await demoEngineServer("demo/chat");
  try {
    const client = new OpenAI({ baseURL: server.baseUrl, apiKey: "unused", maxRetries: 0 });
    // The schema forces the reply to spell WORD, whose characters the vocabulary has no token for.
    const chat = await client.chat.completions.create({
      model: "demo/chat",
      messages: [{ role: "user", content: "hi" }],
      response_format: {
        type: "json_schema",
        json_schema: { name: "w", schema: { const: WORD }, strict: true },
      },
      logprobs: true,
      top_logprobs: 3,
      temperature: 0,
    });
    const text = chat.choices[0].message.content!;
    assertEquals(JSON.parse(text), WORD);
    const tokens = chat.choices[0].logprobs!.content!;
    assert(tokens.some((t) => !isWholeUtf8(t.bytes!)), "a token holds part of a character");
    assertEquals(tokens.flatMap((t) => t.bytes!), [...utf8.encode(text)]);
    for (const t of tokens) {
      assert(t.top_logprobs.every((alt) => Array.isArray(alt.bytes)), "alternatives have bytes");
    }

    const completion = await client.completions.create({
      model: "demo/chat",
      prompt: WORD,
      max_tokens: 48,
      logprobs: 2,
      seed: 7,
    });
    const tokens2 = completion.choices[0].logprobs!.tokens!;
    assert(tokens2.some((t) => t.startsWith("bytes:")), `a piece of a character: ${tokens2}`);
    // Random weights write byte sequences that are no UTF-8; the text shows them as U+FFFD, as
    // decoding the tokens' bytes together does.
    const bytes = Uint8Array.from(tokens2.flatMap(legacyTokenBytes));
    assertEquals(new TextDecoder().decode(bytes), completion.choices[0].text);
  } finally {
    await server.stop();
  }
});

// vLLM's stream_options.continuous_usage_stats over a real socket with the official `openai` SDK
// on demo/chat: with include_usage, every streamed chunk carries the usage so far (the prompt's
// tokens and the tokens generated until then, every choice added up), and the closing usage chunk
// the totals; without it, chunks carry `usage: null` as before.
import OpenAI from "openai";
import { assert, assertEquals } from "../_assert.ts";
import { setupLogger } from "../../src/core/logging.ts";
import { demoEngineServer } from "../_helpers/demo_server.ts";

setupLogger("error");

const MODEL = "demo/chat";

type Usage = { prompt_tokens: number; completion_tokens: number; total_tokens: number };

// Every chunk has usage; prompt tokens fixed, completion tokens never falling, the last ones the
// totals of the closing chunk (which has no choices).
function checkContinuous(chunks: { usage?: Usage | null; choices: unknown[] }[], what: string) {
  const closing = chunks.at(-1)!;
  assertEquals(closing.choices.length, 0, what);
  const total = closing.usage!;
  assert(total.completion_tokens > 1, what);
  let previous = 0;
  for (const [i, chunk] of chunks.entries()) {
    const usage = chunk.usage;
    assert(usage != null, `${what}: chunk ${i} has no usage`);
    assertEquals(usage.prompt_tokens, total.prompt_tokens, `${what}: chunk ${i}`);
    assertEquals(usage.total_tokens, usage.prompt_tokens + usage.completion_tokens);
    assert(usage.completion_tokens >= previous, `${what}: chunk ${i} counts fewer tokens`);
    previous = usage.completion_tokens;
  }
  assertEquals(chunks.at(-2)!.usage!.completion_tokens, total.completion_tokens, what);
  // Counts grow as the text comes, not only at the end.
  const counts = new Set(chunks.map((c) => c.usage!.completion_tokens));
  assert(counts.size > 2, `${what}: ${[...counts]}`);
}

Deno.test("streams: continuous_usage_stats puts the usage so far in every chunk of chat and completions", async () => {
  const server = await demoEngineServer(MODEL);
  try {
    const openai = new OpenAI({
      baseURL: `${server.served.url}/v1`,
      apiKey: "unused",
      maxRetries: 0,
    });
    const streamOptions = { include_usage: true, continuous_usage_stats: true };
    const chat = await openai.chat.completions.create({
      model: MODEL,
      messages: [{ role: "user", content: "hello there" }],
      max_tokens: 6,
      n: 2,
      seed: 1,
      stream: true,
      stream_options: streamOptions as { include_usage: boolean },
    });
    const chatChunks = [];
    for await (const chunk of chat) chatChunks.push(chunk);
    checkContinuous(chatChunks, "chat");
    const legacy = await openai.completions.create({
      model: MODEL,
      prompt: ["Hello", "Once upon a time"],
      max_tokens: 5,
      seed: 2,
      stream: true,
      stream_options: streamOptions as { include_usage: boolean },
    });
    const legacyChunks = [];
    for await (const chunk of legacy) legacyChunks.push(chunk);
    checkContinuous(legacyChunks, "completions");
    // Without continuous_usage_stats: null until the closing chunk, as before.
    const plain = await openai.completions.create({
      model: MODEL,
      prompt: "Hello",
      max_tokens: 4,
      stream: true,
      stream_options: { include_usage: true },
    });
    const plainChunks = [];
    for await (const chunk of plain) plainChunks.push(chunk);
    assert(plainChunks.slice(0, -1).every((c) => c.usage === null));
    assertEquals(plainChunks.at(-1)!.usage!.completion_tokens, 4);
  } finally {
    await server.stop();
  }
});

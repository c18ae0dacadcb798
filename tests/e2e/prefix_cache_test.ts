// The prefix cache as clients see it: `cached_tokens` in chat, completions and Responses usage
// (the official `openai` SDK over HTTP), and its counters on /metrics.
import OpenAI from "openai";
import { assert, assertEquals } from "../_assert.ts";
import { setupLogger } from "../../src/core/logging.ts";
import { demoEngineServer } from "../_helpers/demo_server.ts";

setupLogger("error");

const SYSTEM = "You are a terse assistant for a library. Answer in one sentence. ".repeat(8);

Deno.test("a repeated prompt prefix is reported as cached_tokens in chat, completions and Responses usage", async () => {
  const server = await demoEngineServer("demo/chat");
  const client = new OpenAI({ baseURL: server.baseUrl, apiKey: "none" });
  try {
    const ask = (question: string) =>
      client.chat.completions.create({
        model: "demo/chat",
        messages: [{ role: "system", content: SYSTEM }, { role: "user", content: question }],
        max_tokens: 4,
        temperature: 0,
      });
    const first = await ask("Where are the maps?");
    assertEquals(first.usage?.prompt_tokens_details?.cached_tokens, 0);
    const second = await ask("When do you close?");
    const cached = second.usage?.prompt_tokens_details?.cached_tokens ?? 0;
    assert(cached >= 64 && cached < second.usage!.prompt_tokens, `cached ${cached}`);

    // Streamed, with include_usage: the last chunk has it too.
    const stream = await client.chat.completions.create({
      model: "demo/chat",
      messages: [{ role: "system", content: SYSTEM }, { role: "user", content: "Any news?" }],
      max_tokens: 4,
      temperature: 0,
      stream: true,
      stream_options: { include_usage: true },
    });
    let streamed = -1;
    for await (const chunk of stream) {
      if (chunk.usage) streamed = chunk.usage.prompt_tokens_details?.cached_tokens ?? -1;
    }
    assert(streamed >= 64, `streamed ${streamed}`);

    const completion = await client.completions.create({
      model: "demo/chat",
      prompt: SYSTEM,
      max_tokens: 2,
      temperature: 0,
    });
    const again = await client.completions.create({
      model: "demo/chat",
      prompt: `${SYSTEM} More.`,
      max_tokens: 2,
      temperature: 0,
    });
    assertEquals(completion.usage?.prompt_tokens_details?.cached_tokens, 0);
    assert((again.usage?.prompt_tokens_details?.cached_tokens ?? 0) >= 64);

    const response = await client.responses.create({
      model: "demo/chat",
      instructions: SYSTEM,
      input: "Where are the maps?",
      max_output_tokens: 4,
      temperature: 0,
    });
    assert(response.usage!.input_tokens_details.cached_tokens >= 64);

    const metrics = await (await fetch(new URL("/metrics", server.baseUrl))).text();
    const value = (name: string) =>
      Number(metrics.match(new RegExp(`^${name}\\{model="demo/chat"\\} (\\S+)$`, "m"))?.[1]);
    // Six prompts: the first chat and the first completion found nothing.
    assertEquals(value("svc_prefix_cache_lookups_total"), 6);
    assertEquals(value("svc_prefix_cache_hits_total"), 4);
    assert(value("svc_prefix_cache_hit_tokens_total") >= 4 * 64);
    assert(value("svc_prefix_cache_bytes") > 0);
    assertEquals(value("svc_prefix_cache_budget_bytes"), 512 * 1024 * 1024);
  } finally {
    await server.stop();
  }
});

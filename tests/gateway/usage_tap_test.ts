// The per-key usage of an answer: a JSON answer's usage (a rerank answer's total_tokens as prompt
// tokens), a stream's usage chunk, or one completion token per text chunk without one.
import { tapUsage } from "../../src/gateway/usage_tap.ts";
import type { AnswerUsage } from "../../src/gateway/api_keys.ts";
import { assertEquals } from "../_assert.ts";

async function usageOf(res: Response): Promise<AnswerUsage> {
  let found: AnswerUsage | undefined;
  await (await tapUsage(res, (u) => (found = u))).arrayBuffer();
  return found!;
}

const json = (body: unknown) => Response.json(body);
const sse = (events: unknown[]) =>
  new Response(events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join(""), {
    headers: { "content-type": "text/event-stream" },
  });
const text = (t: string) => ({ choices: [{ index: 0, delta: { content: t } }] });

Deno.test("tapUsage() reads chat, embedding and rerank usage, and streams with or without it", async () => {
  assertEquals(await usageOf(json({ usage: { prompt_tokens: 3, completion_tokens: 5 } })), {
    promptTokens: 3,
    completionTokens: 5,
  });
  assertEquals(await usageOf(json({ usage: { prompt_tokens: 8, total_tokens: 8 } })), {
    promptTokens: 8,
    completionTokens: 0,
  });
  assertEquals(await usageOf(json({ results: [], usage: { total_tokens: 2060 } })), {
    promptTokens: 2060,
    completionTokens: 0,
  });
  const usage = { prompt_tokens: 4, completion_tokens: 2 };
  assertEquals(await usageOf(sse([text("a"), text("b"), { choices: [], usage }])), {
    promptTokens: 4,
    completionTokens: 2,
  });
  assertEquals(await usageOf(sse([text("a"), text("b"), text("")])), {
    promptTokens: 0,
    completionTokens: 2,
  });
});

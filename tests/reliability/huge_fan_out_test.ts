// Attack: one small request that asks for a huge amount of work (2000 prompts × n 128 = 256k
// generations in 12 KB; on main it held the chat engine for ~4 minutes). It must get a quick 400
// naming the limit, and the engine must keep answering normal chats at once. Also checks that
// `svc llm serve` hands its limit flags to the engines.
import { assert, assertEquals, assertMatch } from "../_assert.ts";
import { startServedStack, timeNormalChat } from "../_helpers/served_stack.ts";

async function completions(gatewayUrl: string, body: unknown): Promise<Response> {
  return await fetch(`${gatewayUrl}/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(60_000),
  });
}

Deno.test("huge n × prompts gets a quick 400 and the engine keeps answering chats within 1 s", async () => {
  const stack = await startServedStack(["--max-request-sequences", "200"]);
  try {
    const url = stack.state.gatewayUrl!;
    await timeNormalChat(url); // warm
    const attacks = [
      // over --max-prompts
      { prompt: Array(2000).fill("hi"), n: 128, param: "prompt", flag: "max-prompts" },
      // within --max-prompts and --max-n, over --max-request-sequences (200, set on serve)
      { prompt: ["hi", "ho"], n: 128, param: "n", flag: "max-request-sequences" },
    ];
    const started = performance.now();
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) => attacks[i % 2]).map(async (a) => {
        const res = await completions(url, {
          model: "demo/chat",
          prompt: a.prompt,
          n: a.n,
          max_tokens: 2,
        });
        return { a, res, body: await res.json() };
      }),
    );
    const attackMs = performance.now() - started;
    for (const { a, res, body } of answers) {
      assertEquals([res.status, body.error.param], [400, a.param], JSON.stringify(body));
      assertMatch(body.error.message, new RegExp(`--${a.flag}\\b`));
    }
    assertMatch(answers[1].body.error.message, /limit of 200\b/);
    // Generous: refusing ten small requests takes milliseconds; on main it took minutes.
    assert(attackMs < 10_000, `the attack was answered in ${attackMs.toFixed(0)} ms`);
    const chatMs = await timeNormalChat(url);
    assert(chatMs < 1000, `a normal chat after the attack took ${chatMs.toFixed(0)} ms`);
  } finally {
    await stack.stop();
  }
});

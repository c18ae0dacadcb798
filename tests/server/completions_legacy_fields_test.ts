// Legacy /v1/completions fields as OpenAI and vLLM answer them, over a real socket with the official
// `openai` SDK on demo/chat (random weights): `top_logprobs` holds the sampled token too (up to
// logprobs + 1 entries), `echo` of token-id prompts writes their text, and vLLM's
// `add_special_tokens`, `priority` and `request_id` are accepted.
import OpenAI from "openai";
import { assert, assertEquals } from "../_assert.ts";
import { setupLogger } from "../../src/core/logging.ts";
import { demoEngineServer } from "../_helpers/demo_server.ts";
import type { EngineServer } from "../../src/server/engine_server.ts";

setupLogger("error");

const MODEL = "demo/chat";

function client(server: EngineServer): OpenAI {
  return new OpenAI({ baseURL: `${server.served.url}/v1`, apiKey: "unused", maxRetries: 0 });
}

async function tokenize(server: EngineServer, prompt: string): Promise<number[]> {
  const res = await fetch(`${server.served.url}/tokenize`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: MODEL, prompt }),
  });
  return (await res.json()).tokens;
}

Deno.test("completions: top_logprobs holds the sampled token beside the alternatives (logprobs 0 included), streamed or not", async () => {
  const server = await demoEngineServer(MODEL);
  try {
    const openai = client(server);
    for (const k of [0, 1, 3]) {
      const body = { model: MODEL, prompt: "Hello there", max_tokens: 6, logprobs: k, seed: 3 };
      const whole = await openai.completions.create(body);
      const lp = whole.choices[0].logprobs!;
      assertEquals(lp.top_logprobs!.length, lp.tokens!.length);
      lp.tokens!.forEach((token, i) => {
        const top = lp.top_logprobs![i];
        assertEquals(top[token], lp.token_logprobs![i], `logprobs ${k}, token ${i}`);
        const size = Object.keys(top).length;
        assert(size >= Math.max(k, 1) && size <= k + 1, `logprobs ${k}: ${JSON.stringify(top)}`);
      });
      // Streamed: each chunk's tokens with their own top_logprobs, the same as the whole answer.
      const streamed: Record<string, number>[] = [];
      for await (const chunk of await openai.completions.create({ ...body, stream: true })) {
        const piece = chunk.choices[0]?.logprobs;
        if (piece?.tokens) {
          assertEquals(piece.top_logprobs!.length, piece.tokens.length);
          streamed.push(...piece.top_logprobs!);
        }
      }
      assertEquals(streamed, lp.top_logprobs);
    }
    // Without logprobs there are none.
    const none = await openai.completions.create({ model: MODEL, prompt: "Hi", max_tokens: 2 });
    assertEquals(none.choices[0].logprobs, null);
  } finally {
    await server.stop();
  }
});

Deno.test("completions: echo of token-id prompts starts each choice with their text, streamed or not", async () => {
  const server = await demoEngineServer(MODEL);
  try {
    const openai = client(server);
    const texts = ["Hello there", "Bye"];
    const ids = await Promise.all(texts.map((t) => tokenize(server, t)));
    const common = { model: MODEL, max_tokens: 3, seed: 5, n: 2 };
    const plain = await openai.completions.create({ ...common, prompt: ids });
    const echoed = await openai.completions.create({ ...common, prompt: ids, echo: true });
    assertEquals(echoed.choices.map((c) => c.index), [0, 1, 2, 3]);
    for (const c of echoed.choices) {
      const prompt = texts[Math.floor(c.index / 2)];
      assertEquals(c.text, prompt + plain.choices[c.index].text, `choice ${c.index}`);
    }
    // One token-id prompt, streamed: the first piece starts with its text.
    const parts: string[] = [];
    const stream = await openai.completions.create({
      ...common,
      n: 1,
      prompt: ids[0],
      echo: true,
      stream: true,
    });
    for await (const chunk of stream) parts.push(...chunk.choices.map((c) => c.text));
    assertEquals(parts.join(""), echoed.choices[0].text);
    // An id outside the vocabulary is a 400 naming the prompt it is in.
    const bad = await fetch(`${server.served.url}/v1/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ ...common, prompt: [ids[0], [99999]], echo: true }),
    });
    assertEquals(bad.status, 400);
    const err = (await bad.json()).error;
    assertEquals([err.param, err.type], ["prompt.1", "invalid_request_error"]);
  } finally {
    await server.stop();
  }
});

Deno.test("completions: vLLM's add_special_tokens, priority and request_id are accepted", async () => {
  const server = await demoEngineServer(MODEL);
  try {
    const openai = client(server);
    const common = { model: MODEL, prompt: ["Hello", "Bye"], max_tokens: 4, seed: 9 };
    const plain = await openai.completions.create(common);
    // demo/chat's tokenizer adds no special tokens, so the answer is the same either way.
    const body = { ...common, add_special_tokens: false, priority: 0, request_id: "req-1" };
    const extra = await openai.completions.create(body as typeof common);
    assertEquals(extra.choices.map((c) => c.text), plain.choices.map((c) => c.text));
    // (cached_tokens differ: the second request finds the first one's prompts in the prefix cache.)
    assertEquals(
      [extra.usage?.prompt_tokens, extra.usage?.completion_tokens],
      [plain.usage?.prompt_tokens, plain.usage?.completion_tokens],
    );
  } finally {
    await server.stop();
  }
});

Deno.test("completions: an id outside the vocabulary in prompt 1 of several token-id prompts is a 400 naming prompt.1 and its position there", async () => {
  const server = await demoEngineServer(MODEL);
  try {
    const post = async (body: unknown) => {
      const res = await fetch(`${server.served.url}/v1/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      return { status: res.status, error: (await res.json()).error };
    };
    const common = { model: MODEL, max_tokens: 2 };
    const second = await post({ ...common, prompt: [[1, 2], [3, 99999]] });
    assertEquals(second.status, 400);
    assertEquals(second.error.param, "prompt.1");
    assert(/99999 at position 1\b/.test(second.error.message), second.error.message);
    // With n choices each prompt is still counted once.
    const first = await post({ ...common, n: 2, prompt: [[99999], [1, 2]] });
    assertEquals([first.status, first.error.param], [400, "prompt.0"]);
    // One token-id prompt alone is `prompt`.
    const alone = await post({ ...common, prompt: [1, 99999] });
    assertEquals([alone.status, alone.error.param], [400, "prompt"]);
  } finally {
    await server.stop();
  }
});

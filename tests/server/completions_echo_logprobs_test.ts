// Legacy /v1/completions `echo` with `logprobs` (the prompt's own log-probabilities, as OpenAI's
// legacy API and vLLM answer them, and as lm-evaluation-harness's local-completions asks for
// them), over a real socket with the official `openai` SDK on demo/chat (random weights): the
// prompt's tokens come first in `choices[].logprobs` (the first with null), then the generated
// ones; `max_tokens: 0` answers the prompt alone. Streamed and not, n > 1, lists, token ids.
import OpenAI from "openai";
import { assert, assertEquals } from "../_assert.ts";
import { setupLogger } from "../../src/core/logging.ts";
import { demoEngineServer } from "../_helpers/demo_server.ts";
import type { EngineServer } from "../../src/server/engine_server.ts";

setupLogger("error");

const MODEL = "demo/chat";
const PROMPT = "Hello there, how are you today";

type Logprobs = NonNullable<OpenAI.Completions.CompletionChoice["logprobs"]>;

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

/** The prompt part of `lp` has the legacy shape: first null, then each token among its top. */
function checkPromptPart(lp: Logprobs, tokens: number, k: number): void {
  assertEquals(lp.token_logprobs![0], null);
  assertEquals(lp.top_logprobs![0], null);
  for (let i = 1; i < tokens; i++) {
    const top = lp.top_logprobs![i];
    const logprob = lp.token_logprobs![i]!;
    assert(logprob <= 0, `token ${i}: ${logprob}`);
    assertEquals(top[lp.tokens![i]], logprob, `token ${i} is among its top_logprobs`);
    const size = Object.keys(top).length;
    assert(size >= Math.max(k, 1) && size <= k + 1, `token ${i}: ${JSON.stringify(top)}`);
  }
}

/** A streamed choice's chunks joined: its text and its logprobs lists. */
async function joinStream(stream: AsyncIterable<OpenAI.Completions.Completion>) {
  const choices = new Map<number, { text: string; lp: Logprobs; finish?: string | null }>();
  for await (const chunk of stream) {
    for (const c of chunk.choices) {
      const got = choices.get(c.index) ??
        { text: "", lp: { tokens: [], token_logprobs: [], top_logprobs: [], text_offset: [] } };
      got.text += c.text;
      if (c.logprobs?.tokens) {
        got.lp.tokens!.push(...c.logprobs.tokens);
        got.lp.token_logprobs!.push(...c.logprobs.token_logprobs!);
        got.lp.top_logprobs!.push(...c.logprobs.top_logprobs!);
        got.lp.text_offset!.push(...c.logprobs.text_offset!);
      }
      if (c.finish_reason) got.finish = c.finish_reason;
      choices.set(c.index, got);
    }
  }
  return choices;
}

Deno.test("completions: echo with max_tokens 0 and logprobs answers the prompt's log-probabilities, streamed or not", async () => {
  const server = await demoEngineServer(MODEL);
  try {
    const openai = client(server);
    const ids = await tokenize(server, PROMPT);
    const body = { model: MODEL, prompt: PROMPT, echo: true, max_tokens: 0, logprobs: 2 };
    const whole = await openai.completions.create({ ...body, temperature: 0 });
    const [choice] = whole.choices;
    assertEquals(choice.text, PROMPT);
    assertEquals(choice.finish_reason, "length");
    assertEquals(choice.logprobs!.tokens!.length, ids.length);
    checkPromptPart(choice.logprobs!, ids.length, 2);
    assertEquals(choice.logprobs!.text_offset![0], 0);
    assertEquals(whole.usage?.prompt_tokens, ids.length);
    assertEquals(whole.usage?.completion_tokens, 0);
    // Streamed: the same, in one piece per choice, then its finish.
    const streamed = await joinStream(
      await openai.completions.create({
        ...body,
        stream: true,
        stream_options: { include_usage: true },
      }),
    );
    assertEquals(streamed.get(0)!.text, PROMPT);
    assertEquals(streamed.get(0)!.lp, choice.logprobs);
    assertEquals(streamed.get(0)!.finish, "length");
    // As lm-evaluation-harness sends them: token-id prompts, a list of them; the same numbers.
    const byIds = await openai.completions.create({ ...body, prompt: [ids, ids.slice(0, 3)] });
    assertEquals(byIds.choices.length, 2);
    assertEquals(byIds.choices[0].logprobs, choice.logprobs);
    assertEquals(
      byIds.choices[1].logprobs!.token_logprobs,
      choice.logprobs!.token_logprobs!.slice(0, 3),
    );
    // echo with max_tokens 0 and no logprobs: the prompt alone.
    const plain = await openai.completions.create({ ...body, logprobs: null });
    assertEquals([plain.choices[0].text, plain.choices[0].logprobs], [PROMPT, null]);
  } finally {
    await server.stop();
  }
});

Deno.test("completions: echo with logprobs puts the prompt's tokens before the generated ones, n > 1 and several prompts, streamed or not", async () => {
  const server = await demoEngineServer(MODEL);
  try {
    const openai = client(server);
    const prompts = [PROMPT, "Bye now"];
    const lengths = await Promise.all(prompts.map(async (p) => (await tokenize(server, p)).length));
    const body = {
      model: MODEL,
      prompt: prompts,
      echo: true,
      logprobs: 1,
      max_tokens: 3,
      n: 2,
      seed: 4,
    };
    const whole = await openai.completions.create(body);
    assertEquals(whole.choices.map((c) => c.index), [0, 1, 2, 3]);
    const alone = await openai.completions.create({ ...body, max_tokens: 0 });
    for (const c of whole.choices) {
      const p = Math.floor(c.index / 2);
      const lp = c.logprobs!;
      assert(c.text.startsWith(prompts[p]), `choice ${c.index}: ${c.text}`);
      checkPromptPart(lp, lengths[p], 1);
      const generated = lp.tokens!.length - lengths[p];
      assert(generated >= 1 && generated <= 3, `choice ${c.index}: ${generated} generated`);
      // The prompt part is the max_tokens 0 answer's; the generated tokens start after the echo.
      assertEquals(
        lp.token_logprobs!.slice(0, lengths[p]),
        alone.choices[c.index].logprobs!.token_logprobs,
      );
      assertEquals(lp.text_offset![lengths[p]], prompts[p].length);
      const tail = lp.tokens!.slice(lengths[p]);
      if (!tail.some((t) => t.startsWith("bytes:"))) {
        assertEquals(tail.join(""), c.text.slice(prompts[p].length));
      }
    }
    // Streamed, the chunks of each choice join to the same answer.
    const streamed = await joinStream(await openai.completions.create({ ...body, stream: true }));
    for (const c of whole.choices) {
      assertEquals(streamed.get(c.index)!.text, c.text, `choice ${c.index}`);
      assertEquals(streamed.get(c.index)!.lp, c.logprobs, `choice ${c.index}`);
    }
  } finally {
    await server.stop();
  }
});

Deno.test("completions: a prompt's echoed log-probabilities agree with those of the tokens the model generated after it", async () => {
  const server = await demoEngineServer(MODEL);
  try {
    const openai = client(server);
    const ids = await tokenize(server, PROMPT);
    const body = { model: MODEL, echo: true, logprobs: 0, temperature: 0, max_tokens: 4 };
    const generated = (await openai.completions.create({ ...body, prompt: ids })).choices[0];
    const all = await tokenize(server, generated.text);
    // Scoring prompt + generated text (it tokenizes back the same) gives the same numbers.
    assertEquals(all.length, generated.logprobs!.tokens!.length);
    const scored = await openai.completions.create({ ...body, prompt: all, max_tokens: 0 });
    const got = scored.choices[0].logprobs!.token_logprobs!;
    generated.logprobs!.token_logprobs!.forEach((want, i) => {
      if (want === null) return assertEquals(got[i], null);
      assert(Math.abs(got[i]! - want) < 0.05, `token ${i}: ${got[i]} vs ${want}`);
    });
    // A decoding stream keeps going while prompts are scored beside it.
    const running = await openai.completions.create({
      model: MODEL,
      prompt: "Once upon a time",
      max_tokens: 60,
      ignore_eos: true,
      stream: true,
    } as OpenAI.Completions.CompletionCreateParamsStreaming);
    const beside = await Promise.all(
      [1, 2, 3].map(() => openai.completions.create({ ...body, prompt: ids, max_tokens: 0 })),
    );
    let tokens = 0;
    for await (const chunk of running) tokens += chunk.choices.length > 0 ? 1 : 0;
    assert(tokens > 0);
    for (const s of beside) assertEquals(s.choices[0].logprobs!.tokens!.length, ids.length);
  } finally {
    await server.stop();
  }
});

Deno.test("completions: echo with logprobs and max_tokens > 0 runs the prompt once: the generation starts from the scored prompt's cache", async () => {
  const server = await demoEngineServer(MODEL);
  try {
    const openai = client(server);
    const prompt = "A prompt this server has never seen";
    const ids = await tokenize(server, prompt);
    const body = { model: MODEL, prompt, echo: true, logprobs: 1, max_tokens: 2, temperature: 0 };
    const whole = await openai.completions.create(body);
    // All but the last prompt token come from the prefix cache the scoring pass filled.
    assertEquals(whole.usage?.prompt_tokens, ids.length);
    assertEquals(whole.usage?.prompt_tokens_details?.cached_tokens, ids.length - 1);
    assertEquals(whole.choices[0].logprobs!.tokens!.length, ids.length + 2);
  } finally {
    await server.stop();
  }
});

Deno.test("completions: a prompt only scored (echo with logprobs, max_tokens 0) leaves the prefix cache to the requests that generate", async () => {
  const server = await demoEngineServer(MODEL);
  try {
    const openai = client(server);
    const prompt = "Another prompt this server has never seen";
    await openai.completions.create({
      model: MODEL,
      prompt,
      echo: true,
      logprobs: 1,
      max_tokens: 0,
    });
    const after = await openai.completions.create({ model: MODEL, prompt, max_tokens: 1 });
    assertEquals(after.usage?.prompt_tokens_details?.cached_tokens, 0);
  } finally {
    await server.stop();
  }
});

Deno.test("completions: max_tokens 0 without echo is a 400 naming max_tokens", async () => {
  const server = await demoEngineServer(MODEL);
  try {
    const res = await fetch(`${server.served.url}/v1/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: MODEL, prompt: PROMPT, max_tokens: 0, logprobs: 1 }),
    });
    assertEquals(res.status, 400);
    assertEquals((await res.json()).error.param, "max_tokens");
  } finally {
    await server.stop();
  }
});

// Legacy /v1/completions `echo` with `max_tokens: 0` and no `logprobs` answers each prompt alone:
// tokenizing and checking it is all the work, so the model must not run. demo/chat (random
// weights) behind a session that counts its runs, over a real socket with the official `openai`
// SDK; asking for `logprobs` as well shows the counter does see the model's runs.
import OpenAI from "openai";
import { assert, assertEquals, assertRejects } from "../_assert.ts";
import { ChatEngine } from "../../src/engine/chat/chat_engine.ts";
import { loadModel } from "../../src/engine/load_model.ts";
import { createEngineApp } from "../../src/server/engine_app.ts";
import type { HttpLogger } from "../../src/http/logger.ts";
import { serveApp } from "../../src/http/serve.ts";
import { demoFolder } from "../_helpers/demo_engines.ts";
import { setupLogger } from "../../src/core/logging.ts";
import { wrappedSession } from "../_helpers/wrapped_session.ts";

setupLogger("error");

const QUIET: HttpLogger = { error: () => {}, warn: () => {} };
const MODEL = "demo/chat";
const PROMPTS = ["Hello there, how are you today", "A second prompt"];

Deno.test("completions: echo with max_tokens 0 and no logprobs checks the prompts without running the model", async () => {
  const model = await loadModel(await demoFolder(MODEL), "chat", { device: "cpu", dtype: "q8" });
  const inner = model.session;
  let runs = 0;
  const session = wrappedSession(inner, {
    run: (feeds) => {
      runs++;
      return inner.run(feeds);
    },
    runScored: (feeds, scoring) => {
      runs++;
      return inner.runScored!(feeds, scoring);
    },
  });
  const engine = await ChatEngine.create({ ...model, session }, { id: MODEL });
  const server = serveApp(createEngineApp({ engines: [engine], logger: QUIET }), {
    hostname: "127.0.0.1",
    port: 0,
    logger: QUIET,
  });
  try {
    const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: "none", maxRetries: 0 });
    const counts = await Promise.all(PROMPTS.map((p) => engine.tokenize({ prompt: p })));
    const promptTokens = counts.reduce((sum, c) => sum + c.tokens.length, 0);
    runs = 0;
    const body = { model: MODEL, prompt: PROMPTS, echo: true, max_tokens: 0, n: 2 };
    const whole = await client.completions.create(body);
    assertEquals(whole.choices.map((c) => [c.index, c.text, c.finish_reason]), [
      [0, PROMPTS[0], "length"],
      [1, PROMPTS[0], "length"],
      [2, PROMPTS[1], "length"],
      [3, PROMPTS[1], "length"],
    ]);
    assertEquals(whole.usage?.prompt_tokens, promptTokens);
    assertEquals(whole.usage?.completion_tokens, 0);
    let streamed = "";
    const stream = await client.completions.create({
      ...body,
      stream: true,
      stream_options: { include_usage: true },
    });
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      streamed += chunk.choices.map((c) => c.text).join("");
      usage = chunk.usage ?? usage;
    }
    assertEquals(streamed, `${PROMPTS[0]}${PROMPTS[0]}${PROMPTS[1]}${PROMPTS[1]}`);
    assertEquals(usage?.prompt_tokens, promptTokens);
    // Still checked as a generation's prompt: an id outside the vocabulary is a 400 naming it.
    const err = await assertRejects(
      () => client.completions.create({ ...body, prompt: [[1, 2], [1 << 30]] }),
      OpenAI.BadRequestError,
    );
    assertEquals(err.param, "prompt.1");
    assertEquals(runs, 0);

    await client.completions.create({ ...body, logprobs: 1 });
    assert(runs > 0, "scoring the prompts runs the model");
  } finally {
    await server.shutdown();
    await engine.dispose();
  }
});

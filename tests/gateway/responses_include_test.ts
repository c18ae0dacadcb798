// `include` on /v1/responses: the values about items this server never makes (encrypted
// reasoning, built-in tools' results, images) are accepted and change nothing; log-probabilities
// ask the backend for them; an unknown value is a 400 naming it. The AI SDK's provider sends
// `include: ["reasoning.encrypted_content"]` for a reasoning model with `store: false` (as
// OpenAI's Codex CLI always does): that request was refused with a 400 before.
import OpenAI from "openai";
import { createOpenAI } from "@ai-sdk/openai";
import { generateText } from "ai";
import { assert, assertEquals, assertMatch } from "../_assert.ts";
import { setupLogger } from "../../src/core/logging.ts";
import { startGateway } from "../../src/gateway/gateway_server.ts";
import type { HttpLogger } from "../../src/http/logger.ts";
import { FakeEngine } from "./_fake_backend.ts";

setupLogger("error");
const QUIET: HttpLogger = { error: () => {}, warn: () => {} };
// A name the AI SDK takes for a reasoning model (it adds the include only for those).
const MODEL = "gpt-5-mini";

Deno.test("responses: include values that ask for nothing we lack are accepted, logprobs are asked of the backend, unknown ones are a 400", async (t) => {
  const engine = new FakeEngine("e1");
  const gw = await startGateway({
    logger: QUIET,
    backends: [{ id: "e1", baseUrl: engine.serve(), kind: "llm", models: [MODEL] }],
  });
  try {
    await t.step(
      "AI SDK, reasoning model, store: false: it sends the include, and is answered",
      async () => {
        const bodies: Record<string, unknown>[] = [];
        const provider = createOpenAI({
          baseURL: gw.baseUrl,
          apiKey: "unused",
          fetch: (input, init) => {
            if (typeof init?.body === "string") bodies.push(JSON.parse(init.body));
            return fetch(input, init);
          },
        });
        const { text } = await generateText({
          model: provider(MODEL),
          prompt: "hi",
          maxRetries: 0,
          providerOptions: { openai: { store: false } },
        });
        assertEquals(text, "e1-0e1-1e1-2"); // the fake's stream: Responses stream their chat request
        assertEquals(bodies[0].include, ["reasoning.encrypted_content"]);
      },
    );

    const client = new OpenAI({ baseURL: gw.baseUrl, apiKey: "unused", maxRetries: 0 });
    await t.step("openai SDK: every include value about items we never make", async () => {
      const response = await client.responses.create({
        model: MODEL,
        input: "hi",
        store: false,
        include: [
          "reasoning.encrypted_content",
          "file_search_call.results",
          "web_search_call.action.sources",
          "message.input_image.image_url",
          "computer_call_output.output.image_url",
          "code_interpreter_call.outputs",
        ],
      });
      assertEquals([response.status, response.output_text], ["completed", "e1-0e1-1e1-2"]);
    });

    await t.step("log-probabilities: the backend's chat request asks for them", async () => {
      await client.responses.create({
        model: MODEL,
        input: "hi",
        store: false,
        include: ["message.output_text.logprobs"],
      });
      const body = engine.seen.at(-1)!.body;
      assertEquals([body.logprobs, body.top_logprobs, body.stream], [true, 0, true]);
    });

    await t.step("an unknown value: 400 naming it, and the backend never sees it", async () => {
      let error: unknown;
      try {
        await client.responses.create({
          model: MODEL,
          input: "hi",
          include: [
            "reasoning.encrypted_content",
            "reasoning.everything",
          ] as unknown as OpenAI.Responses.ResponseIncludable[],
        });
      } catch (err) {
        error = err;
      }
      assert(error instanceof OpenAI.BadRequestError, String(error));
      assertEquals([error.code, error.param], ["invalid_value", "include.1"]);
      assertMatch(error.message, /include/);
      assertEquals(engine.count(), 3);
    });
  } finally {
    await gw.stop();
    await engine.close();
  }
});

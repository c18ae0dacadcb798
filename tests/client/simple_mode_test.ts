// Simple mode against real engine servers on the demo models (random weights) on free ports,
// found by detection: chat, generate, streams (and their abort), embeddings, keys, status.
import { assert, assertEquals, assertRejects } from "../_assert.ts";
import { AuthenticationError, CancelledError, NotFoundError } from "../../src/core/errors.ts";
import { UnifiedInferenceClient } from "../../src/client/unified_inference_client.ts";
import type { EngineServer } from "../../src/server/engine_server.ts";
import { closedPort } from "./_stand_in.ts";
import { demoEngineServer } from "../_helpers/demo_server.ts";

const KEY = "engine-secret";
const LONG = { temperature: 0, maxTokens: 300 };
const FOREVER = [{ role: "user" as const, content: "go on forever" }];

type Stats = { running: number; steps: number };
const stats = (server: EngineServer) => server.engine.stats() as Stats;

async function idle(server: EngineServer): Promise<void> {
  const deadline = Date.now() + 3000;
  while (stats(server).running > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 10));
  }
}

Deno.test("simple mode: detection finds demo engines and every call works", async (t) => {
  const [chat, emb] = await Promise.all([
    demoEngineServer("demo/chat", KEY),
    demoEngineServer("demo/embed", KEY),
  ]);
  try {
    const client = await UnifiedInferenceClient.create({
      env: { ENGINE_API_KEY: KEY },
      envFile: null,
      gatewayPort: closedPort(),
      llmPorts: [closedPort(), chat.served.addr.port],
      embeddingPort: emb.served.addr.port,
      defaultSampling: { temperature: 0, maxTokens: 8 },
    });

    await t.step("the endpoints and models are detected", () => {
      assertEquals(client.mode, "simple");
      assertEquals(client.endpoints.chat.baseUrl, chat.baseUrl);
      assertEquals(client.endpoints.chat.model, "demo/chat");
      assertEquals(client.endpoints.embedding.baseUrl, emb.baseUrl);
      assertEquals(client.endpoints.embedding.model, "demo/embed");
    });

    await t.step("chat() returns the OpenAI shape plus text; defaults apply", async () => {
      const answer = await client.chat([
        { role: "system", content: "Be brief." },
        { role: "user", content: "Hello" },
      ]);
      assertEquals(answer.object, "chat.completion");
      assertEquals(answer.model, "demo/chat");
      assertEquals(answer.text, answer.choices[0].message.content);
      assert(answer.usage.completion_tokens <= 8, "defaultSampling.maxTokens applied");
      // Greedy: the same prompt gives the same text.
      const again = await client.generate("Hello", { system: "Be brief." });
      assertEquals(again, answer.text);
    });

    await t.step("chatStream() yields deltas whose text equals the whole answer", async () => {
      const whole = await client.chat("Tell me", { maxTokens: 12 });
      let text = "";
      let finish: string | null = null;
      let count = 0;
      for await (const delta of client.chatStream("Tell me", { maxTokens: 12 })) {
        text += delta.content;
        finish = delta.finishReason ?? finish;
        count++;
        assertEquals(delta.chunk.object, "chat.completion.chunk");
      }
      assertEquals(text, whole.text);
      assertEquals(finish, whole.choices[0].finish_reason);
      assert(count >= 2);
    });

    await t.step("aborting a stream raises CancelledError and stops the generation", async () => {
      const controller = new AbortController();
      const before = stats(chat).steps;
      let seen = 0;
      const err = await assertRejects(async () => {
        for await (const _ of client.chatStream(FOREVER, { ...LONG, signal: controller.signal })) {
          if (++seen === 2) controller.abort();
        }
      }, CancelledError);
      assert(err.message.includes("/chat/completions"));
      await idle(chat);
      assertEquals(stats(chat).running, 0);
      assert(stats(chat).steps - before < 60, "decoding stopped soon after the abort");
    });

    await t.step("breaking out of a stream also stops the generation", async () => {
      const before = stats(chat).steps;
      for await (const _ of client.chatStream(FOREVER, LONG)) break;
      await idle(chat);
      assertEquals(stats(chat).running, 0);
      assert(stats(chat).steps - before < 60);
    });

    await t.step("embed() takes a list or one string and returns vectors", async () => {
      const vectors = await client.embed(["a cat", "a dog", "a cat"]);
      assertEquals(vectors.length, 3);
      assert(vectors[0].length > 0 && vectors[0].every((x) => typeof x === "number"));
      assertEquals(vectors[0], vectors[2]);
      const [one] = await client.embed("a cat");
      assertEquals(one, vectors[0]);
    });

    await t.step(
      "a wrong model is a NotFoundError; a missing key an AuthenticationError",
      async () => {
        await assertRejects(() => client.chat("hi", { model: "nope" }), NotFoundError);
        const keyless = await UnifiedInferenceClient.create({
          env: {},
          envFile: null,
          llmBaseUrl: chat.baseUrl,
          llmModel: "demo/chat",
          embeddingBaseUrl: emb.baseUrl,
          embeddingModel: "demo/embed",
        });
        const err = await assertRejects(() => keyless.embed("x"), AuthenticationError);
        assertEquals(err.status, 401);
      },
    );

    await t.step("status() sees both engines", async () => {
      const status = await client.status();
      assertEquals(status.chat.available, true);
      assertEquals(status.chat.models, ["demo/chat"]);
      assertEquals(status.embedding.models, ["demo/embed"]);
      assertEquals(status.chat.randomWeights, ["demo/chat"], "a demo model says so");
      assertEquals(status.embedding.randomWeights, ["demo/embed"]);
      assertEquals(status.chat.hasKey, true);
      assertEquals(status.controlPlaneUrl, null);
    });
  } finally {
    await Promise.all([chat.stop(), emb.stop()]);
  }
});

// The Vercel AI SDK's own OpenAI provider (`@ai-sdk/openai`), whose default model calls the
// Responses API, against the engine server and through the gateway (demo model, random weights).
import { createOpenAI } from "@ai-sdk/openai";
import { generateText, isStepCount, Output, streamText, tool } from "ai";
import { assert, assertEquals, assertMatch } from "../_assert.ts";
import { setupLogger } from "../../src/core/logging.ts";
import { structuredStack } from "./_structured_stack.ts";
import { Person, Weather } from "./_zod_schemas.ts";

setupLogger("error");

const MODEL = "demo/chat";
const ASK = "What is the weather in Paris?";
// One call at most: with random weights the model may open call after call until the limit.
const ONE_CALL = { openai: { parallelToolCalls: false } };

Deno.test("AI SDK openai provider (Responses API) against the engine and through the gateway", async (t) => {
  const stack = await structuredStack();
  try {
    for (const { name, baseUrl } of stack.targets) {
      // Every request the provider makes, to show it is the Responses API it talks to.
      const paths: string[] = [];
      const bodies: { input: { type?: string }[] }[] = [];
      const provider = createOpenAI({
        baseURL: baseUrl,
        apiKey: "unused",
        fetch: (input, init) => {
          paths.push(`${init?.method ?? "GET"} ${new URL(String(input)).pathname}`);
          if (typeof init?.body === "string") bodies.push(JSON.parse(init.body));
          return fetch(input, init);
        },
      });
      const common = { model: provider(MODEL), maxRetries: 0 };

      await t.step(`${name}: generateText`, async () => {
        paths.length = 0;
        const { text, usage, finishReason, providerMetadata } = await generateText({
          ...common,
          system: "Be brief.",
          prompt: "Say hello.",
          maxOutputTokens: 10,
        });
        assertEquals(paths, ["POST /v1/responses"]);
        assert(text.length > 0);
        assert(usage.inputTokens! > 0);
        assert(usage.outputTokens! > 0 && usage.outputTokens! <= 10);
        assert(["stop", "length"].includes(finishReason), finishReason);
        assertMatch(String(providerMetadata?.openai?.responseId), /^resp_/);
      });

      await t.step(`${name}: streamText: the text is the streamed pieces`, async () => {
        // Greedy: sampled, the demo model may choose its end token before the limit.
        const result = streamText({
          ...common,
          prompt: "Tell a story.",
          maxOutputTokens: 12,
          temperature: 0,
        });
        let streamed = "";
        let pieces = 0;
        for await (const piece of result.textStream) {
          streamed += piece;
          pieces++;
        }
        assertEquals(await result.text, streamed);
        assertEquals((bodies.at(-1) as { temperature?: number }).temperature, 0, "sent greedy");
        assert(pieces > 1, `only ${pieces} pieces`);
        assertEquals((await result.usage).outputTokens, 12);
        assertEquals(await result.finishReason, "length");
      });

      await t.step(`${name}: a structured output (text.format json_schema)`, async () => {
        const { output } = await generateText({
          ...common,
          output: Output.object({ schema: Person, name: "person" }),
          prompt: "Describe someone.",
          maxOutputTokens: 400,
        });
        assertEquals(Person.parse(output), output);
      });

      await t.step(`${name}: a tool round trip over two steps`, async () => {
        paths.length = 0;
        const ran: unknown[] = [];
        const result = await generateText({
          ...common,
          tools: {
            get_weather: tool({
              description: "Weather now",
              inputSchema: Weather,
              execute: (input) => {
                ran.push(input);
                return Promise.resolve({ degrees: 21, sky: "sunny" });
              },
            }),
          },
          // Step 1 must call the tool; step 2 answers with its result (the SDK sends the call
          // and its output back as function_call and function_call_output items).
          prepareStep: ({ stepNumber }) => ({ toolChoice: stepNumber === 0 ? "required" : "none" }),
          stopWhen: isStepCount(2),
          providerOptions: ONE_CALL,
          prompt: ASK,
          maxOutputTokens: 200,
        });
        assertEquals(paths, ["POST /v1/responses", "POST /v1/responses"]);
        assertEquals(result.steps.length, 2);
        assertEquals(ran.length, 1);
        assertEquals(Weather.parse(ran[0]), ran[0]);
        assertEquals(result.steps[0].finishReason, "tool-calls");
        assertEquals(result.steps[0].toolResults.length, 1);
        // The second turn's prompt holds the first turn, the call and its result.
        const [first, second] = result.steps.map((s) => s.usage.inputTokens!);
        assert(second > first + 10, `${first} then ${second} input tokens`);
        assertEquals(result.steps[1].toolCalls.length, 0);
      });

      await t.step(`${name}: a second turn refers to the first's stored message`, async () => {
        const first = await generateText({
          ...common,
          prompt: "My name is Ada.",
          maxOutputTokens: 6,
        });
        bodies.length = 0;
        const second = await generateText({
          ...common,
          messages: [
            { role: "user", content: "My name is Ada." },
            ...first.response.messages,
            { role: "user", content: "What is my name?" },
          ],
          maxOutputTokens: 1,
        });
        // The SDK sends the stored assistant message as an item_reference, which we resolve.
        assertEquals(bodies[0].input.map((i) => i.type ?? "message"), [
          "message",
          "item_reference",
          "message",
        ]);
        const alone = await generateText({
          ...common,
          prompt: "What is my name?",
          maxOutputTokens: 1,
        });
        const carried = second.usage.inputTokens! - alone.usage.inputTokens!;
        assert(carried >= first.usage.outputTokens! + 4, `${carried} tokens carried`);
      });

      await t.step(`${name}: streamText with a tool`, async () => {
        const result = streamText({
          ...common,
          tools: { get_weather: tool({ description: "Weather now", inputSchema: Weather }) },
          toolChoice: "required",
          providerOptions: ONE_CALL,
          prompt: ASK,
          maxOutputTokens: 200,
        });
        let inputDeltas = 0;
        for await (const part of result.fullStream) {
          if (part.type === "tool-input-delta") inputDeltas++;
        }
        const calls = await result.toolCalls;
        assertEquals(calls.length, 1);
        assertEquals(calls[0].toolName, "get_weather");
        assertEquals(Weather.parse(calls[0].input), calls[0].input);
        assertEquals(await result.finishReason, "tool-calls");
        assert(inputDeltas > 1, `only ${inputDeltas} argument fragments`);
      });
    }
  } finally {
    await stack.stop();
  }
});

// Tool calling and structured outputs with the Vercel AI SDK (`ai` + `@ai-sdk/openai-compatible`),
// against the engine server and through the gateway (demo model, random weights: only the
// constraint makes the output valid, so these fail where the server ignores the fields).
//
// AI SDK 5 and later dropped generateObject's `mode` option: its JSON mode is now the provider's
// `response_format` (json_schema when the provider says it supports structured outputs), and its
// old tool mode (one tool, forced by name, its input the object) is written with generateText.
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { generateObject, generateText, streamObject, streamText, tool } from "ai";
import type { z } from "zod";
import { assert, assertEquals } from "../_assert.ts";
import { setupLogger } from "../../src/core/logging.ts";
import { structuredStack } from "./_structured_stack.ts";
import { Person, Reading, Time, Weather } from "./_zod_schemas.ts";

setupLogger("error");

const MODEL = "demo/chat";
const ASK = "What is the weather in Paris?";
// No `execute`: the SDK returns the calls instead of running them, and stops after one step.
const TOOLS = {
  get_weather: tool({ description: "Weather now", inputSchema: Weather }),
  get_time: tool({ description: "Time now", inputSchema: Time }),
};
const ARGS: Record<string, z.ZodType> = { get_weather: Weather, get_time: Time };
// The SDK has no setting for it, and lets a provider's options through into the request: one
// call at most, because with random weights the model may open call after call until max_tokens.
const ONE_CALL = { svc: { parallel_tool_calls: false } };

/** Checks the SDK's tool calls: known names, arguments valid for their tool. */
function checkCalls(calls: readonly { toolName: string; input: unknown }[]): void {
  assert(calls.length >= 1, "no tool calls");
  for (const call of calls) {
    assert(call.toolName in ARGS, call.toolName);
    const { error } = ARGS[call.toolName].safeParse(call.input);
    assertEquals(error, undefined, JSON.stringify(call.input));
  }
}

Deno.test("AI SDK: generateObject, streamObject and tools against the engine and through the gateway", async (t) => {
  const stack = await structuredStack();
  try {
    for (const { name, baseUrl } of stack.targets) {
      const provider = createOpenAICompatible({
        name: "svc",
        baseURL: baseUrl,
        apiKey: "unused",
        supportsStructuredOutputs: true,
      });
      const model = provider.chatModel(MODEL);
      const common = { model, maxRetries: 0, maxOutputTokens: 300 };

      await t.step(`${name}: generateObject (JSON mode: json_schema response format)`, async () => {
        const { object, finishReason } = await generateObject({
          ...common,
          schema: Person,
          schemaName: "person",
          prompt: "Describe someone.",
          seed: 11,
        });
        assertEquals(Person.parse(object), object);
        assertEquals(finishReason, "stop");
      });

      await t.step(`${name}: generateObject with a tuple, a record and multipleOf`, async () => {
        const { object, finishReason } = await generateObject({
          ...common,
          schema: Reading,
          prompt: "Take a reading.",
          seed: 5,
        });
        assertEquals(Reading.parse(object), object);
        assertEquals(finishReason, "stop");
      });

      await t.step(`${name}: generateObject with an enum output`, async () => {
        const { object } = await generateObject({
          ...common,
          output: "enum",
          enum: ["red", "green", "blue"],
          prompt: "Pick a colour.",
          seed: 2,
        });
        assert(["red", "green", "blue"].includes(object), object);
      });

      await t.step(`${name}: tool mode (one tool forced by name) gives the object`, async () => {
        const { toolCalls, finishReason } = await generateText({
          ...common,
          tools: { person: tool({ description: "Record a person", inputSchema: Person }) },
          toolChoice: { type: "tool", toolName: "person" },
          prompt: "Describe someone.",
          seed: 12,
        });
        assertEquals(toolCalls.length, 1);
        assertEquals(Person.parse(toolCalls[0].input), toolCalls[0].input);
        assertEquals(finishReason, "tool-calls");
      });

      await t.step(`${name}: streamObject streams partial objects, then the whole`, async () => {
        const result = streamObject({
          ...common,
          schema: Person,
          schemaName: "person",
          prompt: "Describe someone.",
          seed: 13,
        });
        let partials = 0;
        for await (const _partial of result.partialObjectStream) partials++;
        const object = await result.object;
        assertEquals(Person.parse(object), object);
        assert(partials > 1, `only ${partials} partial objects`);
      });

      await t.step(`${name}: tools with toolChoice required`, async () => {
        const { toolCalls, finishReason } = await generateText({
          ...common,
          tools: TOOLS,
          toolChoice: "required",
          providerOptions: ONE_CALL,
          prompt: ASK,
          seed: 3,
        });
        checkCalls(toolCalls);
        assertEquals(toolCalls.length, 1);
        assertEquals(finishReason, "tool-calls");
      });

      await t.step(`${name}: streamed tools with toolChoice required`, async () => {
        const result = streamText({
          ...common,
          tools: TOOLS,
          toolChoice: "required",
          providerOptions: ONE_CALL,
          prompt: ASK,
          seed: 5,
        });
        let inputDeltas = 0;
        for await (const part of result.fullStream) {
          if (part.type === "tool-input-delta") inputDeltas++;
        }
        const calls = await result.toolCalls;
        checkCalls(calls);
        assertEquals(calls.length, 1);
        assertEquals(await result.finishReason, "tool-calls");
        assert(inputDeltas > 1, `only ${inputDeltas} argument fragments`);
      });
    }
  } finally {
    await stack.stop();
  }
});

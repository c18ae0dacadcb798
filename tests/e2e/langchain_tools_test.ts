// Tool calling and structured outputs with LangChain.js (`@langchain/openai`'s ChatOpenAI),
// against the engine server and through the gateway (demo model, random weights: only the
// constraint makes the output valid, so these fail where the server ignores the fields).
import { ChatOpenAI } from "@langchain/openai";
import {
  AIMessage,
  type AIMessageChunk,
  HumanMessage,
  ToolMessage,
} from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import type { z } from "zod";
import { assert, assertEquals, assertMatch } from "../_assert.ts";
import { setupLogger } from "../../src/core/logging.ts";
import { structuredStack } from "./_structured_stack.ts";
import { Person, Time, Weather } from "./_zod_schemas.ts";

setupLogger("error");

const MODEL = "demo/chat";
const ASK = [new HumanMessage("What is the weather in Paris?")];
// The tools' bodies never run: the tests check what the model asks for.
const getWeather = tool(() => "sunny", {
  name: "get_weather",
  description: "Weather now",
  schema: Weather,
});
const getTime = tool(() => "noon", { name: "get_time", description: "Time now", schema: Time });
const ARGS: Record<string, z.ZodType> = { get_weather: Weather, get_time: Time };

function chatModel(baseUrl: string, seed: number, maxTokens = 300): ChatOpenAI {
  return new ChatOpenAI({
    model: MODEL,
    apiKey: "unused",
    configuration: { baseURL: baseUrl },
    maxRetries: 0,
    maxTokens,
    modelKwargs: { seed },
  });
}

/** The finish reason LangChain keeps in a message's response metadata. */
function finishReason(message: { response_metadata: unknown }): unknown {
  return (message.response_metadata as { finish_reason?: string }).finish_reason;
}

/** Checks LangChain's parsed tool calls: known names, ids, arguments valid for their tool. */
function checkCalls(message: AIMessage | AIMessageChunk, names: string[]): void {
  const calls = message.tool_calls ?? [];
  assert(calls.length >= 1, `no tool calls in ${JSON.stringify(message.content)}`);
  for (const call of calls) {
    assert(names.includes(call.name), call.name);
    assertMatch(call.id!, /^call_\w+$/);
    assertEquals(ARGS[call.name].safeParse(call.args).error, undefined, JSON.stringify(call.args));
  }
}

Deno.test("LangChain.js: structured output and tools against the engine and through the gateway", async (t) => {
  const stack = await structuredStack();
  try {
    for (const { name, baseUrl } of stack.targets) {
      await t.step(`${name}: withStructuredOutput, json_schema method`, async () => {
        const model = chatModel(baseUrl, 11).withStructuredOutput(Person, {
          name: "person",
          method: "jsonSchema",
          strict: true,
          includeRaw: true,
        });
        const { raw, parsed } = await model.invoke("Describe someone.");
        assertEquals(Person.parse(parsed), parsed);
        assertEquals(JSON.parse(raw.content as string), parsed);
        assertEquals(finishReason(raw), "stop");
      });

      await t.step(`${name}: withStructuredOutput, function-calling method`, async () => {
        const model = chatModel(baseUrl, 12).withStructuredOutput(Person, {
          name: "person",
          method: "functionCalling",
          includeRaw: true,
        });
        const { raw, parsed } = await model.invoke("Describe someone.");
        assertEquals(Person.parse(parsed), parsed);
        const calls = (raw as AIMessage).tool_calls!;
        assertEquals(calls.map((c) => c.name), ["person"]);
        assertEquals(finishReason(raw), "tool_calls");
      });

      await t.step(`${name}: bindTools with tool_choice required`, async () => {
        const model = chatModel(baseUrl, 3).bindTools([getWeather, getTime], {
          tool_choice: "required",
          parallel_tool_calls: false,
        });
        const message = await model.invoke(ASK);
        checkCalls(message, ["get_weather", "get_time"]);
        assertEquals(message.tool_calls!.length, 1);
        assertEquals(finishReason(message), "tool_calls");
      });

      await t.step(`${name}: bindTools streamed, chunks concatenated into the call`, async () => {
        const model = chatModel(baseUrl, 5).bindTools([getWeather, getTime], {
          tool_choice: "get_weather",
        });
        let whole: AIMessageChunk | undefined;
        let chunks = 0;
        for await (const chunk of await model.stream(ASK)) {
          whole = whole === undefined ? chunk : whole.concat(chunk);
          chunks++;
        }
        assert(chunks > 2, `only ${chunks} chunks`);
        checkCalls(whole!, ["get_weather"]);
        assertEquals(whole!.tool_calls!.length, 1);
      });

      await t.step(`${name}: a conversation with a tool call and its result renders`, async () => {
        const model = chatModel(baseUrl, 6, 5).bindTools([getWeather, getTime]);
        const call = {
          id: "call_1",
          name: "get_weather",
          args: { city: "Paris", unit: "celsius" },
        };
        const answer = await model.invoke([
          ...ASK,
          new AIMessage({ content: "", tool_calls: [call] }),
          new ToolMessage({ tool_call_id: "call_1", content: "21 degrees, sunny" }),
        ]);
        assert(answer.usage_metadata!.input_tokens > 100);
      });
    }
  } finally {
    await stack.stop();
  }
});

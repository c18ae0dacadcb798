// Tool calling and structured outputs with the official `openai` SDK, against the engine server
// and through the gateway (demo model, random weights: the constraint makes the output valid).
import OpenAI from "openai";
import { assert, assertEquals, assertMatch, assertNotEquals, assertRejects } from "../_assert.ts";
import { setupLogger } from "../../src/core/logging.ts";
import { validatorFor } from "../engine/constrained/_validator.ts";
import {
  PERSON_SCHEMA,
  structuredStack,
  TIME_PARAMETERS,
  WEATHER_PARAMETERS,
} from "./_structured_stack.ts";

setupLogger("error");

const MODEL = "demo/chat";
const TOOLS: OpenAI.Chat.Completions.ChatCompletionTool[] = [
  {
    type: "function",
    function: { name: "get_weather", description: "Weather now", parameters: WEATHER_PARAMETERS },
  },
  { type: "function", function: { name: "get_time", parameters: TIME_PARAMETERS } },
];
const PARAMETERS: Record<string, unknown> = {
  get_weather: WEATHER_PARAMETERS,
  get_time: TIME_PARAMETERS,
};
const ASK = [{ role: "user" as const, content: "What is the weather in Paris?" }];

function checkCall(call: OpenAI.Chat.Completions.ChatCompletionMessageToolCall): void {
  assertEquals(call.type, "function");
  assertMatch(call.id, /^call_\w+$/);
  const fn = (call as { function: { name: string; arguments: string } }).function;
  const validate = validatorFor(PARAMETERS[fn.name]);
  assertEquals(validate(JSON.parse(fn.arguments)), null, fn.arguments);
}

Deno.test("openai SDK: tools and response formats against the engine and through the gateway", async (t) => {
  const stack = await structuredStack();
  try {
    for (const { name, baseUrl } of stack.targets) {
      const client = new OpenAI({ baseURL: baseUrl, apiKey: "unused", maxRetries: 0 });
      const create = (
        body: Omit<OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming, "model">,
      ) => client.chat.completions.create({ model: MODEL, ...body });

      await t.step(`${name}: json_schema output validates against the schema`, async () => {
        const completion = await create({
          messages: [{ role: "user", content: "Describe someone." }],
          response_format: {
            type: "json_schema",
            json_schema: { name: "person", schema: PERSON_SCHEMA, strict: true },
          },
          n: 2,
          seed: 11,
          logprobs: true,
          max_tokens: 400,
        });
        const validate = validatorFor(PERSON_SCHEMA);
        for (const choice of completion.choices) {
          assertEquals(choice.finish_reason, "stop");
          const content = choice.message.content!;
          assertEquals(validate(JSON.parse(content)), null, content);
          assertEquals(choice.logprobs!.content!.map((lp) => lp.token).join(""), content);
        }
        assertNotEquals(
          completion.choices[0].message.content,
          completion.choices[1].message.content,
        );
      });

      await t.step(
        `${name}: json_object output is a JSON object; a cut one ends with length`,
        async () => {
          // Random weights seldom close a free string soon: seed 38 happens to finish quickly.
          const body = {
            messages: [{ role: "user" as const, content: "Answer in JSON." }],
            response_format: { type: "json_object" as const },
            seed: 38,
            max_tokens: 300,
          };
          const done = await create(body);
          assertEquals(done.choices[0].finish_reason, "stop");
          const value = JSON.parse(done.choices[0].message.content!);
          assertEquals(typeof value === "object" && !Array.isArray(value), true);
          const cut = await create({ ...body, max_tokens: 10 });
          assertEquals(cut.choices[0].finish_reason, "length");
        },
      );

      await t.step(`${name}: tool_choice required gives valid tool calls`, async () => {
        const completion = await create({
          messages: ASK,
          tools: TOOLS,
          tool_choice: "required",
          parallel_tool_calls: false,
          seed: 3,
          max_tokens: 200,
        });
        const { message, finish_reason } = completion.choices[0];
        assertEquals(finish_reason, "tool_calls");
        assertEquals(message.content, null);
        assertEquals(message.tool_calls!.length, 1);
        checkCall(message.tool_calls![0]);
      });

      await t.step(`${name}: a named tool_choice calls that function`, async () => {
        const completion = await create({
          messages: ASK,
          tools: TOOLS,
          tool_choice: { type: "function", function: { name: "get_time" } },
          seed: 4,
          max_tokens: 200,
        });
        const calls = completion.choices[0].message.tool_calls!;
        assertEquals(calls.length, 1);
        assertEquals((calls[0] as { function: { name: string } }).function.name, "get_time");
        checkCall(calls[0]);
      });

      await t.step(
        `${name}: allowed_tools keeps every tool in the prompt, calls only some`,
        async () => {
          const allowed = (names: string[]) => ({
            type: "allowed_tools" as const,
            allowed_tools: {
              mode: "required" as const,
              tools: names.map((n) => ({ type: "function" as const, function: { name: n } })),
            },
          });
          // One call each, so it ends (random weights may otherwise call until max_tokens).
          const ask = {
            messages: ASK,
            tools: TOOLS,
            max_tokens: 200,
            temperature: 1,
            parallel_tool_calls: false,
          };
          const named = await create({
            ...ask,
            tool_choice: { type: "function", function: { name: "get_time" } },
          });
          for (const seed of [1, 2, 3, 4]) {
            const completion = await create({ ...ask, seed, tool_choice: allowed(["get_time"]) });
            const calls = completion.choices[0].message.tool_calls!;
            assert(calls.length >= 1);
            for (const call of calls) {
              assertEquals((call as { function: { name: string } }).function.name, "get_time");
              checkCall(call);
            }
            assertEquals(completion.usage!.prompt_tokens, named.usage!.prompt_tokens);
          }
          const unknown = await assertRejects(
            () => create({ ...ask, tool_choice: allowed(["get_time", "nope"]) }),
            OpenAI.BadRequestError,
          );
          assertEquals(unknown.param, "tool_choice.allowed_tools.tools.1.function.name");
        },
      );

      await t.step(`${name}: tool_choice auto and none: the tools reach the template`, async () => {
        const plain = await create({ messages: ASK, temperature: 0, max_tokens: 12 });
        const auto = await create({ messages: ASK, tools: TOOLS, temperature: 0, max_tokens: 12 });
        const none = await create({
          messages: ASK,
          tools: TOOLS,
          tool_choice: "none",
          temperature: 0,
          max_tokens: 12,
        });
        assert(auto.usage!.prompt_tokens > plain.usage!.prompt_tokens + 50);
        assertEquals(none.usage!.prompt_tokens, auto.usage!.prompt_tokens);
        assertNotEquals(auto.choices[0].message.content, plain.choices[0].message.content);
        assertEquals(none.choices[0].message.tool_calls, undefined);
      });

      await t.step(
        `${name}: streamed tool calls are assembled by the SDK's stream helper`,
        async () => {
          const stream = client.chat.completions.stream({
            model: MODEL,
            messages: ASK,
            tools: TOOLS,
            tool_choice: { type: "function", function: { name: "get_weather" } },
            seed: 5,
            max_tokens: 200,
          });
          const firsts: unknown[] = [];
          stream.on("chunk", (chunk) => {
            for (const call of chunk.choices[0]?.delta.tool_calls ?? []) {
              if (call.id) firsts.push(call);
            }
          });
          const final = await stream.finalChatCompletion();
          const calls = final.choices[0].message.tool_calls!;
          assertEquals(final.choices[0].finish_reason, "tool_calls");
          assertEquals(calls.length, 1);
          checkCall(calls[0]);
          assertEquals(firsts, [{
            index: 0,
            id: calls[0].id,
            type: "function",
            function: { name: "get_weather", arguments: "" },
          }]);
        },
      );

      await t.step(`${name}: a conversation with tool calls and results renders`, async () => {
        const completion = await create({
          messages: [
            ...ASK,
            {
              role: "assistant",
              content: null,
              tool_calls: [{
                id: "call_1",
                type: "function",
                function: { name: "get_weather", arguments: '{"city":"Paris","unit":"celsius"}' },
              }],
            },
            { role: "tool", tool_call_id: "call_1", content: "21 degrees, sunny" },
          ],
          tools: TOOLS,
          max_tokens: 5,
        });
        assert(completion.usage!.prompt_tokens > 100);
      });

      await t.step(`${name}: a schema keyword we cannot enforce is a 400 naming it`, async () => {
        const err = await assertRejects(
          () =>
            create({
              messages: ASK,
              response_format: {
                type: "json_schema",
                json_schema: { name: "x", schema: { type: "number", not: { const: 5 } } },
              },
            }),
          OpenAI.BadRequestError,
        );
        assertEquals(err.param, "response_format.json_schema.schema.not");
        assertMatch(err.message, /'not'/);
      });
    }
  } finally {
    await stack.stop();
  }
});

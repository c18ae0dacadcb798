// The Responses API (`client.responses.create`) with the official `openai` SDK, against the engine
// server and through the gateway (demo model, random weights: only the constraints make the
// output valid).
import OpenAI from "openai";
import { assert, assertEquals, assertMatch, assertRejects } from "../_assert.ts";
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
const WEATHER: OpenAI.Responses.FunctionTool = {
  type: "function",
  name: "get_weather",
  description: "Weather now",
  parameters: WEATHER_PARAMETERS as unknown as Record<string, unknown>,
  strict: true,
};

// The event types a streamed text answer sends, in order (deltas collapsed to one).
const TEXT_EVENTS = [
  "response.created",
  "response.in_progress",
  "response.output_item.added",
  "response.content_part.added",
  "response.output_text.delta",
  "response.output_text.done",
  "response.content_part.done",
  "response.output_item.done",
  "response.completed",
];

// `seed` is vLLM's extension, which we accept too (the SDK's types do not list it).
function seeded(seed: number): Record<never, never> {
  return { seed };
}

function collapse(types: readonly string[]): string[] {
  return types.filter((t, i) => !(t.endsWith(".delta") && types[i - 1] === t));
}

Deno.test("openai SDK: client.responses against the engine and through the gateway", async (t) => {
  const stack = await structuredStack();
  try {
    for (const { name, baseUrl } of stack.targets) {
      const client = new OpenAI({ baseURL: baseUrl, apiKey: "unused", maxRetries: 0 });

      await t.step(`${name}: a string input gives a completed response with usage`, async () => {
        const response = await client.responses.create({
          model: MODEL,
          input: "Say hello.",
          instructions: "Be brief.",
          max_output_tokens: 8,
          temperature: 0,
        });
        assertMatch(response.id, /^resp_[0-9a-f]{32}$/);
        assertEquals(response.object, "response");
        assertEquals(response.instructions, "Be brief.");
        assertEquals(response.output.length, 1);
        const item = response.output[0] as OpenAI.Responses.ResponseOutputMessage;
        assertEquals([item.type, item.role], ["message", "assistant"]);
        const text = (item.content[0] as OpenAI.Responses.ResponseOutputText).text;
        assertEquals(response.output_text, text);
        assert(response.usage!.input_tokens > 0);
        assert(response.usage!.output_tokens > 0 && response.usage!.output_tokens <= 8);
        assertEquals(
          response.usage!.total_tokens,
          response.usage!.input_tokens + response.usage!.output_tokens,
        );
        // Random weights seldom stop within 8 tokens: then it is cut, and says why.
        if (response.status === "incomplete") {
          assertEquals(response.incomplete_details, { reason: "max_output_tokens" });
        } else {
          assertEquals(response.status, "completed");
        }
      });

      await t.step(`${name}: instructions and message items reach the prompt`, async () => {
        const ask = (body: Partial<OpenAI.Responses.ResponseCreateParamsNonStreaming>) =>
          client.responses.create({ model: MODEL, input: "Hi", max_output_tokens: 1, ...body });
        const plain = await ask({});
        const instructed = await ask({ instructions: "You are a pirate who answers in rhymes." });
        const items = await ask({
          input: [
            { role: "developer", content: "Answer in French." },
            { role: "user", content: [{ type: "input_text", text: "Hi" }] },
          ],
        });
        assert(instructed.usage!.input_tokens > plain.usage!.input_tokens + 5);
        assert(items.usage!.input_tokens > plain.usage!.input_tokens + 3);
      });

      await t.step(
        `${name}: a stream sends the events in order; deltas make the text`,
        async () => {
          const stream = await client.responses.create({
            model: MODEL,
            input: "Tell a story.",
            max_output_tokens: 12,
            ...seeded(7),
            stream: true,
          });
          const types: string[] = [];
          const sequence: number[] = [];
          let deltas = "";
          let done = "";
          let final: OpenAI.Responses.Response | undefined;
          for await (const event of stream) {
            types.push(event.type);
            sequence.push(event.sequence_number);
            if (event.type === "response.output_text.delta") deltas += event.delta;
            if (event.type === "response.output_text.done") done = event.text;
            if (event.type === "response.completed" || event.type === "response.incomplete") {
              final = event.response;
            }
          }
          const last = final!.status === "completed" ? "response.completed" : "response.incomplete";
          assertEquals(collapse(types), [...TEXT_EVENTS.slice(0, -1), last]);
          assertEquals(sequence, sequence.map((_, i) => i));
          assert(deltas.length > 0);
          assertEquals(done, deltas);
          assertEquals(final!.output_text ?? outputText(final!), deltas);
          assertEquals(final!.usage!.output_tokens, 12);
          // The same seed without streaming gives the same text.
          const whole = await client.responses.create({
            model: MODEL,
            input: "Tell a story.",
            max_output_tokens: 12,
            ...seeded(7),
          });
          assertEquals(whole.output_text, deltas);
        },
      );

      await t.step(
        `${name}: log-probabilities equal the chat completion's, JSON and streamed`,
        async () => {
          const input = "Count to ten.";
          const chat = await client.chat.completions.create({
            model: MODEL,
            messages: [{ role: "user", content: input }],
            max_completion_tokens: 10,
            temperature: 0,
            logprobs: true,
            top_logprobs: 3,
          });
          const oracle = chat.choices[0].logprobs!.content!;
          assertEquals(oracle.length, 10);
          const ask = { model: MODEL, input, max_output_tokens: 10, temperature: 0 };
          const whole = await client.responses.create({
            ...ask,
            include: ["message.output_text.logprobs"],
            top_logprobs: 3,
          });
          const part = (whole.output[0] as OpenAI.Responses.ResponseOutputMessage)
            .content[0] as OpenAI.Responses.ResponseOutputText;
          assertEquals(part.text, chat.choices[0].message.content);
          assertEquals(part.logprobs, oracle);
          assertEquals(whole.top_logprobs, 3);
          // `top_logprobs` alone asks for them too; the deltas carry each token's once.
          const stream = await client.responses.create({ ...ask, top_logprobs: 3, stream: true });
          const deltas: unknown[] = [];
          let done: unknown[] = [];
          for await (const event of stream) {
            if (event.type === "response.output_text.delta") deltas.push(...event.logprobs);
            if (event.type === "response.output_text.done") done = event.logprobs;
          }
          assertEquals([deltas, done], [oracle, oracle]);
          // Not asked for: none.
          const plain = await client.responses.create(ask);
          const plainPart = (plain.output[0] as OpenAI.Responses.ResponseOutputMessage)
            .content[0] as OpenAI.Responses.ResponseOutputText;
          assertEquals(plainPart.logprobs, []);
        },
      );

      await t.step(`${name}: json_schema text format output validates (ajv)`, async () => {
        const response = await client.responses.create({
          model: MODEL,
          input: "Describe someone.",
          text: {
            format: { type: "json_schema", name: "person", schema: PERSON_SCHEMA, strict: true },
          },
          ...seeded(11),
          max_output_tokens: 400,
        });
        assertEquals(response.status, "completed");
        const value = JSON.parse(response.output_text);
        assertEquals(validatorFor(PERSON_SCHEMA)(value), null, response.output_text);
        assertEquals(response.text?.format?.type, "json_schema");
      });

      await t.step(`${name}: function tools round trip (call, output, answer)`, async () => {
        const first = await client.responses.create({
          model: MODEL,
          input: "What is the weather in Paris?",
          tools: [WEATHER],
          tool_choice: "required",
          parallel_tool_calls: false,
          ...seeded(3),
          max_output_tokens: 200,
        });
        assertEquals(first.status, "completed");
        const calls = first.output.filter((i) => i.type === "function_call");
        assertEquals(calls.length, 1);
        const call = calls[0] as OpenAI.Responses.ResponseFunctionToolCall;
        assertEquals(call.name, "get_weather");
        assertMatch(call.call_id, /^call_\w+$/);
        assertEquals(validatorFor(WEATHER_PARAMETERS)(JSON.parse(call.arguments)), null);
        // The client runs the tool and sends the call and its output back (no stored state).
        const second = await client.responses.create({
          model: MODEL,
          input: [
            { role: "user", content: "What is the weather in Paris?" },
            {
              type: "function_call",
              call_id: call.call_id,
              name: call.name,
              arguments: call.arguments,
            },
            { type: "function_call_output", call_id: call.call_id, output: "21 degrees, sunny" },
          ],
          tools: [WEATHER],
          tool_choice: "none",
          store: false,
          max_output_tokens: 4,
        });
        assert(second.usage!.input_tokens > first.usage!.input_tokens);
        assertEquals(second.output[0].type, "message");
        // With stored state, the output alone continues the first response's conversation.
        const chained = await client.responses.create({
          model: MODEL,
          previous_response_id: first.id,
          input: [{
            type: "function_call_output",
            call_id: call.call_id,
            output: "21 degrees, sunny",
          }],
          tools: [WEATHER],
          tool_choice: "none",
          max_output_tokens: 4,
        });
        // The same conversation as the explicit one above: the same prompt, token for token.
        assertEquals(chained.usage!.input_tokens, second.usage!.input_tokens);
      });

      await t.step(`${name}: allowed_tools holds calls to the listed tools`, async () => {
        const time = {
          type: "function" as const,
          name: "get_time",
          parameters: TIME_PARAMETERS as unknown as Record<string, unknown>,
          strict: false,
        };
        const allowed = (names: string[]) => ({
          type: "allowed_tools" as const,
          mode: "required" as const,
          tools: names.map((n) => ({ type: "function" as const, name: n })),
        });
        for (const seed of [1, 2, 3]) {
          const response = await client.responses.create({
            model: MODEL,
            input: "What is the weather in Paris?",
            tools: [WEATHER, time],
            tool_choice: allowed(["get_time"]),
            parallel_tool_calls: false,
            ...seeded(seed),
            max_output_tokens: 200,
          });
          const calls = response.output.filter((i) => i.type === "function_call");
          assertEquals(calls.map((c) => (c as { name: string }).name), ["get_time"]);
        }
        const unknown = await assertRejects(
          () =>
            client.responses.create({
              model: MODEL,
              input: "Hi",
              tools: [WEATHER, time],
              tool_choice: allowed(["get_time", "nope"]),
            }),
          OpenAI.BadRequestError,
        );
        assertEquals(unknown.param, "tool_choice.tools.1.name");
      });

      await t.step(`${name}: streamed function call arguments`, async () => {
        const stream = await client.responses.create({
          model: MODEL,
          input: "What is the weather in Paris?",
          tools: [WEATHER],
          tool_choice: { type: "function", name: "get_weather" },
          ...seeded(5),
          max_output_tokens: 200,
          stream: true,
        });
        const types: string[] = [];
        let args = "";
        let doneArgs = "";
        for await (const event of stream) {
          types.push(event.type);
          if (event.type === "response.function_call_arguments.delta") args += event.delta;
          if (event.type === "response.function_call_arguments.done") doneArgs = event.arguments;
        }
        assertEquals(collapse(types), [
          "response.created",
          "response.in_progress",
          "response.output_item.added",
          "response.function_call_arguments.delta",
          "response.function_call_arguments.done",
          "response.output_item.done",
          "response.completed",
        ]);
        assertEquals(doneArgs, args);
        assertEquals(validatorFor(WEATHER_PARAMETERS)(JSON.parse(args)), null, args);
      });

      await t.step(`${name}: previous_response_id carries the conversation`, async () => {
        const first = await client.responses.create({
          model: MODEL,
          input: "My name is Ada.",
          instructions: "Be brief.",
          max_output_tokens: 6,
          temperature: 0,
        });
        const alone = await client.responses.create({
          model: MODEL,
          input: "What is my name?",
          max_output_tokens: 1,
        });
        const chained = await client.responses.create({
          model: MODEL,
          input: "What is my name?",
          previous_response_id: first.id,
          max_output_tokens: 1,
        });
        assertEquals(chained.previous_response_id, first.id);
        // The second turn's prompt holds the first turn's input and output.
        const carried = chained.usage!.input_tokens - alone.usage!.input_tokens;
        assert(carried >= first.usage!.output_tokens + 4, `${carried} tokens carried`);
        // Exactly the conversation sent in full (instructions are not carried over, as OpenAI).
        const explicit = await client.responses.create({
          model: MODEL,
          input: [
            { role: "user", content: "My name is Ada." },
            { role: "assistant", content: first.output_text },
            { role: "user", content: "What is my name?" },
          ],
          max_output_tokens: 1,
        });
        assertEquals(chained.usage!.input_tokens, explicit.usage!.input_tokens);
        const fetched = await client.responses.retrieve(first.id);
        assertEquals(fetched.id, first.id);
        assertEquals(fetched.output_text, first.output_text);
      });

      await t.step(`${name}: store false keeps nothing; chaining to it is a 400`, async () => {
        const unstored = await client.responses.create({
          model: MODEL,
          input: "Hi",
          store: false,
          max_output_tokens: 1,
        });
        assertEquals((unstored as { store?: boolean }).store, false);
        const err = await assertRejects(
          () =>
            client.responses.create({
              model: MODEL,
              input: "Again",
              previous_response_id: unstored.id,
            }),
          OpenAI.BadRequestError,
        );
        assertEquals(err.param, "previous_response_id");
        assertMatch(err.message, new RegExp(unstored.id));
        await assertRejects(() => client.responses.retrieve(unstored.id), OpenAI.NotFoundError);
      });

      await t.step(`${name}: DELETE removes a stored response`, async () => {
        const response = await client.responses.create({
          model: MODEL,
          input: "Hi",
          max_output_tokens: 1,
        });
        await client.responses.delete(response.id);
        await assertRejects(() => client.responses.retrieve(response.id), OpenAI.NotFoundError);
        await assertRejects(() => client.responses.delete(response.id), OpenAI.NotFoundError);
      });

      await t.step(`${name}: inputItems.list pages the stored input items`, async () => {
        const first = await client.responses.create({
          model: MODEL,
          input: "My name is Ada.",
          max_output_tokens: 1,
        });
        const response = await client.responses.create({
          model: MODEL,
          previous_response_id: first.id,
          input: [
            { role: "developer", content: "Be brief." },
            { role: "user", content: [{ type: "input_text", text: "One" }] },
            { role: "user", content: "Two" },
          ],
          max_output_tokens: 1,
        });
        const texts = (items: OpenAI.Responses.ResponseItem[]) =>
          items.map((i) => {
            assert(i.type === "message" && i.id.length > 0);
            return (i.content[0] as OpenAI.Responses.ResponseInputText).text;
          });
        // Newest first by default; only this turn's input, not the chained first turn's.
        const page = await client.responses.inputItems.list(response.id, { limit: 2 });
        assertEquals(texts(page.data), ["Two", "One"]);
        assert(page.has_more);
        const next = await client.responses.inputItems.list(response.id, {
          limit: 2,
          after: page.data[1].id,
        });
        assertEquals(texts(next.data), ["Be brief."]);
        assertEquals(next.has_more, false);
        // The SDK's auto-paging follows `after` through every page.
        const all: OpenAI.Responses.ResponseItem[] = [];
        for await (
          const item of client.responses.inputItems.list(response.id, { limit: 1, order: "asc" })
        ) all.push(item);
        assertEquals(texts(all), ["Be brief.", "One", "Two"]);
        const firstItems = await client.responses.inputItems.list(first.id);
        assertEquals(texts(firstItems.data), ["My name is Ada."]);
        await assertRejects(
          () => client.responses.inputItems.list(`resp_${"0".repeat(32)}`),
          OpenAI.NotFoundError,
        );
        const bad = await assertRejects(
          () => client.responses.inputItems.list(response.id, { limit: 101 }),
          OpenAI.BadRequestError,
        );
        assertEquals(bad.param, "limit");
      });

      await t.step(`${name}: built-in tools and background are 400s naming the field`, async () => {
        const builtIn = await assertRejects(
          () =>
            client.responses.create({
              model: MODEL,
              input: "Search",
              tools: [{ type: "web_search" }],
            }),
          OpenAI.BadRequestError,
        );
        assertEquals(builtIn.param, "tools.0.type");
        assertMatch(builtIn.message, /web_search/);
        const background = await assertRejects(
          () => client.responses.create({ model: MODEL, input: "Hi", background: true }),
          OpenAI.BadRequestError,
        );
        assertEquals(background.param, "background");
        const many = await assertRejects(
          () => client.responses.create({ model: MODEL, input: "Hi", top_logprobs: 21 }),
          OpenAI.BadRequestError,
        );
        assertEquals(many.param, "top_logprobs");
        const unknown = await assertRejects(
          () => client.responses.create({ model: MODEL, input: "Hi", ...{ best_of: 2 } }),
          OpenAI.BadRequestError,
        );
        assertEquals(unknown.param, "best_of");
      });

      await t.step(`${name}: errors of the chat path name the Responses fields`, async () => {
        const schema = await assertRejects(
          () =>
            client.responses.create({
              model: MODEL,
              input: "Hi",
              text: {
                format: {
                  type: "json_schema",
                  name: "x",
                  schema: { type: "number", not: { const: 5 } },
                },
              },
            }),
          OpenAI.BadRequestError,
        );
        assertEquals(schema.param, "text.format.schema.not");
        const parameters = await assertRejects(
          () =>
            client.responses.create({
              model: MODEL,
              input: "Hi",
              tools: [{
                type: "function",
                name: "f",
                parameters: {
                  type: "object",
                  properties: { n: { type: "number", not: { const: 5 } } },
                },
                strict: false,
              }],
              tool_choice: "required",
            }),
          OpenAI.BadRequestError,
        );
        assertMatch(parameters.param!, /^tools\.0\.parameters\b/);
        const missing = await assertRejects(
          () => client.responses.create({ model: "no/such-model", input: "Hi" }),
          OpenAI.NotFoundError,
        );
        assertMatch(missing.message, /no\/such-model/);
      });
    }
  } finally {
    await stack.stop();
  }
});

function outputText(response: OpenAI.Responses.Response): string {
  return response.output.flatMap((i) =>
    i.type === "message" ? i.content.map((c) => c.type === "output_text" ? c.text : "") : []
  ).join("");
}

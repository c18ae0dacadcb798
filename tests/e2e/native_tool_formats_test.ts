// Native tool-call markup end to end with the `openai` SDK, against the engine and through the
// gateway: demo/chat (random weights) with a family's real chat template (Command-R, DeepSeek R1,
// DeepSeek V3.1, Mistral v11), its markers as special tokens where the family's tokenizer has them.
// The grammar holds the output to the family's markup, the parser turns it into `tool_calls` whose
// arguments follow the schema, the markers never reach `content`, and the tool result goes back.
import OpenAI from "openai";
import { assert, assertEquals, assertMatch } from "../_assert.ts";
import { setupLogger } from "../../src/core/logging.ts";
import { validatorFor } from "../engine/constrained/_validator.ts";
import { structuredStack, TIME_PARAMETERS, WEATHER_PARAMETERS } from "./_structured_stack.ts";
import { CORPUS } from "../engine/chat/_templates/corpus.ts";
import {
  DEEPSEEK_SPECIAL_TOKENS,
  DEEPSEEK_V3_1_TEMPLATE,
  MISTRAL_SMALL_3_2_TEMPLATE,
  MISTRAL_SPECIAL_TOKENS,
  toolModelFolder,
} from "../engine/chat/_tool_model.ts";

setupLogger("error");

type Tool = OpenAI.Chat.Completions.ChatCompletionTool;
type Call = OpenAI.Chat.Completions.ChatCompletionMessageToolCall;

// The shared demo schemas with descriptions, which Command-R's template writes out (and needs).
const WEATHER = {
  ...WEATHER_PARAMETERS,
  properties: {
    city: { ...WEATHER_PARAMETERS.properties.city, description: "The city." },
    unit: { ...WEATHER_PARAMETERS.properties.unit, description: "The unit." },
  },
};
const TIME = {
  ...TIME_PARAMETERS,
  properties: { zone: { ...TIME_PARAMETERS.properties.zone, description: "The time zone." } },
};
const TOOLS: Tool[] = [
  {
    type: "function",
    function: { name: "get_weather", description: "The weather now.", parameters: WEATHER },
  },
  {
    type: "function",
    function: { name: "get_time", description: "The time now.", parameters: TIME },
  },
];
const PARAMETERS: Record<string, unknown> = {
  get_weather: WEATHER,
  get_time: TIME,
};
const ASK = [{ role: "user" as const, content: "What is the weather in Paris?" }];

interface Family {
  name: string;
  template: string;
  /** Markers made special tokens, as in the family's tokenizer. */
  special: string[];
  /** The family's markers, which only calls contain (code fences are also ordinary text). */
  markup: RegExp;
}

const FAMILIES: Family[] = [
  {
    name: "Command-R",
    template: CORPUS["command_r_v01.ts"].template,
    special: [],
    markup: /Action:/,
  },
  {
    name: "DeepSeek R1",
    template: CORPUS["deepseek_r1.ts"].template,
    special: DEEPSEEK_SPECIAL_TOKENS,
    markup: /｜tool▁/,
  },
  {
    name: "DeepSeek V3.1",
    template: DEEPSEEK_V3_1_TEMPLATE,
    special: DEEPSEEK_SPECIAL_TOKENS,
    markup: /｜tool▁/,
  },
  {
    name: "Mistral v11",
    template: MISTRAL_SMALL_3_2_TEMPLATE,
    special: MISTRAL_SPECIAL_TOKENS,
    markup: /\[TOOL_CALLS\]|\[ARGS\]/,
  },
];

function checkCall(call: Call): void {
  assertEquals(call.type, "function");
  // Listed formats get Mistral's 9-character ids (its templates refuse others), the rest call_….
  assertMatch(call.id, /^\w{9,}$/);
  const fn = (call as { function: { name: string; arguments: string } }).function;
  assertEquals(validatorFor(PARAMETERS[fn.name])(JSON.parse(fn.arguments)), null, fn.arguments);
}

for (const family of FAMILIES) {
  Deno.test(`openai SDK: ${family.name} native tool calls, engine and gateway`, async (t) => {
    await using model = await toolModelFolder(family.template, { specialTokens: family.special });
    const stack = await structuredStack(model.folder);
    try {
      for (const { name, baseUrl } of stack.targets) {
        const client = new OpenAI({ baseURL: baseUrl, apiKey: "unused", maxRetries: 0 });
        const create = (
          body: Omit<OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming, "model">,
        ) => client.chat.completions.create({ model: stack.model, ...body });

        await t.step(`${name}: required gives only valid calls`, async () => {
          const completion = await create({
            messages: ASK,
            tools: TOOLS,
            tool_choice: "required",
            // Random weights keep opening calls when they may: one each, so they finish.
            parallel_tool_calls: false,
            n: 2,
            seed: 7,
            max_tokens: 300,
          });
          for (const choice of completion.choices) {
            assertEquals(choice.finish_reason, "tool_calls");
            assertEquals(choice.message.content, null);
            assert(choice.message.tool_calls!.length >= 1);
            choice.message.tool_calls!.forEach((call) => checkCall(call));
          }
        });

        await t.step(`${name}: a named function, streamed, never shows markup`, async () => {
          const stream = client.chat.completions.stream({
            model: stack.model,
            messages: ASK,
            tools: TOOLS,
            tool_choice: { type: "function", function: { name: "get_time" } },
            max_tokens: 200,
            stream: true,
          });
          let content = "";
          stream.on("content", (delta) => content += delta);
          const final = await stream.finalChatCompletion();
          assertEquals(content, "");
          const calls = final.choices[0].message.tool_calls!;
          assertEquals(calls.length, 1);
          assertEquals((calls[0] as { function: { name: string } }).function.name, "get_time");
          checkCall(calls[0]);
          assertEquals(final.choices[0].finish_reason, "tool_calls");
        });

        await t.step(`${name}: auto gives text without markup, or valid calls`, async () => {
          for (const stream of [false, true]) {
            const completion = stream
              ? await client.chat.completions.stream({
                model: stack.model,
                messages: ASK,
                tools: TOOLS,
                n: 4,
                seed: 3,
                max_tokens: 120,
                stream: true,
              }).finalChatCompletion()
              : await create({ messages: ASK, tools: TOOLS, n: 4, seed: 3, max_tokens: 120 });
            for (const choice of completion.choices) {
              assert(!family.markup.test(choice.message.content ?? ""), choice.message.content!);
              for (const call of choice.message.tool_calls ?? []) checkCall(call);
            }
          }
        });

        // The markers as real models write them: special tokens (biased so the grammar's choice
        // between them and the marker spelled in plain tokens always falls on them).
        const bias = Object.fromEntries([...model.specialIds.values()].map((id) => [id, 100]));
        for (const skip of family.special.length > 0 ? [true, false] : []) {
          await t.step(
            `${name}: special-token markers are parsed, skip_special_tokens ${skip}`,
            async () => {
              const body = {
                model: stack.model,
                messages: ASK,
                tools: TOOLS,
                tool_choice: "required" as const,
                // One call: with the start of another as likely as the end, calls would go on.
                parallel_tool_calls: false,
                logit_bias: bias,
                max_tokens: 200,
                // vLLM's field: special tokens in the text or not; the markers reach the parser either way.
                skip_special_tokens: skip,
              };
              const completion = await client.chat.completions.create({ ...body, logprobs: true });
              const choice = completion.choices[0];
              const tokens = choice.logprobs!.content!.map((l) => l.token);
              for (const marker of family.special.filter((m) => family.template.includes(m))) {
                assert(tokens.includes(marker), `${marker} not generated as one token: ${tokens}`);
              }
              assertEquals(choice.finish_reason, "tool_calls");
              assertEquals(choice.message.content, null);
              assertEquals(choice.message.tool_calls!.length, 1);
              checkCall(choice.message.tool_calls![0]);

              const stream = client.chat.completions.stream({ ...body, stream: true });
              let content = "";
              stream.on("content", (delta) => content += delta);
              const final = await stream.finalChatCompletion();
              assertEquals(content, "");
              assertEquals(final.choices[0].message.tool_calls!.length, 1);
              checkCall(final.choices[0].message.tool_calls![0]);
            },
          );
        }

        await t.step(`${name}: the tool result goes back and the model answers`, async () => {
          const first = await create({
            messages: ASK,
            tools: TOOLS,
            tool_choice: { type: "function", function: { name: "get_weather" } },
            max_tokens: 200,
          });
          const call = first.choices[0].message.tool_calls![0];
          const completion = await create({
            messages: [
              ...ASK,
              first.choices[0].message,
              { role: "tool", tool_call_id: call.id, content: "21 degrees and sunny" },
            ],
            tools: TOOLS,
            tool_choice: "none",
            max_tokens: 8,
          });
          const answer = completion.choices[0];
          assertEquals(answer.message.tool_calls, undefined);
          assertEquals(typeof answer.message.content, "string");
          assert(completion.usage!.prompt_tokens > first.usage!.prompt_tokens);
        });
      }
    } finally {
      await stack.stop();
    }
  });
}

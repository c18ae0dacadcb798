// Tool calls at their edges (issue 22, items 6 and 7), with the `openai` SDK against the demo
// model: free-string arguments, whatever they hold, stay inside their call, and a call cut by
// max_tokens comes back as a partial tool call with finish_reason "length", never as text.
import OpenAI from "openai";
import { assert, assertEquals } from "../_assert.ts";
import { setupLogger } from "../../src/core/logging.ts";
import { structuredStack } from "./_structured_stack.ts";

setupLogger("error");

const NOTE_TOOL: OpenAI.Chat.Completions.ChatCompletionTool = {
  type: "function",
  function: {
    name: "save_note",
    parameters: {
      type: "object",
      properties: { text: { type: "string", maxLength: 16 } },
      required: ["text"],
      additionalProperties: false,
    },
  },
};
const ASK = [{ role: "user" as const, content: "Save a note." }];
const END_TOKEN = 4085; // `</tool_call>` in the demo vocabulary

Deno.test("openai SDK: free-string arguments stay in their call; a cut call is a call", async (t) => {
  const stack = await structuredStack();
  try {
    for (const { name, baseUrl } of stack.targets) {
      const client = new OpenAI({ baseURL: baseUrl, apiKey: "unused", maxRetries: 0 });
      const create = (body: Partial<OpenAI.Chat.Completions.ChatCompletionCreateParams>) =>
        client.chat.completions.create({
          model: "demo/chat",
          messages: ASK,
          tools: [NOTE_TOOL],
          tool_choice: "required",
          parallel_tool_calls: false, // one call, so it ends (else a random model may go on)
          ...body,
        } as OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming);

      await t.step(`${name}: every sampled call is whole, valid JSON`, async () => {
        for (let seed = 100; seed < 112; seed++) {
          const choice = (await create({ seed, temperature: 1, max_tokens: 400 })).choices[0];
          const call = choice.message.tool_calls![0] as { function: { arguments: string } };
          assertEquals(choice.finish_reason, "tool_calls", `seed ${seed}`);
          assertEquals(choice.message.content, null, `seed ${seed}`);
          const args = JSON.parse(call.function.arguments);
          assertEquals(Object.keys(args), ["text"], `seed ${seed}`);
        }
      });

      await t.step(
        `${name}: an end marker written inside a string stays in the string`,
        async () => {
          // logit_bias makes the model write `</tool_call>` (one token) wherever the grammar
          // allows it: first inside the string, then where the call really ends.
          const choice = (await create({
            temperature: 0,
            max_tokens: 60,
            logit_bias: { [END_TOKEN]: 100 },
          })).choices[0];
          const call = choice.message.tool_calls![0] as { function: { arguments: string } };
          assertEquals(choice.finish_reason, "tool_calls");
          assertEquals(choice.message.content, null);
          assertEquals(JSON.parse(call.function.arguments).text.includes("</tool_call>"), true);
        },
      );

      await t.step(`${name}: a call cut by max_tokens is a partial call`, async () => {
        for (const max_tokens of [2, 4, 8]) {
          const choice = (await create({ temperature: 0, max_tokens })).choices[0];
          assertEquals(choice.finish_reason, "length", `max_tokens ${max_tokens}`);
          assertEquals(choice.message.content, null, `max_tokens ${max_tokens}`);
          assertEquals(choice.message.tool_calls?.length, 1, `max_tokens ${max_tokens}`);
          const calls = [];
          let finish: string | null = null;
          let content = "";
          const stream = await client.chat.completions.create({
            model: "demo/chat",
            messages: ASK,
            tools: [NOTE_TOOL],
            tool_choice: "required",
            temperature: 0,
            max_tokens,
            stream: true,
          });
          for await (const chunk of stream) {
            const delta = chunk.choices[0]?.delta;
            content += delta?.content ?? "";
            calls.push(...(delta?.tool_calls ?? []));
            finish = chunk.choices[0]?.finish_reason ?? finish;
          }
          assertEquals([content, finish], ["", "length"], `streamed, max_tokens ${max_tokens}`);
          assert(calls.length > 0 && calls[0].id !== undefined, "the call's first delta");
        }
      });

      await t.step(
        `${name}: a cut call of the function tool_choice names has its name`,
        async () => {
          const named = { type: "function" as const, function: { name: NOTE_TOOL.function.name } };
          for (const max_tokens of [1, 2, 4]) {
            const choice = (await create({ temperature: 0, max_tokens, tool_choice: named }))
              .choices[0];
            assertEquals(choice.finish_reason, "length", `max_tokens ${max_tokens}`);
            const call = choice.message.tool_calls![0] as { function: { name: string } };
            assertEquals(call.function.name, NOTE_TOOL.function.name, `max_tokens ${max_tokens}`);
            const stream = await client.chat.completions.create({
              model: "demo/chat",
              messages: ASK,
              tools: [NOTE_TOOL],
              tool_choice: named,
              temperature: 0,
              max_tokens,
              stream: true,
            });
            const names = [];
            for await (const chunk of stream) {
              for (const delta of chunk.choices[0]?.delta.tool_calls ?? []) {
                if (delta.function?.name !== undefined) names.push(delta.function.name);
              }
            }
            assertEquals(names, [NOTE_TOOL.function.name], `streamed, max_tokens ${max_tokens}`);
          }
        },
      );

      await t.step(`${name}: stop strings never cut a call, only free text`, async () => {
        // Each of these occurs in every call's markup or arguments.
        const stop = ["name", '"', "}", "<tool"];
        const named = { type: "function" as const, function: { name: NOTE_TOOL.function.name } };
        for (const tool_choice of ["required" as const, named]) {
          const choice = (await create({ temperature: 0, max_tokens: 200, stop, tool_choice }))
            .choices[0];
          assertEquals(choice.finish_reason, "tool_calls", JSON.stringify(tool_choice));
          const call = choice.message.tool_calls![0] as { function: { arguments: string } };
          assertEquals(Object.keys(JSON.parse(call.function.arguments)), ["text"]);
        }
        // Under auto the free text still stops: at its second character, here.
        const text = await create({ tool_choice: "auto", temperature: 0, max_tokens: 30 });
        const content = text.choices[0].message.content!;
        assert(content.length > 2, "the demo model answers in text at temperature 0");
        const cut = await create({
          tool_choice: "auto",
          temperature: 0,
          max_tokens: 30,
          stop: [content[1]],
        });
        assertEquals(cut.choices[0].finish_reason, "stop");
        assertEquals(cut.choices[0].message.content, content[0]);
      });
    }
  } finally {
    await stack.stop();
  }
});

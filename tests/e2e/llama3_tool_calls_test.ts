// Llama 3.x's JSON tool calls: a model whose chat template asks for bare
// `{"name": ..., "parameters": ...}` answers is held to that format and its calls are parsed, with
// the `openai` SDK, streamed and not. The model is demo/chat (random weights) with a template of
// our own in Llama 3's shape.
import OpenAI from "openai";
import { join } from "node:path";
import { assert, assertEquals, assertMatch } from "../_assert.ts";
import { setupLogger } from "../../src/core/logging.ts";
import { startEngineServer } from "../../src/server/engine_server.ts";
import { AutoTokenizer } from "@huggingface/transformers";
import { type PromptTokenizer, renderChatTemplate } from "../../src/engine/chat/prompt.ts";
import {
  HERMES_TOOL_CALLS,
  LLAMA3_JSON_TOOL_CALLS,
  toolCallFormatOf,
} from "../../src/engine/chat/output_constraint.ts";
import { validatorFor } from "../engine/constrained/_validator.ts";
import { demoFolder, TEST_MODEL_CACHE } from "../_helpers/demo_engines.ts";
import { TIME_PARAMETERS, WEATHER_PARAMETERS } from "./_structured_stack.ts";

setupLogger("error");

// Tools listed as JSON, calls asked for and rendered as {"name", "parameters"} (the arguments
// object through tojson), tool results under the ipython role: the parts of Llama 3.1-3.3's
// template that decide the tool-call format.
const LLAMA3_STYLE_TEMPLATE = `
{%- if tools %}<|start_header_id|>system<|end_header_id|>

To call a function, answer with only JSON in the form {"name": function name, "parameters": dictionary of argument name and its value}. Functions:
{%- for t in tools %}
{{ t | tojson }}
{%- endfor %}<|eot_id|>
{%- endif %}
{%- for m in messages %}<|start_header_id|>{{ 'ipython' if m.role == 'tool' else m.role }}<|end_header_id|>

{% if m.tool_calls %}{% for c in m.tool_calls %}{{ '{"name": "' + c.function.name + '", "parameters": ' }}{{ c.function.arguments | tojson }}{{ '}' }}{% endfor %}{% else %}{{ m.content }}{% endif %}<|im_end|>
{%- endfor %}
{%- if add_generation_prompt %}<|start_header_id|>assistant<|end_header_id|>

{% endif %}`;

const TOOLS: OpenAI.Chat.Completions.ChatCompletionTool[] = [
  { type: "function", function: { name: "get_weather", parameters: WEATHER_PARAMETERS } },
  { type: "function", function: { name: "get_time", parameters: TIME_PARAMETERS } },
];
const PARAMETERS: Record<string, unknown> = {
  get_weather: WEATHER_PARAMETERS,
  get_time: TIME_PARAMETERS,
};

async function llama3StyleFolder(): Promise<string> {
  const folder = await Deno.makeTempDir({ prefix: "svc-llama3-tools-" });
  const source = await demoFolder("demo/chat");
  for await (const entry of Deno.readDir(source)) {
    if (entry.isFile) await Deno.copyFile(join(source, entry.name), join(folder, entry.name));
  }
  await Deno.mkdir(join(folder, "onnx"));
  for await (const entry of Deno.readDir(join(source, "onnx"))) {
    await Deno.copyFile(join(source, "onnx", entry.name), join(folder, "onnx", entry.name));
  }
  const configPath = join(folder, "tokenizer_config.json");
  const config = JSON.parse(await Deno.readTextFile(configPath));
  config.chat_template = LLAMA3_STYLE_TEMPLATE;
  await Deno.writeTextFile(configPath, JSON.stringify(config));
  return folder;
}

function checkCall(call: OpenAI.Chat.Completions.ChatCompletionMessageToolCall): void {
  assertMatch(call.id, /^call_\w+$/);
  const fn = (call as { function: { name: string; arguments: string } }).function;
  assertEquals(validatorFor(PARAMETERS[fn.name])(JSON.parse(fn.arguments)), null, fn.arguments);
}

Deno.test("Llama 3 JSON tool calls: the template's format is detected, enforced and parsed", async (t) => {
  const folder = await llama3StyleFolder();
  const server = await startEngineServer({
    model: folder,
    kind: "chat",
    hostname: "127.0.0.1",
    port: 0,
    device: "cpu",
    cacheDir: TEST_MODEL_CACHE,
  });
  try {
    await server.ready;
    const client = new OpenAI({ baseURL: server.baseUrl, apiKey: "unused", maxRetries: 0 });
    const model = (await client.models.list()).data[0].id;
    const ask = [{ role: "user" as const, content: "Weather in Paris?" }];

    await t.step("required: bare calls become tool_calls", async () => {
      const completion = await client.chat.completions.create({
        model,
        messages: ask,
        tools: TOOLS,
        tool_choice: "required",
        n: 3,
        seed: 5,
        max_tokens: 300,
        logprobs: true,
      });
      for (const choice of completion.choices) {
        // The text itself is bare JSON: no Hermes markup.
        const text = choice.logprobs!.content!.map((l) => l.token).join("");
        assertMatch(text, /^\{"name": ?"get_(weather|time)", ?"parameters": ?\{/);
        assertEquals(choice.finish_reason, "tool_calls");
        assertEquals(choice.message.content, null);
        assert(choice.message.tool_calls!.length >= 1);
        choice.message.tool_calls!.forEach(checkCall);
      }
    });

    await t.step("a named function, streamed: the SDK assembles one call to it", async () => {
      const stream = client.chat.completions.stream({
        model,
        messages: ask,
        tools: TOOLS,
        tool_choice: { type: "function", function: { name: "get_time" } },
        max_tokens: 200,
        stream: true,
      });
      const final = await stream.finalChatCompletion();
      const calls = final.choices[0].message.tool_calls!;
      assertEquals(calls.length, 1);
      assertEquals((calls[0] as { function: { name: string } }).function.name, "get_time");
      checkCall(calls[0]);
      assertEquals(final.choices[0].finish_reason, "tool_calls");
    });

    await t.step("auto: each answer is text that opens no call, or valid calls", async () => {
      const completion = await client.chat.completions.create({
        model,
        messages: ask,
        tools: TOOLS,
        n: 8,
        seed: 3,
        max_tokens: 60,
      });
      for (const choice of completion.choices) {
        if (choice.message.tool_calls?.length) {
          choice.message.tool_calls.forEach(checkCall);
        } else {
          assert(!/^\s*\{/.test(choice.message.content ?? ""), choice.message.content ?? "");
        }
      }
    });

    await t.step("a tool round trip renders the call in the template's own JSON", async () => {
      const completion = await client.chat.completions.create({
        model,
        messages: [
          ...ask,
          {
            role: "assistant",
            content: null,
            tool_calls: [{
              id: "call_1",
              type: "function",
              function: { name: "get_weather", arguments: '{"city":"Paris","unit":"celsius"}' },
            }],
          },
          { role: "tool", tool_call_id: "call_1", content: "21 degrees" },
        ],
        tools: TOOLS,
        tool_choice: "none",
        max_tokens: 5,
      });
      assertEquals(completion.choices[0].message.tool_calls, undefined);
    });
  } finally {
    await server.stop();
    await Deno.remove(folder, { recursive: true });
  }
});

Deno.test("the tool-call format follows the template, and calls render in its own JSON", async () => {
  const folder = await llama3StyleFolder();
  try {
    const tokenizer = await AutoTokenizer.from_pretrained(folder, { local_files_only: true });
    assertEquals(toolCallFormatOf(tokenizer.chat_template), LLAMA3_JSON_TOOL_CALLS);
    const demo = await AutoTokenizer.from_pretrained(await demoFolder("demo/chat"));
    assertEquals(toolCallFormatOf(demo.chat_template), HERMES_TOOL_CALLS);
    assertEquals(toolCallFormatOf("{{ messages[0].content }}"), HERMES_TOOL_CALLS);
    const text = renderChatTemplate(
      tokenizer as unknown as PromptTokenizer,
      [
        { role: "user", content: "hi" },
        {
          role: "assistant",
          content: "",
          toolCalls: [{ id: "c", name: "get_time", arguments: '{"zone":"UTC"}' }],
        },
      ],
      undefined,
      "llama3-style",
      { tools: [{ name: "get_time", parameters: TIME_PARAMETERS }] },
    );
    // The arguments reach the template as an object, which it writes with tojson (as Llama 3.1's).
    assert(text.includes('{"name": "get_time", "parameters": {"zone": "UTC"}}'), text);
  } finally {
    await Deno.remove(folder, { recursive: true });
  }
});

// Where chat templates come from and what they see, on real transformers.js tokenizers: a list of
// named templates in tokenizer_config.json, chat_template.jinja, and tool calls' arguments.
import { join } from "node:path";
import { cp } from "node:fs/promises";
import { assertEquals, assertMatch } from "../../_assert.ts";
import { demoFolder } from "../../_helpers/demo_engines.ts";
import { loadModel } from "../../../src/engine/load_model.ts";
import { ChatEngine, collect } from "../../../src/engine/chat/chat_engine.ts";
import { MISTRAL_TOOL_CALLS } from "../../../src/engine/chat/output_constraint.ts";
import { toolCallParser } from "../../../src/protocol/tool_call_parser.ts";
import type { ChatMessage, ToolDefinition } from "../../../src/core/inference_types.ts";

const EACH = "{% for m in messages %}{{ m.content }}{% endfor %}";
const WEATHER: ToolDefinition = { name: "get_weather", parameters: { type: "object" } };
const USER: ChatMessage[] = [{ role: "user", content: "hi" }];

/**
 * demo/chat in a temp folder whose chat template `edit` changes; the engine on it, stopped and
 * the folder removed on dispose.
 */
async function engineWith(
  edit: (folder: string, config: Record<string, unknown>) => void | Promise<void>,
): Promise<{ engine: ChatEngine } & AsyncDisposable> {
  const folder = await Deno.makeTempDir({ prefix: "svc-template-" });
  await cp(await demoFolder("demo/chat"), folder, { recursive: true });
  const path = join(folder, "tokenizer_config.json");
  const config = JSON.parse(await Deno.readTextFile(path));
  await edit(folder, config);
  await Deno.writeTextFile(path, JSON.stringify(config));
  const model = await loadModel(folder, "chat", { device: "cpu", dtype: "q8" });
  const engine = await ChatEngine.create(model, { id: "m" });
  return {
    engine,
    async [Symbol.asyncDispose]() {
      await engine.dispose();
      await Deno.remove(folder, { recursive: true });
    },
  };
}

async function rendered(
  engine: ChatEngine,
  messages: ChatMessage[],
  tools?: ToolDefinition[],
): Promise<string> {
  const { tokens } = await engine.tokenize({ messages, tools, addGenerationPrompt: false });
  return await engine.detokenize(tokens);
}

Deno.test("a list of named chat templates loads, and renders tool_use with tools, default without", async () => {
  await using t = await engineWith((_, config) => {
    config.chat_template = [
      { name: "default", template: `D:${EACH}` },
      { name: "tool_use", template: `T{{ tools | length }}:${EACH}` },
    ];
  });
  assertEquals(await rendered(t.engine, USER), "D:hi");
  assertEquals(await rendered(t.engine, USER, [WEATHER]), "T1:hi");
});

Deno.test("chat_template.jinja is the template when tokenizer_config.json has none", async () => {
  await using t = await engineWith(async (dir, config) => {
    delete config.chat_template;
    await Deno.writeTextFile(join(dir, "chat_template.jinja"), `J:${EACH}`);
  });
  assertEquals(await rendered(t.engine, USER), "J:hi");
});

Deno.test("a tool call's arguments reach the template as an object, as transformers passes them", async () => {
  await using t = await engineWith((_, config) => {
    config.chat_template = "{% for m in messages %}{% if m.tool_calls %}" +
      "{% for c in m.tool_calls %}{{ c.function.name }}({{ c.function.arguments.city }}," +
      "{{ c.function.arguments | tojson }}){% endfor %}{% else %}{{ m.content }}{% endif %}" +
      "{% endfor %}";
  });
  const call = { id: "c1", name: "get_weather", arguments: '{"city": "Paris"}' };
  const broken = { id: "c2", name: "get_weather", arguments: '{"city": "Par' };
  assertEquals(
    await rendered(t.engine, [{ role: "assistant", content: "", toolCalls: [call, broken] }]),
    'get_weather(Paris,{"city": "Paris"})get_weather(,"{\\"city\\": \\"Par")',
  );
});

Deno.test("a template that loops over content parts gets text as one part", async () => {
  await using t = await engineWith((_, config) => {
    config.chat_template = "{% for message in messages %}[{% for part in message['content'] %}" +
      "{{ part.type }}={{ part.text }}{% endfor %}]{% endfor %}";
  });
  assertEquals(await rendered(t.engine, USER), "[text=hi]");
});

// Mistral v0.3's way with tools, in our own words: tools before the last user turn, calls as
// `[TOOL_CALLS] [...]` with 9-character ids (anything else raises), results as [TOOL_RESULTS].
const MISTRAL_TEMPLATE = "{%- for m in messages %}" +
  "{%- if m.role == 'user' %}{% if loop.last and tools %}[AVAILABLE_TOOLS] {{ tools | tojson }}" +
  "[/AVAILABLE_TOOLS]{% endif %}[INST] {{ m.content }}[/INST]" +
  "{%- elif m.role == 'assistant' and m.tool_calls %}[TOOL_CALLS] [" +
  "{%- for c in m.tool_calls %}{% if c.id | length != 9 %}" +
  "{{ raise_exception('Tool call IDs should be alphanumeric strings with length 9!') }}{% endif %}" +
  '{"name": "{{ c.function.name }}", "arguments": {{ c.function.arguments | tojson }}, ' +
  '"id": "{{ c.id }}"}{% if not loop.last %}, {% endif %}{% endfor %}]</s>' +
  "{%- elif m.role == 'assistant' %} {{ m.content }}</s>" +
  "{%- elif m.role == 'tool' %}[TOOL_RESULTS] {\"content\": {{ m.content | tojson }}, " +
  '"call_id": "{{ m.tool_call_id }}"}[/TOOL_RESULTS]' +
  "{%- endif %}{%- endfor %}";

Deno.test("a Mistral template gets [TOOL_CALLS] lists, 9-character ids, and its history back", async () => {
  await using t = await engineWith((_, config) => {
    config.chat_template = MISTRAL_TEMPLATE;
  });
  const tool: ToolDefinition = {
    name: "get_weather",
    parameters: {
      type: "object",
      properties: { city: { type: "string", maxLength: 8 } },
      required: ["city"],
      additionalProperties: false,
    },
  };
  const stream = await t.engine.generate({ messages: USER, tools: [tool] }, {
    toolChoice: "required",
    parallelToolCalls: false,
    temperature: 0,
    maxTokens: 80,
  });
  assertEquals(stream.toolCalls, MISTRAL_TOOL_CALLS);
  const { text } = await collect(stream);
  assertMatch(text, /^\[TOOL_CALLS\] ?\[\{"name": ?"get_weather".*\}\]$/);
  const parser = toolCallParser(MISTRAL_TOOL_CALLS);
  parser.push(text);
  parser.flush();
  const [call] = parser.calls;
  assertMatch(call.id, /^[A-Za-z0-9]{9}$/);
  assertEquals(call.name, "get_weather");
  assertEquals(typeof JSON.parse(call.arguments).city, "string");
  // The next turn: the call and its result render in Mistral's markup.
  const history: ChatMessage[] = [
    ...USER,
    { role: "assistant", content: "", toolCalls: [call] },
    { role: "tool", content: "sunny", toolCallId: call.id },
  ];
  assertEquals(
    await rendered(t.engine, history, [tool]),
    `[INST] hi[/INST][TOOL_CALLS] [{"name": "get_weather", "arguments": ${call.arguments}, ` +
      `"id": "${call.id}"}]</s>[TOOL_RESULTS] {"content": "sunny", "call_id": "${call.id}"}` +
      "[/TOOL_RESULTS]",
  );
});

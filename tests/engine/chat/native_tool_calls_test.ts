// Native tool-call markup under the grammar, on a real model (demo/chat) given a family's chat
// template: the engine picks the format from the template, generation is held to it, and the
// parser gives back the OpenAI call with arguments that follow the tool's schema.
import { assert, assertEquals, assertMatch } from "../../_assert.ts";
import { loadModel } from "../../../src/engine/load_model.ts";
import { ChatEngine, collect } from "../../../src/engine/chat/chat_engine.ts";
import {
  COMMAND_R_TOOL_CALLS,
  DEEPSEEK_V31_TOOL_CALLS,
  DEEPSEEK_V3_TOOL_CALLS,
  MISTRAL_V11_TOOL_CALLS,
  toolCallFormatOf,
  toolCallMarkerTokens,
} from "../../../src/engine/chat/output_constraint.ts";
import { AutoTokenizer } from "@huggingface/transformers";
import { toolCallParser } from "../../../src/protocol/tool_call_parser.ts";
import type { ToolCallFormat, ToolDefinition } from "../../../src/core/inference_types.ts";
import { CORPUS } from "./_templates/corpus.ts";
import {
  DEEPSEEK_SPECIAL_TOKENS,
  DEEPSEEK_V3_1_TEMPLATE,
  MISTRAL_SPECIAL_TOKENS,
  toolModelFolder,
} from "./_tool_model.ts";

const WEATHER: ToolDefinition = {
  name: "get_weather",
  description: "Gets the weather.",
  parameters: {
    type: "object",
    properties: { city: { type: "string", maxLength: 8, description: "The city." } },
    required: ["city"],
    additionalProperties: false,
  },
};

// Mistral Small 3.2's way with calls (tokenizer v11), cut down to what this test needs.
const MISTRAL_V11 = "{%- for m in messages %}{%- if m.role == 'user' %}" +
  "{%- if tools and loop.last %}[AVAILABLE_TOOLS]{{ tools | tojson }}[/AVAILABLE_TOOLS]{% endif %}" +
  "[INST]{{ m.content }}[/INST]{%- elif m.role == 'assistant' %}{{ m.content }}" +
  "{%- for tool in m.tool_calls %}{%- set arguments = tool['function']['arguments'] %}" +
  "{%- if arguments is not string %}{%- set arguments = arguments|tojson|safe %}{%- endif %}" +
  "{{- '[TOOL_CALLS]' + tool['function']['name'] + '[ARGS]' + arguments }}{%- endfor %}</s>" +
  "{%- elif m.role == 'tool' %}[TOOL_RESULTS]{{ m.content }}[/TOOL_RESULTS]{%- endif %}" +
  "{%- endfor %}";

async function engineWith(
  template: string,
  specialTokens: readonly string[] = [],
): Promise<
  { engine: ChatEngine; folder: string; specialIds: Map<string, number> } & AsyncDisposable
> {
  const model = await toolModelFolder(template, { specialTokens });
  const loaded = await loadModel(model.folder, "chat", { device: "cpu", dtype: "q8" });
  const engine = await ChatEngine.create(loaded, { id: "m" });
  return {
    engine,
    folder: model.folder,
    specialIds: model.specialIds,
    async [Symbol.asyncDispose]() {
      await engine.dispose();
      await model[Symbol.asyncDispose]();
    },
  };
}

const CASES: [string, string, ToolCallFormat, RegExp][] = [
  [
    "Command-R",
    CORPUS["command_r_v01.ts"].template,
    COMMAND_R_TOOL_CALLS,
    /^Action:\n```json\n\[\{"tool_name": ?"get_weather", ?"parameters": ?\{.*\}\}\]```$/s,
  ],
  [
    "DeepSeek R1",
    CORPUS["deepseek_r1.ts"].template,
    DEEPSEEK_V3_TOOL_CALLS,
    /^<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n\{.*\}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>$/s,
  ],
  [
    "DeepSeek V3.1",
    DEEPSEEK_V3_1_TEMPLATE,
    DEEPSEEK_V31_TOOL_CALLS,
    /^<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>\{.*\}<｜tool▁call▁end｜><｜tool▁calls▁end｜>$/s,
  ],
  [
    "Mistral v11",
    MISTRAL_V11,
    MISTRAL_V11_TOOL_CALLS,
    /^\[TOOL_CALLS\]get_weather\[ARGS\]\{.*\}$/s,
  ],
];

for (const [family, template, format, markup] of CASES) {
  Deno.test(`a ${family} template gets its native tool-call markup, generated under the grammar and parsed back`, async () => {
    await using t = await engineWith(template);
    for (const toolChoice of ["required", { name: "get_weather" }] as const) {
      const stream = await t.engine.generate(
        { messages: [{ role: "user", content: "Weather in Paris?" }], tools: [WEATHER] },
        { toolChoice, parallelToolCalls: false, temperature: 0, maxTokens: 400 },
      );
      assertEquals(stream.toolCalls, format);
      const { text } = await collect(stream);
      assertMatch(text, markup);
      const parser = toolCallParser(format);
      const parsed = [parser.push(text), parser.flush()];
      assertEquals(parsed.map((p) => p.content).join(""), "");
      assertEquals(parser.calls.length, 1);
      assertEquals(parser.calls[0].name, "get_weather");
      const args = JSON.parse(parser.calls[0].arguments);
      assertEquals(Object.keys(args), ["city"]);
      // maxLength counts characters (code points), not UTF-16 units.
      assertEquals(typeof args.city === "string" && [...args.city].length <= 8, true, args.city);
    }
  });
}

Deno.test("tool-call markers that are special tokens are found, chosen by the grammar and kept in the text", async () => {
  for (
    const [template, special] of [
      [MISTRAL_V11, MISTRAL_SPECIAL_TOKENS],
      [DEEPSEEK_V3_1_TEMPLATE, DEEPSEEK_SPECIAL_TOKENS],
    ] as const
  ) {
    await using t = await engineWith(template, special);
    const tokenizer = await AutoTokenizer.from_pretrained(t.folder, { local_files_only: true });
    const format = toolCallFormatOf(tokenizer.chat_template);
    // Other special tokens (the demo's <|im_end|>, Qwen's unused ones) are no markers.
    const markers = toolCallMarkerTokens(tokenizer, format, new Set());
    assertEquals(new Map([...markers].map(([id, text]) => [text, id])), t.specialIds);
    const bias = Object.fromEntries([...t.specialIds.values()].map((id) => [id, 100]));
    for (const skipSpecialTokens of [true, false]) {
      const stream = await t.engine.generate(
        { messages: [{ role: "user", content: "Weather in Paris?" }], tools: [WEATHER] },
        {
          toolChoice: "required",
          parallelToolCalls: false,
          temperature: 0,
          maxTokens: 400,
          logitBias: bias,
          skipSpecialTokens,
        },
      );
      const { text } = await collect(stream);
      // The markers the grammar chose as special tokens are in the text the parser reads. (The
      // bias also puts them inside argument strings, where the grammar allows any plain token.)
      for (const marker of special) assert(text.includes(marker), text);
      const parser = toolCallParser(format);
      assertEquals(parser.push(text).content + parser.flush().content, "");
      assertEquals(parser.calls.map((c) => c.name), ["get_weather"]);
      JSON.parse(parser.calls[0].arguments);
    }
  }
});

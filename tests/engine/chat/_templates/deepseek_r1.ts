// deepseek-ai/DeepSeek-R1: fullwidth-bar turn markers, no newlines, earlier answers lose their
// reasoning (everything up to </think>).
import type { CorpusTemplate } from "./types.ts";

const HF_JS = "https://github.com/huggingface/huggingface.js/blob/main/packages/jinja/test/" +
  "e2e.test.js";

export default {
  model: "deepseek-ai/DeepSeek-R1",
  family: "DeepSeek",
  source: `${HF_JS} (TEST_CUSTOM_TEMPLATES["deepseek-ai/DeepSeek-R1"]), the template of ` +
    "https://huggingface.co/deepseek-ai/DeepSeek-R1/blob/main/tokenizer_config.json",
  template:
    `{% if not add_generation_prompt is defined %}{% set add_generation_prompt = false %}{% endif %}{% set ns = namespace(is_first=false, is_tool=false, is_output_first=true, system_prompt='', is_first_sp=true) %}{%- for message in messages %}{%- if message['role'] == 'system' %}{%- if ns.is_first_sp %}{% set ns.system_prompt = ns.system_prompt + message['content'] %}{% set ns.is_first_sp = false %}{%- else %}{% set ns.system_prompt = ns.system_prompt + '\\n\\n' + message['content'] %}{%- endif %}{%- endif %}{%- endfor %}{{ bos_token }}{{ ns.system_prompt }}{%- for message in messages %}{%- if message['role'] == 'user' %}{%- set ns.is_tool = false -%}{{'<｜User｜>' + message['content']}}{%- endif %}{%- if message['role'] == 'assistant' and 'tool_calls' in message %}{%- set ns.is_tool = false -%}{%- for tool in message['tool_calls'] %}{%- if not ns.is_first %}{%- if message['content'] is none %}{{'<｜Assistant｜><｜tool▁calls▁begin｜><｜tool▁call▁begin｜>' + tool['type'] + '<｜tool▁sep｜>' + tool['function']['name'] + '\\n' + '\`\`\`json' + '\\n' + tool['function']['arguments'] + '\\n' + '\`\`\`' + '<｜tool▁call▁end｜>'}}{%- else %}{{'<｜Assistant｜>' + message['content'] + '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>' + tool['type'] + '<｜tool▁sep｜>' + tool['function']['name'] + '\\n' + '\`\`\`json' + '\\n' + tool['function']['arguments'] + '\\n' + '\`\`\`' + '<｜tool▁call▁end｜>'}}{%- endif %}{%- set ns.is_first = true -%}{%- else %}{{'\\n' + '<｜tool▁call▁begin｜>' + tool['type'] + '<｜tool▁sep｜>' + tool['function']['name'] + '\\n' + '\`\`\`json' + '\\n' + tool['function']['arguments'] + '\\n' + '\`\`\`' + '<｜tool▁call▁end｜>'}}{%- endif %}{%- endfor %}{{'<｜tool▁calls▁end｜><｜end▁of▁sentence｜>'}}{%- endif %}{%- if message['role'] == 'assistant' and 'tool_calls' not in message %}{%- if ns.is_tool %}{{'<｜tool▁outputs▁end｜>' + message['content'] + '<｜end▁of▁sentence｜>'}}{%- set ns.is_tool = false -%}{%- else %}{% set content = message['content'] %}{% if '</think>' in content %}{% set content = content.split('</think>')[-1] %}{% endif %}{{'<｜Assistant｜>' + content + '<｜end▁of▁sentence｜>'}}{%- endif %}{%- endif %}{%- if message['role'] == 'tool' %}{%- set ns.is_tool = true -%}{%- if ns.is_output_first %}{{'<｜tool▁outputs▁begin｜><｜tool▁output▁begin｜>' + message['content'] + '<｜tool▁output▁end｜>'}}{%- set ns.is_output_first = false %}{%- else %}{{'<｜tool▁output▁begin｜>' + message['content'] + '<｜tool▁output▁end｜>'}}{%- endif %}{%- endif %}{%- endfor -%}{% if ns.is_tool %}{{'<｜tool▁outputs▁end｜>'}}{% endif %}{% if add_generation_prompt and not ns.is_tool %}{{'<｜Assistant｜>'}}{% endif %}`,
  bosToken: "<｜begin▁of▁sentence｜>",
  eosToken: "<｜end▁of▁sentence｜>",
  cases: [
    {
      name: "an earlier answer keeps only what follows </think>",
      messages: [
        { role: "user", content: "Hi there." },
        { role: "assistant", content: '<think>The user said "Hi there."</think>Hi!' },
        { role: "user", content: "Tell me a joke." },
      ],
      addGenerationPrompt: true,
      expected:
        `<｜begin▁of▁sentence｜><｜User｜>Hi there.<｜Assistant｜>Hi!<｜end▁of▁sentence｜><｜User｜>Tell me a joke.<｜Assistant｜>`,
      expectedFrom: `${HF_JS} (target of "deepseek-ai/DeepSeek-R1")`,
    },
    {
      name: "system messages are joined in front, without a turn marker",
      messages: [
        { role: "system", content: "Be brief." },
        { role: "system", content: "Answer in French." },
        { role: "user", content: "Hi there." },
      ],
      addGenerationPrompt: false,
      expected: "<｜begin▁of▁sentence｜>Be brief.\n\nAnswer in French.<｜User｜>Hi there.",
      expectedFrom: "by hand from the template: ns.system_prompt joins system contents with " +
        "'\\n\\n' after bos_token; no generation prompt",
    },
    {
      name: "tool round trip: two calls with their arguments as JSON text, then both results",
      messages: [
        { role: "user", content: "What's the weather in Paris and Rome?" },
        {
          role: "assistant",
          content: "",
          toolCalls: [
            { id: "c1", name: "get_weather", arguments: '{"city": "Paris"}' },
            { id: "c2", name: "get_weather", arguments: '{"city": "Rome"}' },
          ],
        },
        { role: "tool", content: "sunny", toolCallId: "c1" },
        { role: "tool", content: "rainy", toolCallId: "c2" },
      ],
      addGenerationPrompt: true,
      expected: "<｜begin▁of▁sentence｜><｜User｜>What's the weather in Paris and Rome?" +
        "<｜Assistant｜><｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>" +
        'get_weather\n```json\n{"city": "Paris"}\n```<｜tool▁call▁end｜>\n' +
        "<｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n" +
        '{"city": "Rome"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜><｜end▁of▁sentence｜>' +
        "<｜tool▁outputs▁begin｜><｜tool▁output▁begin｜>sunny<｜tool▁output▁end｜>" +
        "<｜tool▁output▁begin｜>rainy<｜tool▁output▁end｜><｜tool▁outputs▁end｜>",
      expectedFrom: "Python: jinja2 3.1.6 ImmutableSandboxedEnvironment(trim_blocks=True, " +
        "lstrip_blocks=True), as transformers' apply_chat_template renders it, with the arguments " +
        'as the JSON strings the template concatenates (content None there, "" here: same text)',
    },
  ],
} satisfies CorpusTemplate;

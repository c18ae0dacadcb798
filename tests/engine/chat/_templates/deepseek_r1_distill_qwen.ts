// deepseek-ai/DeepSeek-R1-Distill-Qwen-7B (the Qwen and Llama distills share it): R1's markers, but
// only the last system message is kept, tool calls are written only for a turn whose content is
// null, a single call never gets <｜tool▁calls▁end｜>, later results start on a new line, and the
// generation prompt opens <think>.
import type { CorpusTemplate } from "./types.ts";

export default {
  model: "deepseek-ai/DeepSeek-R1-Distill-Qwen-7B",
  family: "DeepSeek",
  source:
    "the chat_template of https://huggingface.co/deepseek-ai/DeepSeek-R1-Distill-Qwen-7B/blob/main/tokenizer_config.json (current revision, with <think>\\n in the generation prompt); the earlier revision is https://github.com/ggerganov/llama.cpp models/templates/deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja",
  template:
    "{% if not add_generation_prompt is defined %}{% set add_generation_prompt = false %}{% endif %}{% set ns = namespace(is_first=false, is_tool=false, is_output_first=true, system_prompt='') %}{%- for message in messages %}{%- if message['role'] == 'system' %}{% set ns.system_prompt = message['content'] %}{%- endif %}{%- endfor %}{{bos_token}}{{ns.system_prompt}}{%- for message in messages %}{%- if message['role'] == 'user' %}{%- set ns.is_tool = false -%}{{'<｜User｜>' + message['content']}}{%- endif %}{%- if message['role'] == 'assistant' and message['content'] is none %}{%- set ns.is_tool = false -%}{%- for tool in message['tool_calls']%}{%- if not ns.is_first %}{{'<｜Assistant｜><｜tool▁calls▁begin｜><｜tool▁call▁begin｜>' + tool['type'] + '<｜tool▁sep｜>' + tool['function']['name'] + '\\n' + '```json' + '\\n' + tool['function']['arguments'] + '\\n' + '```' + '<｜tool▁call▁end｜>'}}{%- set ns.is_first = true -%}{%- else %}{{'\\n' + '<｜tool▁call▁begin｜>' + tool['type'] + '<｜tool▁sep｜>' + tool['function']['name'] + '\\n' + '```json' + '\\n' + tool['function']['arguments'] + '\\n' + '```' + '<｜tool▁call▁end｜>'}}{{'<｜tool▁calls▁end｜><｜end▁of▁sentence｜>'}}{%- endif %}{%- endfor %}{%- endif %}{%- if message['role'] == 'assistant' and message['content'] is not none %}{%- if ns.is_tool %}{{'<｜tool▁outputs▁end｜>' + message['content'] + '<｜end▁of▁sentence｜>'}}{%- set ns.is_tool = false -%}{%- else %}{% set content = message['content'] %}{% if '</think>' in content %}{% set content = content.split('</think>')[-1] %}{% endif %}{{'<｜Assistant｜>' + content + '<｜end▁of▁sentence｜>'}}{%- endif %}{%- endif %}{%- if message['role'] == 'tool' %}{%- set ns.is_tool = true -%}{%- if ns.is_output_first %}{{'<｜tool▁outputs▁begin｜><｜tool▁output▁begin｜>' + message['content'] + '<｜tool▁output▁end｜>'}}{%- set ns.is_output_first = false %}{%- else %}{{'\\n<｜tool▁output▁begin｜>' + message['content'] + '<｜tool▁output▁end｜>'}}{%- endif %}{%- endif %}{%- endfor -%}{% if ns.is_tool %}{{'<｜tool▁outputs▁end｜>'}}{% endif %}{% if add_generation_prompt and not ns.is_tool %}{{'<｜Assistant｜><think>\\n'}}{% endif %}",
  bosToken: "<｜begin▁of▁sentence｜>",
  eosToken: "<｜end▁of▁sentence｜>",
  cases: [
    {
      name:
        "an earlier answer keeps only what follows </think>; the generation prompt opens <think>",
      messages: [{ "role": "user", "content": "What is 2 + 2?" }, {
        "role": "assistant",
        "content": "<think>\nSimple arithmetic.\n</think>\n\n2 + 2 = 4.",
      }, { "role": "user", "content": "And 3 + 3?" }],
      addGenerationPrompt: true,
      expected:
        "<｜begin▁of▁sentence｜><｜User｜>What is 2 + 2?<｜Assistant｜>\n\n2 + 2 = 4.<｜end▁of▁sentence｜><｜User｜>And 3 + 3?<｜Assistant｜><think>\n",
      expectedFrom:
        "Python: jinja2 3.1.6 ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, loopcontrols) with transformers' tojson, raise_exception and strftime_now, as apply_chat_template renders it (render.py, not kept in the repo)",
    },
    {
      name: "the system message is written in front, without a turn marker",
      messages: [
        { "role": "system", "content": "You are a helpful assistant." },
        { "role": "user", "content": "Hello, how are you?" },
        { "role": "assistant", "content": "I'm doing great. How can I help you today?" },
        { "role": "user", "content": "I'd like to show off how chat templating works!" },
      ],
      addGenerationPrompt: true,
      expected:
        "<｜begin▁of▁sentence｜>You are a helpful assistant.<｜User｜>Hello, how are you?<｜Assistant｜>I'm doing great. How can I help you today?<｜end▁of▁sentence｜><｜User｜>I'd like to show off how chat templating works!<｜Assistant｜><think>\n",
      expectedFrom:
        "Python: jinja2 3.1.6 ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, loopcontrols) with transformers' tojson, raise_exception and strftime_now, as apply_chat_template renders it (render.py, not kept in the repo)",
    },
    {
      name:
        "tool round trip: a tool-only turn (content null) with its arguments as JSON text, the result, the answer, the next user turn",
      messages: [
        { "role": "system", "content": "You are a bot that responds to weather queries." },
        { "role": "user", "content": "Hey, what's the temperature in Paris right now?" },
        {
          "role": "assistant",
          "content": "",
          "toolCalls": [{
            "id": "call_1",
            "name": "get_current_temperature",
            "arguments": '{"location": "Paris, France"}',
          }],
        },
        {
          "role": "tool",
          "content": "22.0",
          "name": "get_current_temperature",
          "toolCallId": "call_1",
        },
        { "role": "assistant", "content": "It's 22 degrees in Paris right now." },
        { "role": "user", "content": "Thanks! And in London?" },
      ],
      addGenerationPrompt: true,
      expected:
        '<｜begin▁of▁sentence｜>You are a bot that responds to weather queries.<｜User｜>Hey, what\'s the temperature in Paris right now?<｜Assistant｜><｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_current_temperature\n```json\n{"location": "Paris, France"}\n```<｜tool▁call▁end｜><｜tool▁outputs▁begin｜><｜tool▁output▁begin｜>22.0<｜tool▁output▁end｜><｜tool▁outputs▁end｜>It\'s 22 degrees in Paris right now.<｜end▁of▁sentence｜><｜User｜>Thanks! And in London?<｜Assistant｜><think>\n',
      expectedFrom:
        "Python: jinja2 3.1.6 ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, loopcontrols) with transformers' tojson, raise_exception and strftime_now, as apply_chat_template renders it (render.py, not kept in the repo); the tool-only turn with content null (the template tests `content is none`) and its arguments as JSON text (the template joins them to a string), as the renderer passes them; no tools, as the template lists none (the server then describes them in the system message itself, see withToolsInText)",
    },
  ],
} satisfies CorpusTemplate;

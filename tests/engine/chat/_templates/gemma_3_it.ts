// google/gemma-3-4b-it (and the other Gemma 3 instruct models): Gemma's <start_of_turn> turns with
// the assistant as 'model'; a system message becomes a prefix of the first user turn; content may
// be a string or parts (images as <start_of_image>).
import type { CorpusTemplate } from "./types.ts";

const WEATHER = {
  name: "get_weather",
  description: "Weather now",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};
// Gemma 3's template knows no tools: the server hands it the tools in a system message, earlier
// calls in Hermes markup and each round's results as one user turn (prompt.ts, withToolsInText).
const CONVERTED = "derived by hand: the template's logic over the conversation the server " +
  "converts for a template without tools (Gemma insists that user and model alternate)";

export default {
  model: "google/gemma-3-4b-it",
  family: "Gemma",
  source:
    "the chat_template of https://huggingface.co/google/gemma-3-4b-it (tokenizer_config.json); the same text, with Gemma 3n's audio/image tokens instead, is in https://github.com/huggingface/transformers src/transformers/models/gemma3n/convert_gemma3n_weights.py",
  template:
    "{{ bos_token }}\n{%- if messages[0]['role'] == 'system' -%}\n    {%- if messages[0]['content'] is string -%}\n        {%- set first_user_prefix = messages[0]['content'] + '\\n\\n' -%}\n    {%- else -%}\n        {%- set first_user_prefix = messages[0]['content'][0]['text'] + '\\n\\n' -%}\n    {%- endif -%}\n    {%- set loop_messages = messages[1:] -%}\n{%- else -%}\n    {%- set first_user_prefix = \"\" -%}\n    {%- set loop_messages = messages -%}\n{%- endif -%}\n{%- for message in loop_messages -%}\n    {%- if (message['role'] == 'user') != (loop.index0 % 2 == 0) -%}\n        {{ raise_exception(\"Conversation roles must alternate user/assistant/user/assistant/...\") }}\n    {%- endif -%}\n    {%- if (message['role'] == 'assistant') -%}\n        {%- set role = \"model\" -%}\n    {%- else -%}\n        {%- set role = message['role'] -%}\n    {%- endif -%}\n    {{ '<start_of_turn>' + role + '\\n' + (first_user_prefix if loop.first else \"\") }}\n    {%- if message['content'] is string -%}\n        {{ message['content'] | trim }}\n    {%- elif message['content'] is iterable -%}\n        {%- for item in message['content'] -%}\n            {%- if item['type'] == 'image' -%}\n                {{ '<start_of_image>' }}\n            {%- elif item['type'] == 'text' -%}\n                {{ item['text'] | trim }}\n            {%- endif -%}\n        {%- endfor -%}\n    {%- else -%}\n        {{ raise_exception(\"Invalid content type\") }}\n    {%- endif -%}\n    {{ '<end_of_turn>\\n' }}\n{%- endfor -%}\n{%- if add_generation_prompt -%}\n    {{'<start_of_turn>model\\n'}}\n{%- endif -%}\n",
  bosToken: "<bos>",
  eosToken: "<eos>",
  cases: [
    {
      name: "plain chat: the assistant is 'model', turns trimmed",
      messages: [{ "role": "user", "content": "Hello, how are you?" }, {
        "role": "assistant",
        "content": "I'm doing great. How can I help you today?",
      }, { "role": "user", "content": "I'd like to show off how chat templating works!" }],
      addGenerationPrompt: true,
      expected:
        "<bos><start_of_turn>user\nHello, how are you?<end_of_turn>\n<start_of_turn>model\nI'm doing great. How can I help you today?<end_of_turn>\n<start_of_turn>user\nI'd like to show off how chat templating works!<end_of_turn>\n<start_of_turn>model\n",
      expectedFrom:
        "Python: jinja2 3.1.6 ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, loopcontrols) with transformers' tojson, raise_exception and strftime_now, as apply_chat_template renders it (render.py, not kept in the repo)",
    },
    {
      name: "a system message is put in front of the first user turn",
      messages: [
        { "role": "system", "content": "You are a helpful assistant." },
        { "role": "user", "content": "Hello, how are you?" },
        { "role": "assistant", "content": "I'm doing great. How can I help you today?" },
        { "role": "user", "content": "I'd like to show off how chat templating works!" },
      ],
      addGenerationPrompt: true,
      expected:
        "<bos><start_of_turn>user\nYou are a helpful assistant.\n\nHello, how are you?<end_of_turn>\n<start_of_turn>model\nI'm doing great. How can I help you today?<end_of_turn>\n<start_of_turn>user\nI'd like to show off how chat templating works!<end_of_turn>\n<start_of_turn>model\n",
      expectedFrom:
        "Python: jinja2 3.1.6 ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, loopcontrols) with transformers' tojson, raise_exception and strftime_now, as apply_chat_template renders it (render.py, not kept in the repo)",
    },
    {
      name:
        "parallel calls without tool support: the results and the next question share one user turn",
      messages: [
        { role: "user", content: "Weather in Paris and Rome?" },
        {
          role: "assistant",
          content: "",
          toolCalls: [
            { id: "call_1", name: "get_weather", arguments: '{"city":"Paris"}' },
            { id: "call_2", name: "get_weather", arguments: '{"city":"Rome"}' },
          ],
        },
        { role: "tool", content: "18C", toolCallId: "call_1" },
        { role: "tool", content: "22C", toolCallId: "call_2" },
        { role: "user", content: "Thanks. And Oslo?" },
      ],
      tools: [WEATHER],
      addGenerationPrompt: true,
      expected:
        '<bos><start_of_turn>user\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>\n{"type":"function","function":{"name":"get_weather","description":"Weather now","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>\n\nWeather in Paris and Rome?<end_of_turn>\n<start_of_turn>model\n<tool_call>\n{"name": "get_weather", "arguments": {"city":"Paris"}}\n</tool_call>\n<tool_call>\n{"name": "get_weather", "arguments": {"city":"Rome"}}\n</tool_call><end_of_turn>\n<start_of_turn>user\n<tool_response>\n18C\n</tool_response>\n<tool_response>\n22C\n</tool_response>\nThanks. And Oslo?<end_of_turn>\n<start_of_turn>model\n',
      expectedFrom: CONVERTED,
    },
    {
      name: "tool history without tools in the request is converted the same way",
      messages: [
        { role: "user", content: "Weather in Paris and Rome?" },
        {
          role: "assistant",
          content: "",
          toolCalls: [
            { id: "call_1", name: "get_weather", arguments: '{"city":"Paris"}' },
            { id: "call_2", name: "get_weather", arguments: '{"city":"Rome"}' },
          ],
        },
        { role: "tool", content: "18C", toolCallId: "call_1" },
        { role: "tool", content: "22C", toolCallId: "call_2" },
      ],
      addGenerationPrompt: true,
      expected:
        '<bos><start_of_turn>user\nWeather in Paris and Rome?<end_of_turn>\n<start_of_turn>model\n<tool_call>\n{"name": "get_weather", "arguments": {"city":"Paris"}}\n</tool_call>\n<tool_call>\n{"name": "get_weather", "arguments": {"city":"Rome"}}\n</tool_call><end_of_turn>\n<start_of_turn>user\n<tool_response>\n18C\n</tool_response>\n<tool_response>\n22C\n</tool_response><end_of_turn>\n<start_of_turn>model\n',
      expectedFrom: CONVERTED,
    },
  ],
} satisfies CorpusTemplate;

// Qwen/QwQ-32B: Qwen2.5's ChatML and <tool_call> markup, but no default system prompt, earlier
// answers lose their reasoning (up to </think>), and the generation prompt opens <think>.
import type { CorpusTemplate } from "./types.ts";

export default {
  model: "Qwen/QwQ-32B",
  family: "Qwen",
  source:
    "https://github.com/ggerganov/llama.cpp models/templates/Qwen-QwQ-32B.jinja (the chat_template of https://huggingface.co/Qwen/QwQ-32B/blob/main/tokenizer_config.json)",
  template:
    "{%- if tools %}\n    {{- '<|im_start|>system\\n' }}\n    {%- if messages[0]['role'] == 'system' %}\n        {{- messages[0]['content'] }}\n    {%- else %}\n        {{- '' }}\n    {%- endif %}\n    {{- \"\\n\\n# Tools\\n\\nYou may call one or more functions to assist with the user query.\\n\\nYou are provided with function signatures within <tools></tools> XML tags:\\n<tools>\" }}\n    {%- for tool in tools %}\n        {{- \"\\n\" }}\n        {{- tool | tojson }}\n    {%- endfor %}\n    {{- \"\\n</tools>\\n\\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\\n<tool_call>\\n{\\\"name\\\": <function-name>, \\\"arguments\\\": <args-json-object>}\\n</tool_call><|im_end|>\\n\" }}\n{%- else %}\n    {%- if messages[0]['role'] == 'system' %}\n        {{- '<|im_start|>system\\n' + messages[0]['content'] + '<|im_end|>\\n' }}\n  {%- endif %}\n{%- endif %}\n{%- for message in messages %}\n    {%- if (message.role == \"user\") or (message.role == \"system\" and not loop.first) %}\n        {{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>' + '\\n' }}\n    {%- elif message.role == \"assistant\" and not message.tool_calls %}\n        {%- set content = message.content %}\n        {%- if not loop.last %}\n            {%- set content = message.content.split('</think>')[-1].lstrip('\\n') %}\n        {%- endif %}\n        {{- '<|im_start|>' + message.role + '\\n' + content + '<|im_end|>' + '\\n' }}\n    {%- elif message.role == \"assistant\" %}\n        {%- set content = message.content %}\n        {%- if not loop.last %}\n            {%- set content = message.content.split('</think>')[-1].lstrip('\\n') %}\n        {%- endif %}\n        {{- '<|im_start|>' + message.role }}\n        {%- if message.content %}\n            {{- '\\n' + content }}\n        {%- endif %}\n        {%- for tool_call in message.tool_calls %}\n            {%- if tool_call.function is defined %}\n                {%- set tool_call = tool_call.function %}\n            {%- endif %}\n            {{- '\\n<tool_call>\\n{\"name\": \"' }}\n            {{- tool_call.name }}\n            {{- '\", \"arguments\": ' }}\n            {{- tool_call.arguments | tojson }}\n            {{- '}\\n</tool_call>' }}\n        {%- endfor %}\n        {{- '<|im_end|>\\n' }}\n    {%- elif message.role == \"tool\" %}\n        {%- if (loop.index0 == 0) or (messages[loop.index0 - 1].role != \"tool\") %}\n            {{- '<|im_start|>user' }}\n        {%- endif %}\n        {{- '\\n<tool_response>\\n' }}\n        {{- message.content }}\n        {{- '\\n</tool_response>' }}\n        {%- if loop.last or (messages[loop.index0 + 1].role != \"tool\") %}\n            {{- '<|im_end|>\\n' }}\n        {%- endif %}\n    {%- endif %}\n{%- endfor %}\n{%- if add_generation_prompt %}\n    {{- '<|im_start|>assistant\\n<think>\\n' }}\n{%- endif %}\n",
  bosToken: null,
  eosToken: "<|im_end|>",
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
        "<|im_start|>user\nWhat is 2 + 2?<|im_end|>\n<|im_start|>assistant\n2 + 2 = 4.<|im_end|>\n<|im_start|>user\nAnd 3 + 3?<|im_end|>\n<|im_start|>assistant\n<think>\n",
      expectedFrom:
        "Python: jinja2 3.1.6 ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, loopcontrols) with transformers' tojson, raise_exception and strftime_now, as apply_chat_template renders it (render.py, not kept in the repo)",
    },
    {
      name: "a system message, no tools",
      messages: [
        { "role": "system", "content": "You are a helpful assistant." },
        { "role": "user", "content": "Hello, how are you?" },
        { "role": "assistant", "content": "I'm doing great. How can I help you today?" },
        { "role": "user", "content": "I'd like to show off how chat templating works!" },
      ],
      addGenerationPrompt: true,
      expected:
        "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\nHello, how are you?<|im_end|>\n<|im_start|>assistant\nI'm doing great. How can I help you today?<|im_end|>\n<|im_start|>user\nI'd like to show off how chat templating works!<|im_end|>\n<|im_start|>assistant\n<think>\n",
      expectedFrom:
        "Python: jinja2 3.1.6 ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, loopcontrols) with transformers' tojson, raise_exception and strftime_now, as apply_chat_template renders it (render.py, not kept in the repo)",
    },
    {
      name:
        "tool round trip: <tool_call> with the arguments as an object, the result as a user turn, the answer, the next user turn",
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
      tools: [{
        "name": "get_current_temperature",
        "description": "Get the current temperature at a location.",
        "parameters": {
          "type": "object",
          "properties": {
            "location": {
              "type": "string",
              "description":
                'The location to get the temperature for, in the format "City, Country"',
            },
          },
          "required": ["location"],
        },
      }],
      addGenerationPrompt: true,
      expected:
        '<|im_start|>system\nYou are a bot that responds to weather queries.\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>\n{"type": "function", "function": {"name": "get_current_temperature", "description": "Get the current temperature at a location.", "parameters": {"type": "object", "properties": {"location": {"type": "string", "description": "The location to get the temperature for, in the format \\"City, Country\\""}}, "required": ["location"]}}}\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call><|im_end|>\n<|im_start|>user\nHey, what\'s the temperature in Paris right now?<|im_end|>\n<|im_start|>assistant\n<tool_call>\n{"name": "get_current_temperature", "arguments": {"location": "Paris, France"}}\n</tool_call><|im_end|>\n<|im_start|>user\n<tool_response>\n22.0\n</tool_response><|im_end|>\n<|im_start|>assistant\nIt\'s 22 degrees in Paris right now.<|im_end|>\n<|im_start|>user\nThanks! And in London?<|im_end|>\n<|im_start|>assistant\n<think>\n',
      expectedFrom:
        "Python: jinja2 3.1.6 ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, loopcontrols) with transformers' tojson, raise_exception and strftime_now, as apply_chat_template renders it (render.py, not kept in the repo); the tool-only turn's content is \"\" (how the server reads OpenAI's null), its arguments an object",
    },
  ],
} satisfies CorpusTemplate;

// meta-llama/Llama-3.2-3B-Instruct (and -1B): Llama 3.1's template with today's date from
// strftime_now, tools as JSON in the first user turn, one call per turn as {"name", "parameters"},
// results in the ipython role.
import type { CorpusTemplate } from "./types.ts";

export default {
  model: "meta-llama/Llama-3.2-3B-Instruct",
  family: "Llama",
  source:
    "https://github.com/ggerganov/llama.cpp models/templates/meta-llama-Llama-3.2-3B-Instruct.jinja (the chat_template of https://huggingface.co/meta-llama/Llama-3.2-3B-Instruct/blob/main/tokenizer_config.json)",
  template:
    '{{- bos_token }}\n{%- if custom_tools is defined %}\n    {%- set tools = custom_tools %}\n{%- endif %}\n{%- if not tools_in_user_message is defined %}\n    {%- set tools_in_user_message = true %}\n{%- endif %}\n{%- if not date_string is defined %}\n    {%- if strftime_now is defined %}\n        {%- set date_string = strftime_now("%d %b %Y") %}\n    {%- else %}\n        {%- set date_string = "26 Jul 2024" %}\n    {%- endif %}\n{%- endif %}\n{%- if not tools is defined %}\n    {%- set tools = none %}\n{%- endif %}\n\n{#- This block extracts the system message, so we can slot it into the right place. #}\n{%- if messages[0][\'role\'] == \'system\' %}\n    {%- set system_message = messages[0][\'content\']|trim %}\n    {%- set messages = messages[1:] %}\n{%- else %}\n    {%- set system_message = "" %}\n{%- endif %}\n\n{#- System message #}\n{{- "<|start_header_id|>system<|end_header_id|>\\n\\n" }}\n{%- if tools is not none %}\n    {{- "Environment: ipython\\n" }}\n{%- endif %}\n{{- "Cutting Knowledge Date: December 2023\\n" }}\n{{- "Today Date: " + date_string + "\\n\\n" }}\n{%- if tools is not none and not tools_in_user_message %}\n    {{- "You have access to the following functions. To call a function, please respond with JSON for a function call." }}\n    {{- \'Respond in the format {"name": function name, "parameters": dictionary of argument name and its value}.\' }}\n    {{- "Do not use variables.\\n\\n" }}\n    {%- for t in tools %}\n        {{- t | tojson(indent=4) }}\n        {{- "\\n\\n" }}\n    {%- endfor %}\n{%- endif %}\n{{- system_message }}\n{{- "<|eot_id|>" }}\n\n{#- Custom tools are passed in a user message with some extra guidance #}\n{%- if tools_in_user_message and not tools is none %}\n    {#- Extract the first user message so we can plug it in here #}\n    {%- if messages | length != 0 %}\n        {%- set first_user_message = messages[0][\'content\']|trim %}\n        {%- set messages = messages[1:] %}\n    {%- else %}\n        {{- raise_exception("Cannot put tools in the first user message when there\'s no first user message!") }}\n{%- endif %}\n    {{- \'<|start_header_id|>user<|end_header_id|>\\n\\n\' -}}\n    {{- "Given the following functions, please respond with a JSON for a function call " }}\n    {{- "with its proper arguments that best answers the given prompt.\\n\\n" }}\n    {{- \'Respond in the format {"name": function name, "parameters": dictionary of argument name and its value}.\' }}\n    {{- "Do not use variables.\\n\\n" }}\n    {%- for t in tools %}\n        {{- t | tojson(indent=4) }}\n        {{- "\\n\\n" }}\n    {%- endfor %}\n    {{- first_user_message + "<|eot_id|>"}}\n{%- endif %}\n\n{%- for message in messages %}\n    {%- if not (message.role == \'ipython\' or message.role == \'tool\' or \'tool_calls\' in message) %}\n        {{- \'<|start_header_id|>\' + message[\'role\'] + \'<|end_header_id|>\\n\\n\'+ message[\'content\'] | trim + \'<|eot_id|>\' }}\n    {%- elif \'tool_calls\' in message %}\n        {%- if not message.tool_calls|length == 1 %}\n            {{- raise_exception("This model only supports single tool-calls at once!") }}\n        {%- endif %}\n        {%- set tool_call = message.tool_calls[0].function %}\n        {{- \'<|start_header_id|>assistant<|end_header_id|>\\n\\n\' -}}\n        {{- \'{"name": "\' + tool_call.name + \'", \' }}\n        {{- \'"parameters": \' }}\n        {{- tool_call.arguments | tojson }}\n        {{- "}" }}\n        {{- "<|eot_id|>" }}\n    {%- elif message.role == "tool" or message.role == "ipython" %}\n        {{- "<|start_header_id|>ipython<|end_header_id|>\\n\\n" }}\n        {%- if message.content is mapping or message.content is iterable %}\n            {{- message.content | tojson }}\n        {%- else %}\n            {{- message.content }}\n        {%- endif %}\n        {{- "<|eot_id|>" }}\n    {%- endif %}\n{%- endfor %}\n{%- if add_generation_prompt %}\n    {{- \'<|start_header_id|>assistant<|end_header_id|>\\n\\n\' }}\n{%- endif %}\n',
  bosToken: "<|begin_of_text|>",
  eosToken: "<|eot_id|>",
  cases: [
    {
      name: "plain chat: a dated system header, turns trimmed",
      messages: [{ "role": "user", "content": "Hello, how are you?" }, {
        "role": "assistant",
        "content": "I'm doing great. How can I help you today?",
      }, { "role": "user", "content": "I'd like to show off how chat templating works!" }],
      addGenerationPrompt: true,
      now: "2025-07-10T12:00:00.000Z",
      expected:
        "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nCutting Knowledge Date: December 2023\nToday Date: 10 Jul 2025\n\n<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nHello, how are you?<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\nI'm doing great. How can I help you today?<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nI'd like to show off how chat templating works!<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n",
      expectedFrom:
        "Python: jinja2 3.1.6 ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, loopcontrols) with transformers' tojson, raise_exception and strftime_now, as apply_chat_template renders it (render.py, not kept in the repo)",
    },
    {
      name: "a system message goes into the system header",
      messages: [
        { "role": "system", "content": "You are a helpful assistant." },
        { "role": "user", "content": "Hello, how are you?" },
        { "role": "assistant", "content": "I'm doing great. How can I help you today?" },
        { "role": "user", "content": "I'd like to show off how chat templating works!" },
      ],
      addGenerationPrompt: true,
      now: "2025-07-10T12:00:00.000Z",
      expected:
        "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nCutting Knowledge Date: December 2023\nToday Date: 10 Jul 2025\n\nYou are a helpful assistant.<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nHello, how are you?<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\nI'm doing great. How can I help you today?<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nI'd like to show off how chat templating works!<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n",
      expectedFrom:
        "Python: jinja2 3.1.6 ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, loopcontrols) with transformers' tojson, raise_exception and strftime_now, as apply_chat_template renders it (render.py, not kept in the repo)",
    },
    {
      name:
        "tool round trip: the call as JSON, its result under ipython, the answer, the next user turn",
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
      now: "2025-07-10T12:00:00.000Z",
      expected:
        '<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nEnvironment: ipython\nCutting Knowledge Date: December 2023\nToday Date: 10 Jul 2025\n\nYou are a bot that responds to weather queries.<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nGiven the following functions, please respond with a JSON for a function call with its proper arguments that best answers the given prompt.\n\nRespond in the format {"name": function name, "parameters": dictionary of argument name and its value}.Do not use variables.\n\n{\n    "type": "function",\n    "function": {\n        "name": "get_current_temperature",\n        "description": "Get the current temperature at a location.",\n        "parameters": {\n            "type": "object",\n            "properties": {\n                "location": {\n                    "type": "string",\n                    "description": "The location to get the temperature for, in the format \\"City, Country\\""\n                }\n            },\n            "required": [\n                "location"\n            ]\n        }\n    }\n}\n\nHey, what\'s the temperature in Paris right now?<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n{"name": "get_current_temperature", "parameters": {"location": "Paris, France"}}<|eot_id|><|start_header_id|>ipython<|end_header_id|>\n\n"22.0"<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\nIt\'s 22 degrees in Paris right now.<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nThanks! And in London?<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n',
      expectedFrom:
        "Python: jinja2 3.1.6 ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, loopcontrols) with transformers' tojson, raise_exception and strftime_now, as apply_chat_template renders it (render.py, not kept in the repo); the tool-only turn's content is \"\" (how the server reads OpenAI's null), its arguments an object",
    },
  ],
} satisfies CorpusTemplate;

// mistralai/Mistral-7B-Instruct-v0.3: [AVAILABLE_TOOLS] before the last user turn, calls as a
// [TOOL_CALLS] JSON list with their ids, results as [TOOL_RESULTS] with the call id.
import type { CorpusTemplate } from "./types.ts";

const HF_JS = "https://github.com/huggingface/huggingface.js/blob/main/packages/jinja/test/" +
  "e2e.test.js";

const LOCATION = {
  type: "string",
  description: 'The location to get the temperature for, in the format "City, Country"',
};

export default {
  model: "mistralai/Mistral-7B-Instruct-v0.3",
  family: "Mistral",
  source: `${HF_JS} (TEST_CUSTOM_TEMPLATES["mistralai/Mistral-7B-Instruct-v0.3 (JSON Schema)"]), ` +
    "the template of https://huggingface.co/mistralai/Mistral-7B-Instruct-v0.3",
  template:
    "{{- bos_token }}\n{%- set user_messages = messages | selectattr('role', 'equalto', 'user') | list %}\n{%- for message in messages %}\n    {%- if message['role'] == 'user' %}\n        {%- if tools and (message == user_messages[-1]) %}\n            {{- ' [AVAILABLE_TOOLS] [' }}\n            {%- for tool in tools %}\n\t\t{%- set tool = tool.function %}\n\t\t{{- '{\"type\": \"function\", \"function\": {' }}\n\t\t{%- for key, val in tool|items if key != \"return\" %}\n\t\t    {%- if val is string %}\n\t\t\t{{- '\"' + key + '\": \"' + val + '\"' }}\n\t\t    {%- else %}\n\t\t\t{{- '\"' + key + '\": ' + val|tojson }}\n\t\t    {%- endif %}\n\t\t    {%- if not loop.last %}\n\t\t\t{{- \", \" }}\n\t\t    {%- endif %}\n\t\t{%- endfor %}\n\t\t{{- \"}}\" }}\n                {%- if not loop.last %}\n                    {{- \", \" }}\n                {%- else %}\n                    {{- \"]\" }}\n                {%- endif %}\n            {%- endfor %}\n            {{- ' [/AVAILABLE_TOOLS]' }}\n            {%- endif %}\n        {{- ' [INST] ' + message['content'] + ' [/INST]' }}\n    {%- elif message['role'] == 'assistant' %}\n        {%- if message.tool_calls is defined and message.tool_calls|length > 0 %}\n            {{- ' [TOOL_CALLS] [' }}\n            {%- for tool_call in message.tool_calls %}\n                {{- {\"name\": tool_call.function.name, \"arguments\": tool_call.function.arguments, \"id\": tool_call.id}|tojson }}\n                {%- if not loop.last %}\n                    {{- \", \" }}\n                {%- endif %}\n            {%- endfor %}\n            {{- '] ' }}\n            {{- eos_token }}\n    \t{%- elif message.content is defined %}\n\t    {{- ' ' + message.content + ' ' + eos_token}}\n        {%- endif %}\n    {%- elif message['role'] == 'tool' %}\n        {{- ' [TOOL_RESULTS] ' }}\n        {{- '{\"call_id\": \"' + message.tool_call_id + '\", \"content\": ' + message.content|string + '}' }}\n        {{- ' [/TOOL_RESULTS] ' }}\n    {%- endif %}\n{%- endfor %}\n",
  bosToken: "<s>",
  eosToken: "</s>",
  cases: [
    {
      name: "tool round trip: tools before the user turn, call with its 9-character id, result",
      messages: [
        {
          role: "system",
          content:
            "You are a bot that responds to weather queries. You should reply with the unit used in the queried location.",
        },
        { role: "user", content: "Hey, what's the temperature in Paris right now?" },
        {
          role: "assistant",
          content: "",
          toolCalls: [{
            id: "abcdef123",
            name: "get_current_temperature",
            arguments: '{"location": "Paris, France", "unit": "celsius"}',
          }],
        },
        {
          role: "tool",
          toolCallId: "abcdef123",
          name: "get_current_temperature",
          content: "22.0",
        },
      ],
      tools: [
        {
          name: "get_current_temperature",
          description: "Get the current temperature at a location.",
          parameters: {
            type: "object",
            properties: {
              location: LOCATION,
              unit: {
                type: "string",
                enum: ["celsius", "fahrenheit"],
                description: "The unit to return the temperature in.",
              },
            },
            required: ["location", "unit"],
          },
          return: {
            type: "number",
            description:
              "The current temperature at the specified location in the specified units, as a float.",
          },
        },
        {
          name: "get_current_wind_speed",
          description: "Get the current wind speed in km/h at a given location.",
          parameters: {
            type: "object",
            properties: { location: LOCATION },
            required: ["location"],
          },
          return: {
            type: "number",
            description: "The current wind speed at the given location in km/h, as a float.",
          },
        },
      ],
      addGenerationPrompt: false,
      expected:
        '<s> [AVAILABLE_TOOLS] [{"type": "function", "function": {"name": "get_current_temperature", "description": "Get the current temperature at a location.", "parameters": {"type": "object", "properties": {"location": {"type": "string", "description": "The location to get the temperature for, in the format \\"City, Country\\""}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"], "description": "The unit to return the temperature in."}}, "required": ["location", "unit"]}}}, {"type": "function", "function": {"name": "get_current_wind_speed", "description": "Get the current wind speed in km/h at a given location.", "parameters": {"type": "object", "properties": {"location": {"type": "string", "description": "The location to get the temperature for, in the format \\"City, Country\\""}}, "required": ["location"]}}}] [/AVAILABLE_TOOLS] [INST] Hey, what\'s the temperature in Paris right now? [/INST] [TOOL_CALLS] [{"name": "get_current_temperature", "arguments": {"location": "Paris, France", "unit": "celsius"}, "id": "abcdef123"}] </s> [TOOL_RESULTS] {"call_id": "abcdef123", "content": 22.0} [/TOOL_RESULTS] ',
      expectedFrom:
        `${HF_JS} (target of "mistralai/Mistral-7B-Instruct-v0.3 (JSON Schema)"); the system ` +
        "message is dropped by the template itself",
    },
    {
      name: "plain chat: [INST] turns, answers closed with </s>",
      messages: [
        { role: "user", content: "Hello, how are you?" },
        { role: "assistant", content: "I'm doing great. How can I help you today?" },
        { role: "user", content: "I'd like to show off how chat templating works!" },
      ],
      addGenerationPrompt: true,
      expected:
        "<s> [INST] Hello, how are you? [/INST] I'm doing great. How can I help you today? </s> [INST] I'd like to show off how chat templating works! [/INST]",
      expectedFrom: "by hand from the template: no tools, so no [AVAILABLE_TOOLS]; an assistant " +
        "turn without tool calls is ' ' + content + ' ' + eos_token; no generation prompt",
    },
  ],
} satisfies CorpusTemplate;

// Qwen/Qwen2.5-7B-Instruct (the Qwen2.5 instruct models share this template): Hermes-style tools
// in the system turn, <tool_call> blocks, consecutive tool results merged into one user turn.
import type { CorpusTemplate } from "./types.ts";

const HF_JS = "https://github.com/huggingface/huggingface.js/blob/main/packages/jinja/test/" +
  "e2e.test.js";

const SYSTEM = "You are Qwen, created by Alibaba Cloud. You are a helpful assistant.\n\n" +
  "Current Date: 2024-09-30";

const TOOLS = [
  {
    name: "get_current_temperature",
    description: "Get current temperature at a location.",
    parameters: {
      type: "object",
      properties: {
        location: {
          type: "string",
          description:
            'The location to get the temperature for, in the format "City, State, Country".',
        },
        unit: {
          type: "string",
          enum: ["celsius", "fahrenheit"],
          description: 'The unit to return the temperature in. Defaults to "celsius".',
        },
      },
      required: ["location"],
    },
  },
  {
    name: "get_temperature_date",
    description: "Get temperature at a location and date.",
    parameters: {
      type: "object",
      properties: {
        location: {
          type: "string",
          description:
            'The location to get the temperature for, in the format "City, State, Country".',
        },
        date: {
          type: "string",
          description: 'The date to get the temperature for, in the format "Year-Month-Day".',
        },
        unit: {
          type: "string",
          enum: ["celsius", "fahrenheit"],
          description: 'The unit to return the temperature in. Defaults to "celsius".',
        },
      },
      required: ["location", "date"],
    },
  },
];

// From the Qwen function calling guide (qwen.readthedocs.io/en/latest/framework/function_call.html)
// as huggingface.js adapted it; the call ids are ours (the template does not write them).
const ROUND_TRIP = [
  { role: "system" as const, content: SYSTEM },
  {
    role: "user" as const,
    content: "What's the temperature in San Francisco now? How about tomorrow?",
  },
  {
    role: "assistant" as const,
    content: "",
    toolCalls: [
      {
        id: "call_1",
        name: "get_current_temperature",
        arguments: '{"location": "San Francisco, CA, USA"}',
      },
      {
        id: "call_2",
        name: "get_temperature_date",
        arguments: '{"location": "San Francisco, CA, USA", "date": "2024-10-01"}',
      },
    ],
  },
  {
    role: "tool" as const,
    name: "get_current_temperature",
    toolCallId: "call_1",
    content: '{"temperature": 26.1, "location": "San Francisco, CA, USA", "unit": "celsius"}',
  },
  {
    role: "tool" as const,
    name: "get_temperature_date",
    toolCallId: "call_2",
    content:
      '{"temperature": 25.9, "location": "San Francisco, CA, USA", "date": "2024-10-01", "unit": "celsius"}',
  },
];

const ROUND_TRIP_TEXT =
  '<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.\n\nCurrent Date: 2024-09-30\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>\n{"type": "function", "function": {"name": "get_current_temperature", "description": "Get current temperature at a location.", "parameters": {"type": "object", "properties": {"location": {"type": "string", "description": "The location to get the temperature for, in the format \\"City, State, Country\\"."}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"], "description": "The unit to return the temperature in. Defaults to \\"celsius\\"."}}, "required": ["location"]}}}\n{"type": "function", "function": {"name": "get_temperature_date", "description": "Get temperature at a location and date.", "parameters": {"type": "object", "properties": {"location": {"type": "string", "description": "The location to get the temperature for, in the format \\"City, State, Country\\"."}, "date": {"type": "string", "description": "The date to get the temperature for, in the format \\"Year-Month-Day\\"."}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"], "description": "The unit to return the temperature in. Defaults to \\"celsius\\"."}}, "required": ["location", "date"]}}}\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call><|im_end|>\n<|im_start|>user\nWhat\'s the temperature in San Francisco now? How about tomorrow?<|im_end|>\n<|im_start|>assistant\n<tool_call>\n{"name": "get_current_temperature", "arguments": {"location": "San Francisco, CA, USA"}}\n</tool_call>\n<tool_call>\n{"name": "get_temperature_date", "arguments": {"location": "San Francisco, CA, USA", "date": "2024-10-01"}}\n</tool_call><|im_end|>\n<|im_start|>user\n<tool_response>\n{"temperature": 26.1, "location": "San Francisco, CA, USA", "unit": "celsius"}\n</tool_response>\n<tool_response>\n{"temperature": 25.9, "location": "San Francisco, CA, USA", "date": "2024-10-01", "unit": "celsius"}\n</tool_response><|im_end|>\n';

export default {
  model: "Qwen/Qwen2.5-7B-Instruct",
  family: "Qwen",
  source: `${HF_JS} (TEST_CUSTOM_TEMPLATES["Qwen/Qwen2.5-7B-Instruct"]), the template of ` +
    "https://huggingface.co/Qwen/Qwen2.5-7B-Instruct/blob/main/tokenizer_config.json",
  template:
    "{%- if tools %}\n    {{- '<|im_start|>system\\n' }}\n    {%- if messages[0]['role'] == 'system' %}\n        {{- messages[0]['content'] }}\n    {%- else %}\n        {{- 'You are Qwen, created by Alibaba Cloud. You are a helpful assistant.' }}\n    {%- endif %}\n    {{- \"\\n\\n# Tools\\n\\nYou may call one or more functions to assist with the user query.\\n\\nYou are provided with function signatures within <tools></tools> XML tags:\\n<tools>\" }}\n    {%- for tool in tools %}\n        {{- \"\\n\" }}\n        {{- tool | tojson }}\n    {%- endfor %}\n    {{- \"\\n</tools>\\n\\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\\n<tool_call>\\n{\\\"name\\\": <function-name>, \\\"arguments\\\": <args-json-object>}\\n</tool_call><|im_end|>\\n\" }}\n{%- else %}\n    {%- if messages[0]['role'] == 'system' %}\n        {{- '<|im_start|>system\\n' + messages[0]['content'] + '<|im_end|>\\n' }}\n    {%- else %}\n        {{- '<|im_start|>system\\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\\n' }}\n    {%- endif %}\n{%- endif %}\n{%- for message in messages %}\n    {%- if (message.role == \"user\") or (message.role == \"system\" and not loop.first) or (message.role == \"assistant\" and not message.tool_calls) %}\n        {{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>' + '\\n' }}\n    {%- elif message.role == \"assistant\" %}\n        {{- '<|im_start|>' + message.role }}\n        {%- if message.content %}\n            {{- '\\n' + message.content }}\n        {%- endif %}\n        {%- for tool_call in message.tool_calls %}\n            {%- if tool_call.function is defined %}\n                {%- set tool_call = tool_call.function %}\n            {%- endif %}\n            {{- '\\n<tool_call>\\n{\"name\": \"' }}\n            {{- tool_call.name }}\n            {{- '\", \"arguments\": ' }}\n            {{- tool_call.arguments | tojson }}\n            {{- '}\\n</tool_call>' }}\n        {%- endfor %}\n        {{- '<|im_end|>\\n' }}\n    {%- elif message.role == \"tool\" %}\n        {%- if (loop.index0 == 0) or (messages[loop.index0 - 1].role != \"tool\") %}\n            {{- '<|im_start|>user' }}\n        {%- endif %}\n        {{- '\\n<tool_response>\\n' }}\n        {{- message.content }}\n        {{- '\\n</tool_response>' }}\n        {%- if loop.last or (messages[loop.index0 + 1].role != \"tool\") %}\n            {{- '<|im_end|>\\n' }}\n        {%- endif %}\n    {%- endif %}\n{%- endfor %}\n{%- if add_generation_prompt %}\n    {{- '<|im_start|>assistant\\n' }}\n{%- endif %}\n",
  bosToken: null,
  eosToken: "<|im_end|>",
  cases: [
    {
      name: "tool round trip: two calls in one turn, their results merged into one user turn",
      messages: ROUND_TRIP,
      tools: TOOLS,
      addGenerationPrompt: false,
      expected: ROUND_TRIP_TEXT,
      expectedFrom: `${HF_JS} (target of "Qwen/Qwen2.5-7B-Instruct")`,
    },
    {
      name: "tool round trip, then the assistant's next turn is prompted",
      messages: ROUND_TRIP,
      tools: TOOLS,
      addGenerationPrompt: true,
      expected: ROUND_TRIP_TEXT + "<|im_start|>assistant\n",
      expectedFrom: "the case above plus the template's generation prompt (by hand)",
    },
    {
      name: "plain chat gets the default system prompt",
      messages: [
        { role: "user", content: "Hello, how are you?" },
        { role: "assistant", content: "I'm doing great. How can I help you today?" },
        { role: "user", content: "I'd like to show off how chat templating works!" },
      ],
      addGenerationPrompt: false,
      expected:
        "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n<|im_start|>user\nHello, how are you?<|im_end|>\n<|im_start|>assistant\nI'm doing great. How can I help you today?<|im_end|>\n<|im_start|>user\nI'd like to show off how chat templating works!<|im_end|>\n",
      expectedFrom:
        "https://github.com/huggingface/swift-jinja Tests/Templates/ChatTemplateTests.swift " +
        '("Qwen Qwen2.5-0.5B-Instruct", the same template)',
    },
  ],
} satisfies CorpusTemplate;

// Qwen/Qwen3-0.6B (the Qwen3 template): no default system prompt, <think> handling, and
// `enable_thinking=false` closing an empty think block in the generation prompt.
import type { CorpusTemplate } from "./types.ts";

const HF_JS = "https://github.com/huggingface/huggingface.js/blob/main/packages/jinja/test/" +
  "e2e.test.js";

const INTRO = [
  { role: "user" as const, content: "Give me a short introduction to large language model." },
];
const INTRO_TEXT =
  "<|im_start|>user\nGive me a short introduction to large language model.<|im_end|>\n<|im_start|>assistant\n";

export default {
  model: "Qwen/Qwen3-0.6B",
  family: "Qwen",
  source: `${HF_JS} (TEST_CUSTOM_TEMPLATES["Qwen/Qwen3-0.6B"]), the template of ` +
    "https://huggingface.co/Qwen/Qwen3-0.6B/blob/main/tokenizer_config.json",
  template:
    "{%- if tools %}\n    {{- '<|im_start|>system\\n' }}\n    {%- if messages[0].role == 'system' %}\n        {{- messages[0].content + '\\n\\n' }}\n    {%- endif %}\n    {{- \"# Tools\\n\\nYou may call one or more functions to assist with the user query.\\n\\nYou are provided with function signatures within <tools></tools> XML tags:\\n<tools>\" }}\n    {%- for tool in tools %}\n        {{- \"\\n\" }}\n        {{- tool | tojson }}\n    {%- endfor %}\n    {{- \"\\n</tools>\\n\\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\\n<tool_call>\\n{\\\"name\\\": <function-name>, \\\"arguments\\\": <args-json-object>}\\n</tool_call><|im_end|>\\n\" }}\n{%- else %}\n    {%- if messages[0].role == 'system' %}\n        {{- '<|im_start|>system\\n' + messages[0].content + '<|im_end|>\\n' }}\n    {%- endif %}\n{%- endif %}\n{%- set ns = namespace(multi_step_tool=true, last_query_index=messages|length - 1) %}\n{%- for message in messages[::-1] %}\n    {%- set index = (messages|length - 1) - loop.index0 %}\n    {%- if ns.multi_step_tool and message.role == \"user\" and not(message.content.startswith('<tool_response>') and message.content.endswith('</tool_response>')) %}\n        {%- set ns.multi_step_tool = false %}\n        {%- set ns.last_query_index = index %}\n    {%- endif %}\n{%- endfor %}\n{%- for message in messages %}\n    {%- if (message.role == \"user\") or (message.role == \"system\" and not loop.first) %}\n        {{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>' + '\\n' }}\n    {%- elif message.role == \"assistant\" %}\n        {%- set content = message.content %}\n        {%- set reasoning_content = '' %}\n        {%- if message.reasoning_content is defined and message.reasoning_content is not none %}\n            {%- set reasoning_content = message.reasoning_content %}\n        {%- else %}\n            {%- if '</think>' in message.content %}\n                {%- set content = message.content.split('</think>')[-1].lstrip('\\n') %}\n                {%- set reasoning_content = message.content.split('</think>')[0].rstrip('\\n').split('<think>')[-1].lstrip('\\n') %}\n            {%- endif %}\n        {%- endif %}\n        {%- if loop.index0 > ns.last_query_index %}\n            {%- if loop.last or (not loop.last and reasoning_content) %}\n                {{- '<|im_start|>' + message.role + '\\n<think>\\n' + reasoning_content.strip('\\n') + '\\n</think>\\n\\n' + content.lstrip('\\n') }}\n            {%- else %}\n                {{- '<|im_start|>' + message.role + '\\n' + content }}\n            {%- endif %}\n        {%- else %}\n            {{- '<|im_start|>' + message.role + '\\n' + content }}\n        {%- endif %}\n        {%- if message.tool_calls %}\n            {%- for tool_call in message.tool_calls %}\n                {%- if (loop.first and content) or (not loop.first) %}\n                    {{- '\\n' }}\n                {%- endif %}\n                {%- if tool_call.function %}\n                    {%- set tool_call = tool_call.function %}\n                {%- endif %}\n                {{- '<tool_call>\\n{\"name\": \"' }}\n                {{- tool_call.name }}\n                {{- '\", \"arguments\": ' }}\n                {%- if tool_call.arguments is string %}\n                    {{- tool_call.arguments }}\n                {%- else %}\n                    {{- tool_call.arguments | tojson }}\n                {%- endif %}\n                {{- '}\\n</tool_call>' }}\n            {%- endfor %}\n        {%- endif %}\n        {{- '<|im_end|>\\n' }}\n    {%- elif message.role == \"tool\" %}\n        {%- if loop.first or (messages[loop.index0 - 1].role != \"tool\") %}\n            {{- '<|im_start|>user' }}\n        {%- endif %}\n        {{- '\\n<tool_response>\\n' }}\n        {{- message.content }}\n        {{- '\\n</tool_response>' }}\n        {%- if loop.last or (messages[loop.index0 + 1].role != \"tool\") %}\n            {{- '<|im_end|>\\n' }}\n        {%- endif %}\n    {%- endif %}\n{%- endfor %}\n{%- if add_generation_prompt %}\n    {{- '<|im_start|>assistant\\n' }}\n    {%- if enable_thinking is defined and enable_thinking is false %}\n        {{- '<think>\\n\\n</think>\\n\\n' }}\n    {%- endif %}\n{%- endif %}",
  bosToken: null,
  eosToken: "<|im_end|>",
  cases: [
    {
      name: "enable_thinking=true leaves the think block to the model",
      messages: INTRO,
      kwargs: { enable_thinking: true },
      addGenerationPrompt: true,
      expected: INTRO_TEXT,
      expectedFrom: `${HF_JS} (target of "Qwen/Qwen3-0.6B")`,
    },
    {
      name: "enable_thinking=false writes an empty think block",
      messages: INTRO,
      kwargs: { enable_thinking: false },
      addGenerationPrompt: true,
      expected: INTRO_TEXT + "<think>\n\n</think>\n\n",
      expectedFrom: "the case above plus the template's enable_thinking-is-false branch (by hand)",
    },
    {
      name: "tool round trip: <tool_call> after an empty answer, the result as a user turn",
      messages: [
        { role: "user", content: "What's the weather in Paris?" },
        {
          role: "assistant",
          content: "",
          toolCalls: [{ id: "call_1", name: "get_weather", arguments: '{"city": "Paris"}' }],
        },
        { role: "tool", toolCallId: "call_1", name: "get_weather", content: '{"celsius": 22}' },
      ],
      tools: [{
        name: "get_weather",
        description: "Get the weather.",
        parameters: {
          type: "object",
          properties: { city: { type: "string" } },
          required: ["city"],
        },
      }],
      addGenerationPrompt: true,
      expected:
        "<|im_start|>system\n# Tools\n\nYou may call one or more functions to assist with " +
        "the user query.\n\nYou are provided with function signatures within <tools></tools> " +
        'XML tags:\n<tools>\n{"type": "function", "function": {"name": "get_weather", ' +
        '"description": "Get the weather.", "parameters": {"type": "object", "properties": ' +
        '{"city": {"type": "string"}}, "required": ["city"]}}}\n</tools>\n\nFor each function ' +
        "call, return a json object with function name and arguments within " +
        "<tool_call></tool_call> XML tags:\n<tool_call>\n" +
        '{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call><|im_end|>\n' +
        "<|im_start|>user\nWhat's the weather in Paris?<|im_end|>\n" +
        '<|im_start|>assistant\n<tool_call>\n{"name": "get_weather", "arguments": ' +
        '{"city": "Paris"}}\n</tool_call><|im_end|>\n' +
        '<|im_start|>user\n<tool_response>\n{"celsius": 22}\n</tool_response><|im_end|>\n' +
        "<|im_start|>assistant\n",
      expectedFrom: "by hand from the template: no system message, so the tools block alone; " +
        "the call's turn follows the last query but is neither last nor has reasoning, so no " +
        "think block; " +
        "empty content, so no newline before <tool_call>; arguments are an object, so | tojson",
    },
  ],
} satisfies CorpusTemplate;

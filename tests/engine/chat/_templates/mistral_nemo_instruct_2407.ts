// mistralai/Mistral-Nemo-Instruct-2407: [INST] turns without spaces, the system message folded
// into the last user turn, tool calls and results that must carry 9-character ids.
import type { CorpusTemplate } from "./types.ts";

const HF_JS = "https://github.com/huggingface/huggingface.js/blob/main/packages/jinja/test/" +
  "e2e.test.js";

export default {
  model: "mistralai/Mistral-Nemo-Instruct-2407",
  family: "Mistral",
  source:
    `${HF_JS} (TEST_CUSTOM_TEMPLATES["mistralai/Mistral-Nemo-Instruct-2407"]), the template ` +
    "of https://huggingface.co/mistralai/Mistral-Nemo-Instruct-2407",
  template:
    `{%- if messages[0]["role"] == "system" %}\n    {%- set system_message = messages[0]["content"] %}\n    {%- set loop_messages = messages[1:] %}\n{%- else %}\n    {%- set loop_messages = messages %}\n{%- endif %}\n{%- if not tools is defined %}\n    {%- set tools = none %}\n{%- endif %}\n{%- set user_messages = loop_messages | selectattr("role", "equalto", "user") | list %}\n\n{%- for message in loop_messages | rejectattr("role", "equalto", "tool") | rejectattr("role", "equalto", "tool_results") | selectattr("tool_calls", "undefined") %}\n    {%- if (message["role"] == "user") != (loop.index0 % 2 == 0) %}\n        {{- raise_exception("After the optional system message, conversation roles must alternate user/assistant/user/assistant/...") }}\n    {%- endif %}\n{%- endfor %}\n\n{{- bos_token }}\n{%- for message in loop_messages %}\n    {%- if message["role"] == "user" %}\n        {%- if tools is not none and (message == user_messages[-1]) %}\n            {{- "[AVAILABLE_TOOLS][" }}\n            {%- for tool in tools %}\n        {%- set tool = tool.function %}\n        {{- '{"type": "function", "function": {' }}\n        {%- for key, val in tool.items() if key != "return" %}\n            {%- if val is string %}\n            {{- '"' + key + '": "' + val + '"' }}\n            {%- else %}\n            {{- '"' + key + '": ' + val|tojson }}\n            {%- endif %}\n            {%- if not loop.last %}\n            {{- ", " }}\n            {%- endif %}\n        {%- endfor %}\n        {{- "}}" }}\n                {%- if not loop.last %}\n                    {{- ", " }}\n                {%- else %}\n                    {{- "]" }}\n                {%- endif %}\n            {%- endfor %}\n            {{- "[/AVAILABLE_TOOLS]" }}\n            {%- endif %}\n        {%- if loop.last and system_message is defined %}\n            {{- "[INST]" + system_message + "\\n\\n" + message["content"] + "[/INST]" }}\n        {%- else %}\n            {{- "[INST]" + message["content"] + "[/INST]" }}\n        {%- endif %}\n    {%- elif message["role"] == "tool_calls" or message.tool_calls is defined %}\n        {%- if message.tool_calls is defined %}\n            {%- set tool_calls = message.tool_calls %}\n        {%- else %}\n            {%- set tool_calls = message.content %}\n        {%- endif %}\n        {{- "[TOOL_CALLS][" }}\n        {%- for tool_call in tool_calls %}\n            {%- set out = tool_call.function|tojson %}\n            {{- out[:-1] }}\n            {%- if not tool_call.id is defined or tool_call.id|length != 9 %}\n                {{- raise_exception("Tool call IDs should be alphanumeric strings with length 9!") }}\n            {%- endif %}\n            {{- ', "id": "' + tool_call.id + '"}' }}\n            {%- if not loop.last %}\n                {{- ", " }}\n            {%- else %}\n                {{- "]" + eos_token }}\n            {%- endif %}\n        {%- endfor %}\n    {%- elif message["role"] == "assistant" %}\n        {{- message["content"] + eos_token}}\n    {%- elif message["role"] == "tool_results" or message["role"] == "tool" %}\n        {%- if message.content is defined and message.content.content is defined %}\n            {%- set content = message.content.content %}\n        {%- else %}\n            {%- set content = message.content %}\n        {%- endif %}\n        {{- '[TOOL_RESULTS]{"content": ' + content|string + ", " }}\n        {%- if not message.tool_call_id is defined or message.tool_call_id|length != 9 %}\n            {{- raise_exception("Tool call IDs should be alphanumeric strings with length 9!") }}\n        {%- endif %}\n        {{- '"call_id": "' + message.tool_call_id + '"}[/TOOL_RESULTS]' }}\n    {%- else %}\n        {{- raise_exception("Only user and assistant roles are supported, with the exception of an initial optional system message!") }}\n    {%- endif %}\n{%- endfor %}\n`,
  bosToken: "<s>",
  eosToken: "</s>",
  cases: [
    {
      name: "plain chat",
      messages: [
        { role: "user", content: "Hello, how are you?" },
        { role: "assistant", content: "I'm doing great. How can I help you today?" },
        { role: "user", content: "I'd like to show off how chat templating works!" },
      ],
      addGenerationPrompt: true,
      expected:
        "<s>[INST]Hello, how are you?[/INST]I'm doing great. How can I help you today?</s>[INST]I'd like to show off how chat templating works![/INST]",
      expectedFrom: `${HF_JS} (target of "mistralai/Mistral-Nemo-Instruct-2407")`,
    },
    {
      name: "tool round trip with 9-character ids; the system text joins only a final user turn",
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "What's the weather in Paris?" },
        {
          role: "assistant",
          content: "",
          toolCalls: [{ id: "abc123XYZ", name: "get_weather", arguments: '{"city": "Paris"}' }],
        },
        { role: "tool", toolCallId: "abc123XYZ", name: "get_weather", content: "22" },
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
      expected: '<s>[AVAILABLE_TOOLS][{"type": "function", "function": {"name": "get_weather", ' +
        '"description": "Get the weather.", "parameters": {"type": "object", "properties": ' +
        '{"city": {"type": "string"}}, "required": ["city"]}}}][/AVAILABLE_TOOLS]' +
        "[INST]What's the weather in Paris?[/INST]" +
        '[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Paris"}, "id": "abc123XYZ"}]' +
        '</s>[TOOL_RESULTS]{"content": 22, "call_id": "abc123XYZ"}[/TOOL_RESULTS]',
      expectedFrom: "by hand from the template: the user turn is both the last user message and " +
        "(as loop_messages' first) not loop.last, so no system text; call = function|tojson " +
        "without its '}' + id; no generation prompt",
    },
    {
      name: "a tool call id that is not 9 characters is refused",
      messages: [
        { role: "user", content: "What's the weather in Paris?" },
        {
          role: "assistant",
          content: "",
          toolCalls: [{ id: "call_1", name: "get_weather", arguments: '{"city": "Paris"}' }],
        },
      ],
      addGenerationPrompt: true,
      rejects: "Tool call IDs should be alphanumeric strings with length 9!",
      expectedFrom: "the template's raise_exception",
    },
  ],
} satisfies CorpusTemplate;

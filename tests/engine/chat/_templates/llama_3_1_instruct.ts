// meta-llama/Llama-3.1-8B-Instruct: tools as JSON in the first user turn, one call per assistant
// turn as {"name", "parameters"}, results in the ipython role (a string result is JSON-encoded:
// Jinja's `is iterable` holds for strings).
import type { CorpusTemplate } from "./types.ts";

const HF_JS = "https://github.com/huggingface/huggingface.js/blob/main/packages/jinja/test/" +
  "e2e.test.js";

const TEMPERATURE = {
  name: "get_current_temperature",
  description: "Get the current temperature at a location.",
  parameters: {
    type: "object",
    properties: {
      location: {
        type: "string",
        description: 'The location to get the temperature for, in the format "City, Country"',
      },
    },
    required: ["location"],
  },
  return: {
    type: "number",
    description:
      "The current temperature at the specified location in the specified units, as a float.",
  },
};

const SYSTEM = {
  role: "system" as const,
  content: "You are a bot that responds to weather queries.",
};
const USER = { role: "user" as const, content: "Hey, what's the temperature in Paris right now?" };

/** Everything up to the end of the first user turn (which carries the tools). */
const HEAD =
  `<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nEnvironment: ipython\nCutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\nYou are a bot that responds to weather queries.<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nGiven the following functions, please respond with a JSON for a function call with its proper arguments that best answers the given prompt.\n\nRespond in the format {"name": function name, "parameters": dictionary of argument name and its value}.Do not use variables.\n\n{\n    "type": "function",\n    "function": {\n        "name": "get_current_temperature",\n        "description": "Get the current temperature at a location.",\n        "parameters": {\n            "type": "object",\n            "properties": {\n                "location": {\n                    "type": "string",\n                    "description": "The location to get the temperature for, in the format \\"City, Country\\""\n                }\n            },\n            "required": [\n                "location"\n            ]\n        },\n        "return": {\n            "type": "number",\n            "description": "The current temperature at the specified location in the specified units, as a float."\n        }\n    }\n}\n\nHey, what's the temperature in Paris right now?<|eot_id|>`;

const ASSISTANT = "<|start_header_id|>assistant<|end_header_id|>\n\n";

export default {
  model: "meta-llama/Llama-3.1-8B-Instruct",
  family: "Llama",
  source: `${HF_JS} (TEST_CUSTOM_TEMPLATES["meta-llama/Llama-3.1-8B-Instruct"]), the template of ` +
    "https://huggingface.co/meta-llama/Llama-3.1-8B-Instruct/blob/main/tokenizer_config.json",
  template:
    `{{- bos_token }}\n{%- if custom_tools is defined %}\n    {%- set tools = custom_tools %}\n{%- endif %}\n{%- if not tools_in_user_message is defined %}\n    {%- set tools_in_user_message = true %}\n{%- endif %}\n{%- if not date_string is defined %}\n    {%- set date_string = "26 Jul 2024" %}\n{%- endif %}\n{%- if not tools is defined %}\n    {%- set tools = none %}\n{%- endif %}\n\n{#- This block extracts the system message, so we can slot it into the right place. #}\n{%- if messages[0]['role'] == 'system' %}\n    {%- set system_message = messages[0]['content']|trim %}\n    {%- set messages = messages[1:] %}\n{%- else %}\n    {%- set system_message = "" %}\n{%- endif %}\n\n{#- System message + builtin tools #}\n{{- "<|start_header_id|>system<|end_header_id|>\\n\\n" }}\n{%- if builtin_tools is defined or tools is not none %}\n    {{- "Environment: ipython\\n" }}\n{%- endif %}\n{%- if builtin_tools is defined %}\n    {{- "Tools: " + builtin_tools | reject('equalto', 'code_interpreter') | join(", ") + "\\n\\n"}}\n{%- endif %}\n{{- "Cutting Knowledge Date: December 2023\\n" }}\n{{- "Today Date: " + date_string + "\\n\\n" }}\n{%- if tools is not none and not tools_in_user_message %}\n    {{- "You have access to the following functions. To call a function, please respond with JSON for a function call." }}\n    {{- 'Respond in the format {"name": function name, "parameters": dictionary of argument name and its value}.' }}\n    {{- "Do not use variables.\\n\\n" }}\n    {%- for t in tools %}\n        {{- t | tojson(indent=4) }}\n        {{- "\\n\\n" }}\n    {%- endfor %}\n{%- endif %}\n{{- system_message }}\n{{- "<|eot_id|>" }}\n\n{#- Custom tools are passed in a user message with some extra guidance #}\n{%- if tools_in_user_message and not tools is none %}\n    {#- Extract the first user message so we can plug it in here #}\n    {%- if messages | length != 0 %}\n        {%- set first_user_message = messages[0]['content']|trim %}\n        {%- set messages = messages[1:] %}\n    {%- else %}\n        {{- raise_exception("Cannot put tools in the first user message when there's no first user message!") }}\n{%- endif %}\n    {{- '<|start_header_id|>user<|end_header_id|>\\n\\n' -}}\n    {{- "Given the following functions, please respond with a JSON for a function call " }}\n    {{- "with its proper arguments that best answers the given prompt.\\n\\n" }}\n    {{- 'Respond in the format {"name": function name, "parameters": dictionary of argument name and its value}.' }}\n    {{- "Do not use variables.\\n\\n" }}\n    {%- for t in tools %}\n        {{- t | tojson(indent=4) }}\n        {{- "\\n\\n" }}\n    {%- endfor %}\n    {{- first_user_message + "<|eot_id|>"}}\n{%- endif %}\n\n{%- for message in messages %}\n    {%- if not (message.role == 'ipython' or message.role == 'tool' or 'tool_calls' in message) %}\n        {{- '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n'+ message['content'] | trim + '<|eot_id|>' }}\n    {%- elif 'tool_calls' in message %}\n        {%- if not message.tool_calls|length == 1 %}\n            {{- raise_exception("This model only supports single tool-calls at once!") }}\n        {%- endif %}\n        {%- set tool_call = message.tool_calls[0].function %}\n        {%- if builtin_tools is defined and tool_call.name in builtin_tools %}\n            {{- '<|start_header_id|>assistant<|end_header_id|>\\n\\n' -}}\n            {{- "<|python_tag|>" + tool_call.name + ".call(" }}\n            {%- for arg_name, arg_val in tool_call.arguments | items %}\n                {{- arg_name + '="' + arg_val + '"' }}\n                {%- if not loop.last %}\n                    {{- ", " }}\n                {%- endif %}\n                {%- endfor %}\n            {{- ")" }}\n        {%- else  %}\n            {{- '<|start_header_id|>assistant<|end_header_id|>\\n\\n' -}}\n            {{- '{"name": "' + tool_call.name + '", ' }}\n            {{- '"parameters": ' }}\n            {{- tool_call.arguments | tojson }}\n            {{- "}" }}\n        {%- endif %}\n        {%- if builtin_tools is defined %}\n            {#- This means we're in ipython mode #}\n            {{- "<|eom_id|>" }}\n        {%- else %}\n            {{- "<|eot_id|>" }}\n        {%- endif %}\n    {%- elif message.role == "tool" or message.role == "ipython" %}\n        {{- "<|start_header_id|>ipython<|end_header_id|>\\n\\n" }}\n        {%- if message.content is mapping or message.content is iterable %}\n            {{- message.content | tojson }}\n        {%- else %}\n            {{- message.content }}\n        {%- endif %}\n        {{- "<|eot_id|>" }}\n    {%- endif %}\n{%- endfor %}\n{%- if add_generation_prompt %}\n    {{- '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}\n{%- endif %}\n`,
  bosToken: "<|begin_of_text|>",
  eosToken: "<|eot_id|>",
  cases: [
    {
      name: "tools go into the first user turn",
      messages: [SYSTEM, USER],
      tools: [TEMPERATURE],
      addGenerationPrompt: true,
      expected: HEAD + ASSISTANT,
      expectedFrom: `${HF_JS} (target of "meta-llama/Llama-3.1-8B-Instruct")`,
    },
    {
      name: "tool round trip: the call as JSON, its (string) result JSON-encoded under ipython",
      messages: [
        SYSTEM,
        USER,
        {
          role: "assistant",
          content: "",
          toolCalls: [{
            id: "call_1",
            name: "get_current_temperature",
            arguments: '{"location": "Paris, France"}',
          }],
        },
        { role: "tool", name: "get_current_temperature", toolCallId: "call_1", content: "22.0" },
      ],
      tools: [TEMPERATURE],
      addGenerationPrompt: true,
      expected: HEAD + ASSISTANT +
        '{"name": "get_current_temperature", "parameters": {"location": "Paris, France"}}' +
        "<|eot_id|><|start_header_id|>ipython<|end_header_id|>\n\n" + '"22.0"<|eot_id|>' +
        ASSISTANT,
      expectedFrom: "the case above, extended by hand from the template's tool_calls and tool " +
        "branches (no builtin_tools, so <|eot_id|>; a string is iterable, so | tojson)",
    },
    {
      name: "plain chat has the default system header and trims turns",
      messages: [
        { role: "user", content: "  Hello!  " },
        { role: "assistant", content: "Hi there." },
        { role: "user", content: "Tell me a joke." },
      ],
      addGenerationPrompt: true,
      expected: "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\n" +
        "Cutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\n<|eot_id|>" +
        "<|start_header_id|>user<|end_header_id|>\n\nHello!<|eot_id|>" +
        "<|start_header_id|>assistant<|end_header_id|>\n\nHi there.<|eot_id|>" +
        "<|start_header_id|>user<|end_header_id|>\n\nTell me a joke.<|eot_id|>" + ASSISTANT,
      expectedFrom: "by hand from the template: no tools (transformers passes tools=None), " +
        "empty system message, each turn | trim",
    },
  ],
} satisfies CorpusTemplate;

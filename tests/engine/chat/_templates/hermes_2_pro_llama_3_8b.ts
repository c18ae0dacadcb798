// NousResearch/Hermes-2-Pro-Llama-3-8B (tool_use template): tools described in a leading system
// text, calls and results in <tool_call> / <tool_response> blocks of ChatML turns.
import type { CorpusTemplate } from "./types.ts";

const HF_JS = "https://github.com/huggingface/huggingface.js/blob/main/packages/jinja/test/" +
  "e2e.test.js";

const TOOL = {
  name: "get_stock_fundamentals",
  description: "Get fundamental data for a given stock symbol using yfinance API.",
  parameters: {
    type: "object",
    properties: { symbol: { type: "string", description: "The stock symbol." } },
    required: ["symbol"],
  },
  return: {
    type: "object",
    description:
      "A dictionary containing fundamental data.\n\nKeys:\n    - 'symbol': The stock symbol.\n    - 'company_name': The long name of the company.\n    - 'sector': The sector to which the company belongs.\n    - 'industry': The industry to which the company belongs.\n    - 'market_cap': The market capitalization of the company.\n    - 'pe_ratio': The forward price-to-earnings ratio.\n    - 'pb_ratio': The price-to-book ratio.\n    - 'dividend_yield': The dividend yield.\n    - 'eps': The trailing earnings per share.\n    - 'beta': The beta value of the stock.\n    - '52_week_high': The 52-week high price of the stock.\n    - '52_week_low': The 52-week low price of the stock.",
  },
};

const USER = {
  role: "user" as const,
  content: "Fetch the stock fundamentals data for Tesla (TSLA)",
};

/** The tool preamble and the user turn. */
const HEAD =
  `<|begin_of_text|>You are a function calling AI model. You are provided with function signatures within <tools></tools> XML tags. You may call one or more functions to assist with the user query. Don't make assumptions about what values to plug into functions. Here are the available tools: <tools> {"type": "function", "function": {"name": get_stock_fundamentals", "description": "get_stock_fundamentals(symbol: str) -> dict - Get fundamental data for a given stock symbol using yfinance API.\n\n    Args:\n        symbol(str): The stock symbol.\n    Returns:\n        A dictionary containing fundamental data.\n\nKeys:\n    - 'symbol': The stock symbol.\n    - 'company_name': The long name of the company.\n    - 'sector': The sector to which the company belongs.\n    - 'industry': The industry to which the company belongs.\n    - 'market_cap': The market capitalization of the company.\n    - 'pe_ratio': The forward price-to-earnings ratio.\n    - 'pb_ratio': The price-to-book ratio.\n    - 'dividend_yield': The dividend yield.\n    - 'eps': The trailing earnings per share.\n    - 'beta': The beta value of the stock.\n    - '52_week_high': The 52-week high price of the stock.\n    - '52_week_low': The 52-week low price of the stock.", "parameters": {"type": "object", "properties": {"symbol": {"type": "string", "description": "The stock symbol."}}, "required": ["symbol"]}} </tools>Use the following pydantic model json schema for each tool call you will make: {"properties": {"arguments": {"title": "Arguments", "type": "object"}, "name": {"title": "Name", "type": "string"}}, "required": ["arguments", "name"], "title": "FunctionCall", "type": "object"}\nFor each function call return a json object with function name and arguments within <tool_call></tool_call> XML tags as follows:\n<tool_call>\n{"arguments": <args-dict>, "name": <function-name>}\n</tool_call><|im_end|><|im_start|>user\nFetch the stock fundamentals data for Tesla (TSLA)<|im_end|>\n`;

export default {
  model: "NousResearch/Hermes-2-Pro-Llama-3-8B",
  family: "Hermes",
  source:
    `${HF_JS} (TEST_CUSTOM_TEMPLATES["NousResearch/Hermes-2-Pro-Llama-3-8B (JSON Schema)"]), ` +
    "the tool_use template of https://huggingface.co/NousResearch/Hermes-2-Pro-Llama-3-8B",
  template:
    `{%- macro json_to_python_type(json_spec) %}\n{%- set basic_type_map = {\n    "string": "str",\n    "number": "float",\n    "integer": "int",\n    "boolean": "bool"\n} %}\n\n{%- if basic_type_map[json_spec.type] is defined %}\n    {{- basic_type_map[json_spec.type] }}\n{%- elif json_spec.type == "array" %}\n    {{- "list[" +  json_to_python_type(json_spec|items) + "]"}}\n{%- elif json_spec.type == "object" %}\n    {%- if json_spec.additionalProperties is defined %}\n        {{- "dict[str, " + json_to_python_type(json_spec.additionalProperties) + ']'}}\n    {%- else %}\n        {{- "dict" }}\n    {%- endif %}\n{%- elif json_spec.type is iterable %}\n    {{- "Union[" }}\n    {%- for t in json_spec.type %}\n      {{- json_to_python_type({"type": t}) }}\n      {%- if not loop.last %}\n        {{- "," }} \n    {%- endif %}\n    {%- endfor %}\n    {{- "]" }}\n{%- else %}\n    {{- "Any" }}\n{%- endif %}\n{%- endmacro %}\n\n\n` +
    `{{- bos_token }}\n{{- "You are a function calling AI model. You are provided with function signatures within <tools></tools> XML tags. You may call one or more functions to assist with the user query. Don't make assumptions about what values to plug into functions. Here are the available tools: <tools> " }}\n{%- for tool in tools %}\n    {%- if tool.function is defined %}\n        {%- set tool = tool.function %}\n    {%- endif %}\n    {{- '{"type": "function", "function": ' }}\n    {{- '{"name": ' + tool.name + '", ' }}\n    {{- '"description": "' + tool.name + '(' }}\n    {%- for param_name, param_fields in tool.parameters.properties|items %}\n        {{- param_name + ": " + json_to_python_type(param_fields) }}\n        {%- if not loop.last %}\n            {{- ", " }}\n        {%- endif %}\n    {%- endfor %}\n    {{- ")" }}\n    {%- if tool.return is defined %}\n        {{- " -> " + json_to_python_type(tool.return) }}\n    {%- endif %}\n    {{- " - " + tool.description + "\\n\\n" }}\n    {%- for param_name, param_fields in tool.parameters.properties|items %}\n        {%- if loop.first %}\n            {{- "    Args:\\n" }}\n        {%- endif %}\n        {{- "        " + param_name + "(" + json_to_python_type(param_fields) + "): " + param_fields.description|trim }}\n    {%- endfor %}\n    {%- if tool.return is defined and tool.return.description is defined %}\n        {{- "\\n    Returns:\\n        " + tool.return.description }}\n    {%- endif %}\n    {{- '"' }}\n    {{- ', "parameters": ' }}\n    {%- if tool.parameters.properties | length == 0 %}\n        {{- "{}" }}\n    {%- else %}\n        {{- tool.parameters | tojson}}\n    {%- endif %}\n    {{- "}" }}\n    {%- if not loop.last %}\n        {{- "\\n" }}\n    {%- endif %}\n{%- endfor %}\n{{- " </tools>" }}\n` +
    `{{- 'Use the following pydantic model json schema for each tool call you will make: {"properties": {"arguments": {"title": "Arguments", "type": "object"}, "name": {"title": "Name", "type": "string"}}, "required": ["arguments", "name"], "title": "FunctionCall", "type": "object"}\n' }}\n{{- "For each function call return a json object with function name and arguments within <tool_call></tool_call> XML tags as follows:\n" }}\n{{- "<tool_call>\n" }}\n{{- '{"arguments": <args-dict>, "name": <function-name>}\n' }}\n{{- '</tool_call><|im_end|>' }}\n{%- for message in messages %}\n    {%- if message.role == "user" or message.role == "system" or (message.role == "assistant" and message.tool_calls is not defined) %}\n        ` +
    `{{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>' + '\\n' }}\n    {%- elif message.role == "assistant" %}\n        {{- '<|im_start|>' + message.role + '\\n<tool_call>\\n' }}\n        {%- for tool_call in message.tool_calls %}\n            {%- if tool_call.function is defined %}\n                {%- set tool_call = tool_call.function %}\n            {%- endif %}\n            {{- '{ ' }}\n            {%- if tool_call.arguments is defined %}\n                {{- '"arguments": ' }}\n                {{- tool_call.arguments|tojson }}\n                {{- ', '}}\n            {%- endif %}\n            {{- '"name": "' }}\n            {{- tool_call.name }}\n            {{- '"}' }}\n            {{- '\\n</tool_call> ' }}\n        {%- endfor %}\n        {{- '<|im_end|>\\n' }}\n    {%- elif message.role == "tool" %}\n        {%- if not message.name is defined %}\n            {{- raise_exception("Tool response dicts require a 'name' key indicating the name of the called function!") }}\n        {%- endif %}\n        {{- '<|im_start|>' + message.role + '\\n<tool_response>\\n' }}\n        {{- '{"name": "' }}\n        {{- message.name }}\n        {{- '", "content": ' }}\n        {{- message.content|tojson + '}' }}\n        {{- '\\n</tool_response> <|im_end|>\\n' }} \n    {%- endif %}\n{%- endfor %}\n{%- if add_generation_prompt %}\n    {{- '<|im_start|>assistant\\n' }}\n{%- endif %}\n`,
  bosToken: "<|begin_of_text|>",
  eosToken: "<|im_end|>",
  cases: [
    {
      name: "tools with a return schema in the preamble",
      messages: [USER],
      tools: [TOOL],
      addGenerationPrompt: true,
      expected: HEAD + "<|im_start|>assistant\n",
      expectedFrom:
        `${HF_JS} (target of "NousResearch/Hermes-2-Pro-Llama-3-8B (JSON Schema)"; its ` +
        "eos_token <|im_end|> is the model's own)",
    },
    {
      name: "tool round trip: <tool_call>, named <tool_response>, final answer, next user turn",
      messages: [
        USER,
        {
          role: "assistant",
          content: "",
          toolCalls: [{
            id: "call_1",
            name: "get_stock_fundamentals",
            arguments: '{"symbol": "TSLA"}',
          }],
        },
        {
          role: "tool",
          name: "get_stock_fundamentals",
          toolCallId: "call_1",
          content: '{"symbol": "TSLA", "company_name": "Tesla, Inc."}',
        },
        { role: "assistant", content: "TSLA is Tesla, Inc." },
        { role: "user", content: "Thanks!" },
      ],
      tools: [TOOL],
      addGenerationPrompt: true,
      expected: HEAD +
        '<|im_start|>assistant\n<tool_call>\n{ "arguments": {"symbol": "TSLA"}, "name": ' +
        '"get_stock_fundamentals"}\n</tool_call> <|im_end|>\n' +
        '<|im_start|>tool\n<tool_response>\n{"name": "get_stock_fundamentals", "content": ' +
        '"{\\"symbol\\": \\"TSLA\\", \\"company_name\\": \\"Tesla, Inc.\\"}"}\n' +
        "</tool_response> <|im_end|>\n" +
        "<|im_start|>assistant\nTSLA is Tesla, Inc.<|im_end|>\n" +
        "<|im_start|>user\nThanks!<|im_end|>\n<|im_start|>assistant\n",
      expectedFrom: "the case above, extended by hand from the template's assistant (tool_calls " +
        "defined), tool (content | tojson) and plain-turn branches",
    },
    {
      name:
        "an OpenAI-shaped round trip: a parameter without description, a tool result without name",
      messages: [
        { role: "user", content: "Price of TSLA?" },
        {
          role: "assistant",
          content: "",
          toolCalls: [{ id: "call_1", name: "get_price", arguments: '{"symbol": "TSLA"}' }],
        },
        { role: "tool", toolCallId: "call_1", content: '{"price": 250}' },
      ],
      tools: [{
        name: "get_price",
        description: "Price now.",
        parameters: {
          type: "object",
          properties: { symbol: { type: "string" } },
          required: ["symbol"],
        },
      }],
      addGenerationPrompt: true,
      expected:
        '<|begin_of_text|>You are a function calling AI model. You are provided with function signatures within <tools></tools> XML tags. You may call one or more functions to assist with the user query. Don\'t make assumptions about what values to plug into functions. Here are the available tools: <tools> {"type": "function", "function": {"name": get_price", "description": "get_price(symbol: str) - Price now.\n\n    Args:\n        symbol(str): ", "parameters": {"type": "object", "properties": {"symbol": {"type": "string"}}, "required": ["symbol"]}} </tools>Use the following pydantic model json schema for each tool call you will make: {"properties": {"arguments": {"title": "Arguments", "type": "object"}, "name": {"title": "Name", "type": "string"}}, "required": ["arguments", "name"], "title": "FunctionCall", "type": "object"}\nFor each function call return a json object with function name and arguments within <tool_call></tool_call> XML tags as follows:\n<tool_call>\n{"arguments": <args-dict>, "name": <function-name>}\n</tool_call><|im_end|><|im_start|>user\nPrice of TSLA?<|im_end|>\n<|im_start|>assistant\n<tool_call>\n{ "arguments": {"symbol": "TSLA"}, "name": "get_price"}\n</tool_call> <|im_end|>\n<|im_start|>tool\n<tool_response>\n{"name": "get_price", "content": "{\\"price\\": 250}"}\n</tool_response> <|im_end|>\n<|im_start|>assistant\n',
      expectedFrom: "Python: jinja2 3.1.6 ImmutableSandboxedEnvironment(trim_blocks=True, " +
        "lstrip_blocks=True, loopcontrols) with transformers' tojson and raise_exception, the " +
        "tool message given the name of the call it answers (which the server fills in) and " +
        "`description|trim` of the undefined description rendering as ''",
    },
  ],
} satisfies CorpusTemplate;

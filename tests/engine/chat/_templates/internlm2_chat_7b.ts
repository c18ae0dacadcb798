// internlm/internlm2-chat-7b: ChatML with bos first and eos after a final assistant turn.
import type { CorpusTemplate } from "./types.ts";

const HF_JS = "https://github.com/huggingface/huggingface.js/blob/main/packages/jinja/test/" +
  "e2e.test.js";

const CHAT = [
  { role: "user" as const, content: "Hello, how are you?" },
  { role: "assistant" as const, content: "I'm doing great. How can I help you today?" },
  { role: "user" as const, content: "I'd like to show off how chat templating works!" },
];

export default {
  model: "internlm/internlm2-chat-7b",
  family: "InternLM",
  source: `${HF_JS} (TEST_CUSTOM_TEMPLATES["internlm/internlm2-chat-7b"])`,
  template:
    `{% if messages[0]['role'] == 'user' or messages[0]['role'] == 'system' %}{{ bos_token }}{% endif %}{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% elif messages[-1]['role'] == 'assistant' %}{{ eos_token }}{% endif %}`,
  bosToken: "<s>",
  eosToken: "</s>",
  cases: [
    {
      name: "plain chat",
      messages: CHAT,
      addGenerationPrompt: false,
      expected:
        `<s><|im_start|>user\nHello, how are you?<|im_end|>\n<|im_start|>assistant\nI'm doing great. How can I help you today?<|im_end|>\n<|im_start|>user\nI'd like to show off how chat templating works!<|im_end|>\n`,
      expectedFrom: `${HF_JS} (target of "internlm/internlm2-chat-7b")`,
    },
    {
      name: "a final assistant turn is closed with eos",
      messages: CHAT.slice(0, 2),
      addGenerationPrompt: false,
      expected:
        "<s><|im_start|>user\nHello, how are you?<|im_end|>\n<|im_start|>assistant\nI'm doing great. How can I help you today?<|im_end|>\n</s>",
      expectedFrom: "by hand from the template",
    },
  ],
} satisfies CorpusTemplate;

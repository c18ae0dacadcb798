// deepseek-ai/deepseek-llm-7b-chat: "User: " / "Assistant: " turns.
import type { CorpusTemplate } from "./types.ts";

const HF_JS = "https://github.com/huggingface/huggingface.js/blob/main/packages/jinja/test/" +
  "e2e.test.js";

export default {
  model: "deepseek-ai/deepseek-llm-7b-chat",
  family: "DeepSeek",
  source: `${HF_JS} (TEST_CUSTOM_TEMPLATES["deepseek-ai/deepseek-llm-7b-chat"])`,
  template:
    `{% if not add_generation_prompt is defined %}{% set add_generation_prompt = false %}{% endif %}{{ bos_token }}{% for message in messages %}{% if message['role'] == 'user' %}{{ 'User: ' + message['content'] + '\n\n' }}{% elif message['role'] == 'assistant' %}{{ 'Assistant: ' + message['content'] + eos_token }}{% elif message['role'] == 'system' %}{{ message['content'] + '\n\n' }}{% endif %}{% endfor %}{% if add_generation_prompt %}{{ 'Assistant:' }}{% endif %}`,
  bosToken: "<｜begin▁of▁sentence｜>",
  eosToken: "<｜end▁of▁sentence｜>",
  cases: [
    {
      name: "plain chat",
      messages: [
        { role: "user", content: "Hello, how are you?" },
        { role: "assistant", content: "I'm doing great. How can I help you today?" },
        { role: "user", content: "I'd like to show off how chat templating works!" },
      ],
      addGenerationPrompt: false,
      expected:
        `<｜begin▁of▁sentence｜>User: Hello, how are you?\n\nAssistant: I'm doing great. How can I help you today?<｜end▁of▁sentence｜>User: I'd like to show off how chat templating works!\n\n`,
      expectedFrom: `${HF_JS} (target of "deepseek-ai/deepseek-llm-7b-chat")`,
    },
    {
      name: "system text and the generation prompt",
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "Hello, how are you?" },
      ],
      addGenerationPrompt: true,
      expected: "<｜begin▁of▁sentence｜>Be brief.\n\nUser: Hello, how are you?\n\nAssistant:",
      expectedFrom: "by hand from the template",
    },
  ],
} satisfies CorpusTemplate;

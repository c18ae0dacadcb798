// mistralai/Mixtral-8x7B-Instruct-v0.1: [INST] turns that must alternate user/assistant, no system
// role.
import type { CorpusTemplate } from "./types.ts";

const HF_JS = "https://github.com/huggingface/huggingface.js/blob/main/packages/jinja/test/" +
  "e2e.test.js";

export default {
  model: "mistralai/Mixtral-8x7B-Instruct-v0.1",
  family: "Mistral",
  source: `${HF_JS} (TEST_CUSTOM_TEMPLATES["mistralai/Mixtral-8x7B-Instruct-v0.1"])`,
  template:
    `{{ bos_token }}{% for message in messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}{% if message['role'] == 'user' %}{{ '[INST] ' + message['content'] + ' [/INST]' }}{% elif message['role'] == 'assistant' %}{{ message['content'] + eos_token}}{% else %}{{ raise_exception('Only user and assistant roles are supported!') }}{% endif %}{% endfor %}`,
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
        `<s>[INST] Hello, how are you? [/INST]I'm doing great. How can I help you today?</s>[INST] I'd like to show off how chat templating works! [/INST]`,
      expectedFrom: `${HF_JS} (target of "mistralai/Mixtral-8x7B-Instruct-v0.1")`,
    },
    {
      name: "a system message is refused (roles must alternate)",
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "Hello, how are you?" },
      ],
      addGenerationPrompt: true,
      rejects: "Conversation roles must alternate user/assistant/user/assistant/...",
      expectedFrom: "the template's raise_exception",
    },
  ],
} satisfies CorpusTemplate;

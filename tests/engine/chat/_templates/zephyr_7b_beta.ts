// HuggingFaceH4/zephyr-7b-beta: <|system|>/<|user|>/<|assistant|> turns closed by eos, with
// newlines between the template's own lines (trim_blocks drops only those after block tags).
import type { CorpusTemplate } from "./types.ts";

const HF_JS = "https://github.com/huggingface/huggingface.js/blob/main/packages/jinja/test/" +
  "e2e.test.js";

export default {
  model: "HuggingFaceH4/zephyr-7b-beta",
  family: "Zephyr",
  source:
    `${HF_JS} (TEST_CUSTOM_TEMPLATES["HuggingFaceH4/zephyr-7b-beta (add_generation_prompt=…)"])`,
  template:
    `{% for message in messages %}\n{% if message['role'] == 'user' %}\n{{ '<|user|>\n' + message['content'] + eos_token }}\n{% elif message['role'] == 'system' %}\n{{ '<|system|>\n' + message['content'] + eos_token }}\n{% elif message['role'] == 'assistant' %}\n{{ '<|assistant|>\n'  + message['content'] + eos_token }}\n{% endif %}\n{% if loop.last and add_generation_prompt %}\n{{ '<|assistant|>' }}\n{% endif %}\n{% endfor %}`,
  bosToken: "<s>",
  eosToken: "</s>",
  cases: [
    {
      name: "without the generation prompt",
      messages: [
        {
          role: "system",
          content: "You are a friendly chatbot who always responds in the style of a pirate",
        },
        { role: "user", content: "Hello, how are you?" },
        { role: "assistant", content: "I'm doing great. How can I help you today?" },
        { role: "user", content: "I'd like to show off how chat templating works!" },
      ],
      addGenerationPrompt: false,
      expected:
        `<|system|>\nYou are a friendly chatbot who always responds in the style of a pirate</s>\n<|user|>\nHello, how are you?</s>\n<|assistant|>\nI'm doing great. How can I help you today?</s>\n<|user|>\nI'd like to show off how chat templating works!</s>\n`,
      expectedFrom:
        `${HF_JS} (target of "HuggingFaceH4/zephyr-7b-beta (add_generation_prompt=false)")`,
    },
    {
      name: "with the generation prompt",
      messages: [
        {
          role: "system",
          content: "You are a friendly chatbot who always responds in the style of a pirate",
        },
        { role: "user", content: "How many helicopters can a human eat in one sitting?" },
      ],
      addGenerationPrompt: true,
      expected:
        `<|system|>\nYou are a friendly chatbot who always responds in the style of a pirate</s>\n<|user|>\nHow many helicopters can a human eat in one sitting?</s>\n<|assistant|>\n`,
      expectedFrom:
        `${HF_JS} (target of "HuggingFaceH4/zephyr-7b-beta (add_generation_prompt=true)")`,
    },
  ],
} satisfies CorpusTemplate;

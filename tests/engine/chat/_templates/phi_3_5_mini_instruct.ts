// microsoft/Phi-3.5-mini-instruct: <|system|>/<|user|>/<|assistant|> turns closed by <|end|>, the
// eos token when no generation prompt follows.
import type { CorpusTemplate } from "./types.ts";

export default {
  model: "microsoft/Phi-3.5-mini-instruct",
  family: "Phi",
  source: "https://github.com/ggerganov/llama.cpp models/templates/" +
    "microsoft-Phi-3.5-mini-instruct.jinja (the chat_template of " +
    "https://huggingface.co/microsoft/Phi-3.5-mini-instruct)",
  template:
    "{% for message in messages %}{% if message['role'] == 'system' and message['content'] %}{{'<|system|>\n' + message['content'] + '<|end|>\n'}}{% elif message['role'] == 'user' %}{{'<|user|>\n' + message['content'] + '<|end|>\n'}}{% elif message['role'] == 'assistant' %}{{'<|assistant|>\n' + message['content'] + '<|end|>\n'}}{% endif %}{% endfor %}{% if add_generation_prompt %}{{ '<|assistant|>\n' }}{% else %}{{ eos_token }}{% endif %}",
  bosToken: "<s>",
  eosToken: "<|endoftext|>",
  cases: [
    {
      name: "system and user turns, then the generation prompt",
      messages: [
        { role: "system", content: "You are a helpful assistant." },
        { role: "user", content: "How to explain Internet for a medieval knight?" },
      ],
      addGenerationPrompt: true,
      expected: "<|system|>\nYou are a helpful assistant.<|end|>\n" +
        "<|user|>\nHow to explain Internet for a medieval knight?<|end|>\n<|assistant|>\n",
      expectedFrom: "by hand from the template",
    },
    {
      name: "an empty system message is left out; without a generation prompt, eos ends it",
      messages: [
        { role: "system", content: "" },
        { role: "user", content: "Hi" },
        { role: "assistant", content: "Hello!" },
      ],
      addGenerationPrompt: false,
      expected: "<|user|>\nHi<|end|>\n<|assistant|>\nHello!<|end|>\n<|endoftext|>",
      expectedFrom: "by hand from the template",
    },
  ],
} satisfies CorpusTemplate;

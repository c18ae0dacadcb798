// openchat/openchat-3.5-0106: 'GPT4 Correct <Role>:' turns (the role title-cased) closed by
// <|end_of_turn|>.
import type { CorpusTemplate } from "./types.ts";

export default {
  model: "openchat/openchat-3.5-0106",
  family: "OpenChat",
  source:
    'https://github.com/huggingface/huggingface.js/blob/main/packages/jinja/test/e2e.test.js (TEST_CUSTOM_TEMPLATES["openchat/openchat-3.5-0106"]), the chat_template of https://huggingface.co/openchat/openchat-3.5-0106',
  template:
    "{{ bos_token }}{% for message in messages %}{{ 'GPT4 Correct ' + message['role'].title() + ': ' + message['content'] + '<|end_of_turn|>'}}{% endfor %}{% if add_generation_prompt %}{{ 'GPT4 Correct Assistant:' }}{% endif %}",
  bosToken: "<s>",
  eosToken: "<|end_of_turn|>",
  cases: [
    {
      name: "plain chat, no generation prompt",
      messages: [{ "role": "user", "content": "Hello, how are you?" }, {
        "role": "assistant",
        "content": "I'm doing great. How can I help you today?",
      }, { "role": "user", "content": "I'd like to show off how chat templating works!" }],
      addGenerationPrompt: false,
      expected:
        "<s>GPT4 Correct User: Hello, how are you?<|end_of_turn|>GPT4 Correct Assistant: I'm doing great. How can I help you today?<|end_of_turn|>GPT4 Correct User: I'd like to show off how chat templating works!<|end_of_turn|>",
      expectedFrom:
        "Python: jinja2 3.1.6 ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, loopcontrols) with transformers' tojson, raise_exception and strftime_now, as apply_chat_template renders it (render.py, not kept in the repo)",
    },
    {
      name: "a system message is a 'GPT4 Correct System' turn; the generation prompt follows",
      messages: [
        { "role": "system", "content": "You are a helpful assistant." },
        { "role": "user", "content": "Hello, how are you?" },
        { "role": "assistant", "content": "I'm doing great. How can I help you today?" },
        { "role": "user", "content": "I'd like to show off how chat templating works!" },
      ],
      addGenerationPrompt: true,
      expected:
        "<s>GPT4 Correct System: You are a helpful assistant.<|end_of_turn|>GPT4 Correct User: Hello, how are you?<|end_of_turn|>GPT4 Correct Assistant: I'm doing great. How can I help you today?<|end_of_turn|>GPT4 Correct User: I'd like to show off how chat templating works!<|end_of_turn|>GPT4 Correct Assistant:",
      expectedFrom:
        "Python: jinja2 3.1.6 ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, loopcontrols) with transformers' tojson, raise_exception and strftime_now, as apply_chat_template renders it (render.py, not kept in the repo)",
    },
  ],
} satisfies CorpusTemplate;

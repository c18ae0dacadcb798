// codellama/CodeLlama-7b-Instruct-hf: Llama 2's [INST] turns, each user turn opening with bos, the
// system message in <<SYS>> inside the first one. Its JSON escapes the newlines twice, so the
// template writes a literal backslash-n there (as transformers does).
import type { CorpusTemplate } from "./types.ts";

export default {
  model: "codellama/CodeLlama-7b-Instruct-hf",
  family: "CodeLlama",
  source:
    "the chat_template of https://huggingface.co/codellama/CodeLlama-7b-Instruct-hf/blob/main/tokenizer_config.json (the same text for -34b in https://github.com/openvinotoolkit/openvino_tokenizers tests/tokenizers_test.py get_tokenizer_configs)",
  template:
    "{% if messages[0]['role'] == 'system' %}{% set loop_messages = messages[1:] %}{% set system_message = messages[0]['content'] %}{% else %}{% set loop_messages = messages %}{% set system_message = false %}{% endif %}{% for message in loop_messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}{% if loop.index0 == 0 and system_message != false %}{% set content = '<<SYS>>\\\\n' + system_message + '\\\\n<</SYS>>\\\\n\\\\n' + message['content'] %}{% else %}{% set content = message['content'] %}{% endif %}{% if message['role'] == 'user' %}{{ bos_token + '[INST] ' + content | trim + ' [/INST]' }}{% elif message['role'] == 'assistant' %}{{ ' '  + content | trim + ' ' + eos_token }}{% endif %}{% endfor %}",
  bosToken: "<s>",
  eosToken: "</s>",
  cases: [
    {
      name: "plain chat: user turns open with bos, answers end with eos",
      messages: [{ "role": "user", "content": "Hello, how are you?" }, {
        "role": "assistant",
        "content": "I'm doing great. How can I help you today?",
      }, { "role": "user", "content": "I'd like to show off how chat templating works!" }],
      addGenerationPrompt: true,
      expected:
        "<s>[INST] Hello, how are you? [/INST] I'm doing great. How can I help you today? </s><s>[INST] I'd like to show off how chat templating works! [/INST]",
      expectedFrom:
        "Python: jinja2 3.1.6 ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, loopcontrols) with transformers' tojson, raise_exception and strftime_now, as apply_chat_template renders it (render.py, not kept in the repo)",
    },
    {
      name: "a system message goes in <<SYS>> inside the first user turn",
      messages: [
        { "role": "system", "content": "You are a helpful assistant." },
        { "role": "user", "content": "Hello, how are you?" },
        { "role": "assistant", "content": "I'm doing great. How can I help you today?" },
        { "role": "user", "content": "I'd like to show off how chat templating works!" },
      ],
      addGenerationPrompt: true,
      expected:
        "<s>[INST] <<SYS>>\\nYou are a helpful assistant.\\n<</SYS>>\\n\\nHello, how are you? [/INST] I'm doing great. How can I help you today? </s><s>[INST] I'd like to show off how chat templating works! [/INST]",
      expectedFrom:
        "Python: jinja2 3.1.6 ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, loopcontrols) with transformers' tojson, raise_exception and strftime_now, as apply_chat_template renders it (render.py, not kept in the repo)",
    },
  ],
} satisfies CorpusTemplate;

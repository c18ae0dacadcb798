// google/gemma-2b-it (the Gemma and Gemma 2 instruct template): <start_of_turn>user/model, turns
// trimmed, no system role.
import type { CorpusTemplate } from "./types.ts";

const SWIFT = "https://github.com/huggingface/swift-jinja Tests/Templates/ChatTemplateTests.swift";

const CHAT = [
  { role: "user" as const, content: "Hello, how are you?" },
  { role: "assistant" as const, content: "I'm doing great. How can I help you today?" },
  { role: "user" as const, content: "I'd like to show off how chat templating works!" },
];
const CHAT_TEXT =
  "<bos><start_of_turn>user\nHello, how are you?<end_of_turn>\n<start_of_turn>model\nI'm doing great. How can I help you today?<end_of_turn>\n<start_of_turn>user\nI'd like to show off how chat templating works!<end_of_turn>\n";

export default {
  model: "google/gemma-2b-it",
  family: "Gemma",
  source:
    `${SWIFT} ("Google Gemma-2B-IT"), the template of https://huggingface.co/google/gemma-2b-it; ` +
    "the same text as https://github.com/ggerganov/llama.cpp models/templates/" +
    "google-gemma-2-2b-it.jinja (https://huggingface.co/google/gemma-2-2b-it), so Gemma 2 too",
  template:
    "{{ bos_token }}{% if messages[0]['role'] == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}{% for message in messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}{% if (message['role'] == 'assistant') %}{% set role = 'model' %}{% else %}{% set role = message['role'] %}{% endif %}{{ '<start_of_turn>' + role + '\n' + message['content'] | trim + '<end_of_turn>\n' }}{% endfor %}{% if add_generation_prompt %}{{'<start_of_turn>model\n'}}{% endif %}",
  bosToken: "<bos>",
  eosToken: "<eos>",
  cases: [
    {
      name: "plain chat: the assistant is 'model'",
      messages: CHAT,
      addGenerationPrompt: false,
      expected: CHAT_TEXT,
      expectedFrom: `${SWIFT} (target of "Google Gemma-2B-IT", rendered there without a ` +
        "bos_token; the template writes it first)",
    },
    {
      name: "the generation prompt opens a model turn; turns are trimmed",
      messages: [{ role: "user", content: "  Hi!\n" }],
      addGenerationPrompt: true,
      expected: "<bos><start_of_turn>user\nHi!<end_of_turn>\n<start_of_turn>model\n",
      expectedFrom: "by hand from the template ('+' binds looser than '| trim')",
    },
    {
      name: "a system message is refused",
      messages: [{ role: "system", content: "Be brief." }, ...CHAT],
      addGenerationPrompt: true,
      rejects: "System role not supported",
      expectedFrom: "the template's raise_exception",
    },
  ],
} satisfies CorpusTemplate;

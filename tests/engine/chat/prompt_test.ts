import { ValidationError } from "../../../src/core/errors.ts";
import {
  type PromptTokenizer,
  reasoningTags,
  renderPrompt,
} from "../../../src/engine/chat/prompt.ts";
import { assert, assertEquals, assertThrows } from "../../_assert.ts";

/** A tokenizer whose "template" is a function of the messages and options; ids are char codes. */
function stubTokenizer(
  render: (messages: unknown[], options: Record<string, unknown>) => string,
  vocab: string[] = ["<think>", "</think>"],
  special: string[] = [],
): PromptTokenizer & { calls: Record<string, unknown>[] } {
  const calls: Record<string, unknown>[] = [];
  return {
    calls,
    encode: (text) => [...text].map((c) => c.charCodeAt(0)),
    decode: (ids, options) =>
      ids.map((id) => vocab[id]).filter((t) =>
        !(options?.skip_special_tokens && special.includes(t))
      )
        .join(""),
    apply_chat_template: (messages, options) => {
      calls.push(options);
      return render(messages, options);
    },
    chat_template: "stub",
    get_vocab: () => new Map(vocab.map((t, i) => [t, i])),
  };
}

const USER = { messages: [{ role: "user" as const, content: "hi" }] };

Deno.test("renderPrompt() passes chat_template_kwargs to the template beside the fixed options", () => {
  const tok = stubTokenizer((
    _,
    o,
  ) => (o.enable_thinking === false ? "A<think>\n\n</think>\n\n" : "A"));
  const plain = renderPrompt(tok, USER, "m");
  const off = renderPrompt(tok, { ...USER, templateKwargs: { enable_thinking: false } }, "m");
  assertEquals(tok.calls[1], {
    enable_thinking: false,
    tokenize: false,
    add_generation_prompt: true,
  });
  assertEquals(plain.ids.length, 1);
  assertEquals(off.ids.length, 1 + "<think>\n\n</think>\n\n".length);
  // A closed block in the prompt: the output starts as the answer.
  assertEquals(off.reasoning, { start: "<think>", end: "</think>", startsInside: false });
});

Deno.test("renderPrompt() says when the generation prompt opens a think block", () => {
  const tok = stubTokenizer(() => "<|im_start|>assistant\n<think>\n");
  assertEquals(renderPrompt(tok, USER, "m").reasoning?.startsInside, true);
  // A <think> inside an earlier message does not count: only the prompt's end does.
  const user = stubTokenizer(() => "user: <think>\nassistant:\n");
  assertEquals(renderPrompt(user, USER, "m").reasoning?.startsInside, false);
});

Deno.test("renderPrompt() reports no reasoning for models without think tokens or raw prompts", () => {
  const tok = stubTokenizer(() => "<think>\n", ["<|im_start|>"]);
  assertEquals(renderPrompt(tok, USER, "m").reasoning, undefined);
  assertEquals(reasoningTags(tok), null);
  // Tags that are special tokens vanish from decoded text: splitting on them would lose the answer.
  const special = stubTokenizer(() => "<think>\n", ["<think>", "</think>"], ["</think>"]);
  assertEquals(renderPrompt(special, USER, "m").reasoning, undefined);
  const thinking = stubTokenizer(() => "x");
  assertEquals(renderPrompt(thinking, { prompt: "<think>" }, "m"), {
    ids: [..."<think>"].map((c) => c.charCodeAt(0)),
  });
  assertEquals(renderPrompt(thinking, { tokenIds: [1, 2] }, "m"), { ids: [1, 2] });
});

Deno.test("renderPrompt() turns a template exception into a ValidationError naming it", () => {
  const tok = stubTokenizer(() => {
    throw new Error("Conversation roles must alternate user/assistant/user/assistant/...");
  });
  const err = assertThrows(() => renderPrompt(tok, USER, "qwen"), ValidationError);
  assert(err instanceof ValidationError);
  assertEquals(err.param, "messages");
  assertEquals(err.code, "chat_template_error");
  assert(err.message.includes("Conversation roles must alternate"), err.message);
  assert(err.message.includes("'qwen'"), err.message);
});

Deno.test("renderPrompt() refuses chat_template_kwargs that would override the server's options", () => {
  const tok = stubTokenizer(() => "x");
  for (const key of ["messages", "add_generation_prompt", "chat_template", "tokenize"]) {
    const err = assertThrows(
      () => renderPrompt(tok, { ...USER, templateKwargs: { [key]: 1 } }, "m"),
      ValidationError,
    );
    assert(err instanceof ValidationError);
    assertEquals(err.param, `chat_template_kwargs.${key}`);
  }
  assertEquals(tok.calls.length, 0);
});

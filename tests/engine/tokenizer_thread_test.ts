import { assert, assertEquals } from "../_assert.ts";
import { demoFolder } from "../_helpers/demo_engines.ts";
import { turnsDuring } from "../_helpers/event_loop_turns.ts";
import { loadModel } from "../../src/engine/load_model.ts";
import { inputSize, OFF_THREAD_FROM, TokenizerThread } from "../../src/engine/tokenizer_thread.ts";
import { renderPrompt } from "../../src/engine/chat/prompt.ts";
import { encodePairs } from "../../src/engine/tokenization.ts";

Deno.test("TokenizerThread lets other work run between small prompts that add up to a large request", async () => {
  const folder = await demoFolder("demo/chat");
  const model = await loadModel(folder, "chat", { device: "cpu", dtype: "q8" });
  const thread = new TokenizerThread(model.tokenizer, folder, "cpu");
  try {
    // Each prompt stays on this thread; together they are four times what goes to the worker.
    const prompt = "the cat sat on the mat and looked at the dog ".repeat(130);
    const count = Math.ceil((4 * OFF_THREAD_FROM) / prompt.length);
    const turns = await turnsDuring(async () => {
      for (let i = 0; i < count; i++) {
        const rendered = await thread.render({ prompt }, "demo/chat");
        if (i === 0) {
          assertEquals(rendered.ids, renderPrompt(model.tokenizer, { prompt }, "demo/chat").ids);
        }
      }
    });
    assert(turns >= 3, `${turns} turns for ${count} prompts`);
  } finally {
    thread.release();
    await model.session.release();
  }
});

Deno.test("inputSize() weighs a chat by its messages, tool calls, tools and template variables, not its text alone", () => {
  const empty = Array.from({ length: 20_000 }, () => ({ role: "user" as const, content: "" }));
  assert(inputSize({ messages: empty }) >= OFF_THREAD_FROM, "20,000 empty messages");
  const call = {
    id: "c1",
    name: "f",
    arguments: JSON.stringify({ a: "x".repeat(OFF_THREAD_FROM) }),
  };
  const calls = [{ role: "assistant" as const, content: "", toolCalls: [call] }];
  assert(inputSize({ messages: calls }) >= OFF_THREAD_FROM, "a long tool call");
  const hi = [{ role: "user" as const, content: "hi" }];
  const kwargs = { documents: Array.from({ length: 5000 }, (_, i) => ({ title: `doc ${i}` })) };
  assert(inputSize({ messages: hi, templateKwargs: kwargs }) >= OFF_THREAD_FROM, "template kwargs");
  const tools = [{ name: "f", parameters: { description: "d".repeat(OFF_THREAD_FROM) } }];
  assert(inputSize({ messages: hi, tools }) >= OFF_THREAD_FROM, "tools");
  assert(inputSize({ messages: hi }) < 100, "a short chat stays small");
});

Deno.test("TokenizerThread lets other work run between small tasks started at once that add up to a large request", async () => {
  const folder = await demoFolder("demo/rerank");
  const model = await loadModel(folder, "rerank", { device: "cpu", dtype: "q8" });
  const thread = new TokenizerThread(model.tokenizer, folder, "cpu");
  try {
    // A score request's pairs, each a call of its own, all started together; then the same as
    // prompts, texts and ids. Each stays on this thread; together they are four times what goes
    // to the worker.
    const text = "the cat sat on the mat and looked at the dog ".repeat(65);
    const count = Math.ceil((4 * OFF_THREAD_FROM) / (2 * text.length));
    const each = <T>(f: () => Promise<T>) => Promise.all(Array.from({ length: count }, f));
    const ids = model.tokenizer.encode(text.repeat(2));
    const cases: [string, () => Promise<unknown>][] = [
      ["pairs", () => each(() => thread.pairs(text, [text]))],
      ["prompts", () => each(() => thread.render({ prompt: text + text }, "demo/rerank"))],
      ["texts", () => each(() => thread.encodeAll([text, text]))],
      ["ids", () => each(() => thread.detokenize(ids.concat(ids).concat(ids).concat(ids)))],
    ];
    for (const [what, work] of cases) {
      const turns = await turnsDuring(work);
      assert(turns >= 3, `${what}: ${turns} turns for ${count} calls`);
    }
    assertEquals(await thread.pairs(text, [text]), encodePairs(model.tokenizer, text, [text]));
  } finally {
    thread.release();
    await model.session.release();
  }
});

// Letters at random: few repeated words for the tokenizer's cache, so the work grows with length.
function randomLetters(length: number): string {
  return Array.from({ length }, (_, i) => String.fromCharCode(97 + (i * 7919 + i * i) % 26))
    .join("");
}

Deno.test("TokenizerThread renders a prompt from OFF_THREAD_FROM characters in a worker, the thread free meanwhile", async () => {
  const folder = await demoFolder("demo/chat");
  const model = await loadModel(folder, "chat", { device: "cpu", dtype: "q8" });
  const thread = new TokenizerThread(model.tokenizer, folder, "cpu");
  try {
    const prompt = randomLetters(2 * OFF_THREAD_FROM);
    await thread.render({ prompt: randomLetters(OFF_THREAD_FROM) }, "demo/chat"); // started
    let rendered: Awaited<ReturnType<typeof thread.render>> | undefined;
    const turns = await turnsDuring(async () => {
      rendered = await thread.render({ prompt }, "demo/chat");
    });
    assert(turns >= 2, `${turns} turns while a ${prompt.length}-character prompt was rendered`);
    assertEquals(rendered!.ids, renderPrompt(model.tokenizer, { prompt }, "demo/chat").ids);
  } finally {
    thread.release();
    await model.session.release();
  }
});

Deno.test("TokenizerThread answers an input from a second worker while a huge one keeps the first busy", async () => {
  const folder = await demoFolder("demo/chat");
  const model = await loadModel(folder, "chat", { device: "cpu", dtype: "q8" });
  const thread = new TokenizerThread(model.tokenizer, folder, "cpu");
  try {
    let hugeDone = false;
    const huge = thread.render({ prompt: randomLetters(1_000_000) }, "demo/chat")
      .then(() => hugeDone = true);
    const prompt = randomLetters(OFF_THREAD_FROM);
    const small = await thread.render({ prompt }, "demo/chat");
    assert(!hugeDone, "the small prompt waited for the huge one");
    assertEquals(small.ids, renderPrompt(model.tokenizer, { prompt }, "demo/chat").ids);
    await huge;
  } finally {
    thread.release();
    await model.session.release();
  }
});

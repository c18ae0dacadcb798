// The engine's per-request limits at the HTTP edge: counts over a limit are a 400 naming the field
// and the flag before the engine is asked for anything; limits the engine was started with apply.
import { assertEquals, assertMatch } from "../_assert.ts";
import { post } from "../_helpers/http.ts";
import { type Json, setup, USER } from "./_engine_app_setup.ts";

async function refused(res: Response, param: string, flag: string): Promise<void> {
  const { error }: Json = await res.json();
  assertEquals([res.status, error.type, error.param], [400, "invalid_request_error", param]);
  assertMatch(error.message, new RegExp(`--${flag}\\b`));
}

Deno.test("completions: prompts, n, prompts × n and logprobs over the limits are 400s naming flag and field", async () => {
  const { app, chat } = setup();
  const ask = (extra: Json) => post(app, "/v1/completions", { model: "fake/chat", ...extra });
  await refused(await ask({ prompt: Array(129).fill("hi") }), "prompt", "max-prompts");
  await refused(await ask({ prompt: "hi", n: 129 }), "n", "max-n");
  await refused(await ask({ prompt: ["a", "b", "c"], n: 100 }), "n", "max-request-sequences");
  await refused(await ask({ prompt: "hi", logprobs: 21 }), "logprobs", "max-top-logprobs");
  // The measured attack: 2000 prompts × n 128 (256k sequences) is refused before any is started.
  await refused(await ask({ prompt: Array(2000).fill("hi"), n: 128 }), "prompt", "max-prompts");
  assertEquals(chat.generateCalls.length, 0);
});

Deno.test("chat: n and top_logprobs over the limits are 400s naming flag and field", async () => {
  const { app } = setup();
  const ask = (extra: Json) =>
    post(app, "/v1/chat/completions", { model: "fake/chat", messages: USER, ...extra });
  await refused(await ask({ n: 200 }), "n", "max-n");
  await refused(
    await ask({ logprobs: true, top_logprobs: 21 }),
    "top_logprobs",
    "max-top-logprobs",
  );
});

// Messages past the count check: the fake engine's 64-token context is what refuses them.
async function pastTheCount(res: Response): Promise<void> {
  const { error }: Json = await res.json();
  assertEquals([res.status, error.code], [400, "context_length_exceeded"]);
}

Deno.test("chat and /tokenize: more messages than the limit are a 400 naming messages and the flag, before the body is validated", async () => {
  const { app, chat } = setup();
  const many = (count: number) => Array(count).fill({ role: "user", content: "hi" });
  const ask = (path: string, messages: Json[]) => post(app, path, { model: "fake/chat", messages });
  await refused(await ask("/v1/chat/completions", many(2049)), "messages", "max-messages");
  await refused(await ask("/tokenize", many(2049)), "messages", "max-messages");
  // Counted first: a list of 2049 bad messages is refused for its length, not its first error.
  const bad = Array(2049).fill({ role: "nobody", content: 7 });
  await refused(await ask("/v1/chat/completions", bad), "messages", "max-messages");
  assertEquals(chat.generateCalls.length, 0);
  await pastTheCount(await ask("/v1/chat/completions", many(2048)));
});

Deno.test("responses: more input items than the messages limit are a 400 naming input and the flag, before the body is validated", async () => {
  const { app, chat } = setup();
  const items = (count: number, item: Json) => Array(count).fill(item);
  const ask = (input: Json[]) => post(app, "/v1/responses", { model: "fake/chat", input });
  await refused(await ask(items(2049, { role: "user", content: "hi" })), "input", "max-messages");
  await refused(await ask(items(2049, { type: "nonsense" })), "input", "max-messages");
  assertEquals(chat.generateCalls.length, 0);
  await pastTheCount(await ask(items(2048, { role: "user", content: "hi" })));
});

Deno.test("chat: an engine started with more messages allowed takes them", async () => {
  const { app } = setup({ limits: { maxMessages: 3000 } });
  const messages = Array(3000).fill({ role: "user", content: "hi" });
  await pastTheCount(await post(app, "/v1/chat/completions", { model: "fake/chat", messages }));
  // Unnamed, the model is the one chat engine served: its limits apply too.
  await pastTheCount(await post(app, "/v1/chat/completions", { messages }));
});

Deno.test("embeddings: more inputs than the limit is a 400 naming input and the flag", async () => {
  const { app, embed } = setup();
  const res = await post(app, "/v1/embeddings", {
    model: "fake/embed",
    input: Array(2049).fill("a"),
  });
  await refused(res, "input", "max-embedding-inputs");
  assertEquals(embed.embedCalls.length, 0);
});

Deno.test("completions: limits the engine was started with replace the defaults", async () => {
  const { app } = setup({ limits: { maxN: 300, maxSequences: 300, maxPrompts: 2 } });
  const many = await post(app, "/v1/completions", { model: "fake/chat", prompt: "hi", n: 300 });
  assertEquals(many.status, 200);
  assertEquals((await many.json()).choices.length, 300);
  const res = await post(app, "/v1/completions", { model: "fake/chat", prompt: ["a", "b", "c"] });
  await refused(res, "prompt", "max-prompts");
});

Deno.test("/tokenize without a model counts messages against the limits of the one engine with a tokenizer", async () => {
  const { app, chat } = setup({ limits: { maxMessages: 3000 } });
  // The fake chat engine gets a tokenizer; the fake embedding engine has none.
  Object.assign(chat, {
    tokenize: () => Promise.resolve({ tokens: [1, 2] }),
    detokenize: () => Promise.resolve("ab"),
  });
  const messages = Array(3000).fill({ role: "user", content: "hi" });
  const res = await post(app, "/tokenize", { messages });
  assertEquals([res.status, (await res.json()).tokens], [200, [1, 2]]);
});

Deno.test("responses: a chain whose turns and input pass the messages limit is a 400 naming previous_response_id and the flag", async () => {
  const { app, chat } = setup({ limits: { maxMessages: 4 } });
  const first = await post(app, "/v1/responses", { model: "fake/chat", input: "hi" });
  assertEquals(first.status, 200);
  const { id } = await first.json();
  const ask = (count: number) =>
    post(app, "/v1/responses", {
      model: "fake/chat",
      previous_response_id: id,
      input: Array(count).fill({ role: "user", content: "hi" }),
    });
  const calls = chat.generateCalls.length;
  // The first turn's question and answer, and three more: five messages.
  await refused(await ask(3), "previous_response_id", "max-messages");
  assertEquals(chat.generateCalls.length, calls);
  assertEquals((await ask(2)).status, 200);
});

// /v1/responses on the engine app over a fake engine: the same text as the chat path, and a
// stream the client leaves stops the generation.
import { post } from "../_helpers/http.ts";
import { waitFor } from "../_helpers/wait.ts";
import { assertEquals, assertMatch } from "../_assert.ts";
import { type Json, setup, USER } from "./_engine_app_setup.ts";

Deno.test("responses: the output is the chat path's answer to the same messages", async () => {
  const { app } = setup();
  const body = { model: "fake/chat", seed: 5, temperature: 1 };
  const chat: Json = await (await post(app, "/v1/chat/completions", { ...body, messages: USER }))
    .json();
  const res = await post(app, "/v1/responses", { ...body, input: USER[0].content });
  assertEquals(res.status, 200);
  const response: Json = await res.json();
  assertEquals(response.output[0].content[0].text, chat.choices[0].message.content);
  assertEquals(response.usage.input_tokens, chat.usage.prompt_tokens);
  assertEquals(response.usage.output_tokens, chat.usage.completion_tokens);
});

Deno.test("responses: cancelling the stream aborts the generation", async () => {
  const { app, chat } = setup({ tokenDelayMs: 20, eosAfter: 1000, contextLength: 5000 });
  const res = await post(app, "/v1/responses", {
    model: "fake/chat",
    input: "hello there",
    stream: true,
  });
  assertEquals(res.headers.get("content-type"), "text/event-stream; charset=utf-8");
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  const first = decoder.decode((await reader.read()).value);
  assertMatch(first, /^event: response\.created\ndata: \{"type":"response\.created"/);
  // Read until the first token came: the engine is generating.
  while (!decoder.decode((await reader.read()).value).includes("response.output_text.delta"));
  assertEquals(chat.running, 1);
  await reader.cancel();
  await waitFor(() => chat.aborted === 1, { what: "the fake engine to see the abort" });
  assertEquals(chat.running, 0);
});

Deno.test("responses: an unknown URL's 404 lists the endpoints, /v1/responses among them", async () => {
  const { app } = setup();
  const res = await post(app, "/v1/respond", { model: "fake/chat", input: "hi" });
  assertEquals(res.status, 404);
  const { error }: Json = await res.json();
  assertMatch(error.message, /POST \/v1\/respond\)/);
  assertMatch(error.message, /POST \/v1\/responses, GET \/v1\/responses\/\{id\}/);
});

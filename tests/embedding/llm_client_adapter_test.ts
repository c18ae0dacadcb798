import { ValidationError } from "../../src/core/errors.ts";
import {
  createLlmClientCompat,
  LLMClientAdapter,
  replyText,
} from "../../src/embedding/llm_client_adapter.ts";
import { assertEquals, assertRejects, assertThrows } from "../_assert.ts";

Deno.test("LLMClientAdapter wraps a plain function: generate as is, chat through a rendered prompt", async () => {
  const client = new LLMClientAdapter((prompt: string) => `echo: ${prompt}`);
  assertEquals(await client.generate("hi"), "echo: hi");
  assertEquals(
    await client.chat([{ role: "system", content: "be brief" }, { role: "user", content: "hi" }]),
    "echo: system: be brief\nuser: hi\nassistant:",
  );
});

Deno.test("LLMClientAdapter uses chat for generate when the legacy object only chats", async () => {
  const seen: unknown[] = [];
  const client = createLlmClientCompat({
    chat(messages: unknown, options?: unknown) {
      seen.push(messages, options);
      return Promise.resolve({ choices: [{ message: { role: "assistant", content: "pong" } }] });
    },
  });
  assertEquals(await client.generate("ping", { temperature: 0 }), "pong");
  assertEquals(seen, [[{ role: "user", content: "ping" }], { temperature: 0 }]);
});

Deno.test("LLMClientAdapter keeps `this` of legacy methods and prefers them over fallbacks", async () => {
  const legacy = {
    prefix: ">",
    generate(prompt: string) {
      return `${this.prefix}${prompt}`;
    },
    chat(messages: { content: string }[]) {
      return { message: { content: `${this.prefix}${messages.length}` } };
    },
  };
  const client = createLlmClientCompat(legacy);
  assertEquals(await client.generate("x"), ">x");
  assertEquals(await client.chat([{ role: "user", content: "a" }]), ">1");
  assertEquals(createLlmClientCompat(client as LLMClientAdapter), client);
});

Deno.test("replyText() reads strings and completion shapes and rejects others", () => {
  assertEquals(replyText({ choices: [{ text: "t" }] }), "t");
  assertEquals(replyText({ content: "c" }), "c");
  assertThrows(() => replyText({ nothing: true }), ValidationError);
});

Deno.test("LLMClientAdapter rejects an object with neither generate nor chat, and bad arguments", async () => {
  assertThrows(() => new LLMClientAdapter({} as never), ValidationError);
  const client = new LLMClientAdapter(() => "x");
  await assertRejects(() => client.generate(1 as unknown as string), ValidationError);
  await assertRejects(() => client.chat("hi" as never), ValidationError);
});

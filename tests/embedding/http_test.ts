import { CancelledError, ServiceError } from "../../src/core/errors.ts";
import { postJson, providerMessage } from "../../src/embedding/_http.ts";
import { assertEquals, assertRejects } from "../_assert.ts";
import { startStandIn } from "./_stand_in.ts";

Deno.test("providerMessage() finds the error text of each provider's error body", () => {
  assertEquals(providerMessage('{"error":{"message":"openai says"}}'), "openai says");
  assertEquals(providerMessage('{"error":"ollama says"}'), "ollama says");
  assertEquals(providerMessage('{"message":"cohere says"}'), "cohere says");
  assertEquals(providerMessage('{"Message":"aws says"}'), "aws says");
  assertEquals(providerMessage('{"detail":"jina says"}'), "jina says");
  assertEquals(providerMessage('{"detail":[{"msg":"a"},{"msg":"b"}]}'), "a; b");
  assertEquals(providerMessage("<html>Bad gateway</html>"), "<html>Bad gateway</html>");
  assertEquals(providerMessage(""), "(empty body)");
});

Deno.test("postJson() reports a body that is not JSON as ServiceError", async () => {
  const server = startStandIn(() => new Response("plain text", { status: 200 }));
  try {
    await assertRejects(
      () => postJson(server.url, {}, { provider: "Test" }),
      ServiceError,
      "not JSON: plain text",
    );
  } finally {
    await server.close();
  }
});

Deno.test("postJson() turns the caller's abort into CancelledError", async () => {
  let release!: () => void;
  const hold = new Promise<void>((resolve) => release = resolve);
  const server = startStandIn(async () => {
    await hold;
    return new Response("{}");
  });
  try {
    const controller = new AbortController();
    const call = postJson(server.url, {}, { provider: "Test", signal: controller.signal });
    setTimeout(() => controller.abort(), 20);
    await assertRejects(() => call, CancelledError);
  } finally {
    release();
    await server.close();
  }
});

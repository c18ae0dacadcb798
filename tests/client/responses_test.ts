// UnifiedInferenceClient.responses() against the demo engine and through the gateway
// (control-plane mode): a chained conversation, and the server's error typed.
import { UnifiedInferenceClient } from "../../src/client/unified_inference_client.ts";
import { ValidationError } from "../../src/core/errors.ts";
import { setupLogger } from "../../src/core/logging.ts";
import { assert, assertEquals, assertRejects } from "../_assert.ts";
import { structuredStack } from "../e2e/_structured_stack.ts";

setupLogger("error");

Deno.test("UnifiedInferenceClient.responses() chains turns with previousResponseId", async (t) => {
  const stack = await structuredStack();
  try {
    for (const { name, baseUrl } of stack.targets) {
      const client = UnifiedInferenceClient.createWithControlPlane(
        baseUrl,
        "demo/chat",
        baseUrl,
        "demo/embed",
        { env: {}, envFile: null },
      );
      await t.step(`${name}: two turns, the second sees the first`, async () => {
        const first = await client.responses("My name is Ada.", {
          instructions: "Be brief.",
          maxOutputTokens: 5,
          temperature: 0,
        });
        assertEquals(first.object, "response");
        const message = first.output[0];
        assertEquals(message.type === "message" && message.content[0].text, first.outputText);
        const alone = await client.responses("What is my name?", { maxOutputTokens: 1 });
        const second = await client.responses([{ role: "user", content: "What is my name?" }], {
          previousResponseId: first.id,
          maxOutputTokens: 1,
          store: false,
        });
        assertEquals(second.previous_response_id, first.id);
        assert(second.usage!.input_tokens >= alone.usage!.input_tokens + 5);
        const err = await assertRejects(
          () => client.responses("Again", { previousResponseId: second.id }),
          ValidationError,
        );
        assertEquals(err.param, "previous_response_id");
      });
    }
  } finally {
    await stack.stop();
  }
});

// UnifiedInferenceClient with tools and response formats, against the demo engine and through
// the gateway (control-plane mode): typed tool calls from chat and chatStream.
import { UnifiedInferenceClient } from "../../src/client/unified_inference_client.ts";
import type { ToolCallPiece } from "../../src/client/types.ts";
import { setupLogger } from "../../src/core/logging.ts";
import { assertEquals, assertMatch } from "../_assert.ts";
import { validatorFor } from "../engine/constrained/_validator.ts";
import { PERSON_SCHEMA, structuredStack, WEATHER_PARAMETERS } from "../e2e/_structured_stack.ts";

setupLogger("error");

const TOOLS = [{ name: "get_weather", description: "Weather now", parameters: WEATHER_PARAMETERS }];
const ASK = [{ role: "user" as const, content: "Weather in Paris?" }];

Deno.test("UnifiedInferenceClient: tools, toolChoice and responseFormat give typed results", async (t) => {
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
      const checkArgs = validatorFor(WEATHER_PARAMETERS);

      await t.step(`${name}: chat() returns the tool calls typed`, async () => {
        const answer = await client.chat(ASK, {
          tools: TOOLS,
          toolChoice: { name: "get_weather" },
          seed: 2,
          maxTokens: 200,
        });
        assertEquals(answer.choices[0].finish_reason, "tool_calls");
        assertEquals(answer.text, "");
        assertEquals(answer.toolCalls.length, 1);
        const [call] = answer.toolCalls;
        assertMatch(call.id, /^call_/);
        assertEquals(call.name, "get_weather");
        assertEquals(checkArgs(JSON.parse(call.arguments)), null);
        // The call and its result go back into the conversation.
        const next = await client.chat([
          ...ASK,
          { role: "assistant", content: null, toolCalls: answer.toolCalls },
          { role: "tool", toolCallId: call.id, content: "sunny" },
        ], { tools: TOOLS, maxTokens: 4 });
        assertEquals(next.object, "chat.completion");
      });

      await t.step(`${name}: chatStream() yields tool call pieces that add up`, async () => {
        const pieces: ToolCallPiece[] = [];
        for await (
          const delta of client.chatStream(ASK, {
            tools: TOOLS,
            toolChoice: "required",
            parallelToolCalls: false,
            seed: 2,
            maxTokens: 200,
          })
        ) {
          pieces.push(...delta.toolCalls ?? []);
        }
        assertEquals(pieces[0].name, "get_weather");
        assertMatch(pieces[0].id!, /^call_/);
        const args = pieces.map((p) => p.arguments).join("");
        assertEquals(checkArgs(JSON.parse(args)), null, args);
      });

      await t.step(`${name}: responseFormat json_schema gives JSON of that schema`, async () => {
        const answer = await client.chat("Describe someone.", {
          responseFormat: { type: "json_schema", name: "person", schema: PERSON_SCHEMA },
          seed: 9,
          maxTokens: 400,
        });
        assertEquals(validatorFor(PERSON_SCHEMA)(JSON.parse(answer.text)), null, answer.text);
        assertEquals(answer.toolCalls, []);
      });
    }
  } finally {
    await stack.stop();
  }
});

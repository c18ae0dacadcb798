// createForModel() sends the admin key (SVC_ADMIN_API_KEY) to the gateway's management API and
// keeps the chat key for inference; without an admin key it falls back to the chat key.
import { assertEquals } from "../_assert.ts";
import { UnifiedInferenceClient } from "../../src/client/unified_inference_client.ts";
import type { CreateForModelOptions } from "../../src/client/types.ts";

const BASE = "http://gateway.test:8000/v1";

// A gateway stand-in: records the key of each call; the engine is ready at once.
function standIn(): { fetch: (req: Request) => Promise<Response>; seen: string[] } {
  const seen: string[] = [];
  const fetch = (req: Request): Promise<Response> => {
    const path = new URL(req.url).pathname;
    seen.push(`${path} ${req.headers.get("authorization")}`);
    if (path === "/v1/management/engines") {
      return Promise.resolve(Response.json({
        id: "chat-8001",
        kind: "chat",
        state: "ready",
        message: null,
        models: ["demo/chat"],
        reused: false,
      }, { status: 201 }));
    }
    return Promise.resolve(Response.json({
      id: "c-1",
      object: "chat.completion",
      created: 0,
      model: "demo/chat",
      choices: [{ index: 0, message: { role: "assistant", content: "hi" }, finish_reason: "stop" }],
      usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
    }));
  };
  return { fetch, seen };
}

async function keysSeen(options: CreateForModelOptions): Promise<string[]> {
  const { fetch, seen } = standIn();
  const client = await UnifiedInferenceClient.createForModel("demo/chat", {
    controlPlaneUrl: BASE,
    envFile: null,
    fetch,
    maxRetries: 0,
    ...options,
  });
  await client.chat("hello", { maxTokens: 2 });
  return seen;
}

Deno.test("createForModel() manages with SVC_ADMIN_API_KEY and chats with SVC_CHAT_API_KEY", async () => {
  assertEquals(
    await keysSeen({ env: { SVC_CHAT_API_KEY: "chat-k", SVC_ADMIN_API_KEY: "admin-k" } }),
    ["/v1/management/engines Bearer admin-k", "/v1/chat/completions Bearer chat-k"],
  );
});

Deno.test("createForModel() falls back to the chat key; the adminApiKey option wins", async () => {
  assertEquals(
    await keysSeen({ env: { SVC_CHAT_API_KEY: "chat-k" } }),
    ["/v1/management/engines Bearer chat-k", "/v1/chat/completions Bearer chat-k"],
  );
  assertEquals(
    await keysSeen({
      apiKey: "chat-o",
      adminApiKey: "admin-o",
      env: { SVC_ADMIN_API_KEY: "admin-k" },
    }),
    ["/v1/management/engines Bearer admin-o", "/v1/chat/completions Bearer chat-o"],
  );
});

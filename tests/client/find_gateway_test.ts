// createForModel() finds the gateway of a running `svc llm serve` on a port of its own, as
// createAuto() does: through the state file that serve wrote in SVC_HOME.
import { join } from "node:path";
import { assertEquals } from "../_assert.ts";
import { updateServeState } from "../../src/cli/serve_state.ts";
import { UnifiedInferenceClient } from "../../src/client/unified_inference_client.ts";
import { chatAnswer, closedPort, modelList, standIn } from "./_stand_in.ts";

Deno.test("createForModel() uses the gateway svc llm serve recorded in SVC_HOME before the default port", async () => {
  // A gateway stand-in: lists its models, starts engines at once, answers chat.
  const gateway = standIn((req) => {
    const path = new URL(req.url).pathname;
    if (path === "/v1/models") return modelList([{ id: "demo/chat", kind: "chat" }]);
    if (path === "/v1/management/engines") {
      return Response.json({
        id: "chat-1",
        kind: "chat",
        state: "ready",
        message: null,
        models: ["demo/chat"],
        reused: true,
      }, { status: 201 });
    }
    return chatAnswer("demo/chat", "from the serve's gateway");
  });
  const home = await Deno.makeTempDir({ prefix: "svc-find-gateway-" });
  try {
    await Deno.mkdir(join(home, "engines"));
    // Written as `svc llm serve --port <n>` writes it (src/cli/serve_state.ts).
    await updateServeState(join(home, "engines", "serve.env"), {
      pid: Deno.pid,
      gatewayUrl: gateway.baseUrl,
    });
    const client = await UnifiedInferenceClient.createForModel("demo/chat", {
      env: { SVC_HOME: home },
      envFile: null,
      // Nothing listens on the default gateway port here.
      gatewayPort: closedPort(),
      probeTimeoutMs: 2000,
      maxRetries: 0,
    });
    assertEquals(client.mode, "control_plane");
    assertEquals(client.endpoints.chat.baseUrl, gateway.baseUrl);
    assertEquals((await client.chat("hi")).text, "from the serve's gateway");
    assertEquals(gateway.seen.some((r) => r.path === "/v1/management/engines"), true);
  } finally {
    await gateway.close();
    await Deno.remove(home, { recursive: true });
  }
});

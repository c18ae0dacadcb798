// The body cap is configurable (--max-body-bytes, HttpLimits.maxBodyBytes) on engines and the
// gateway alike: a body over it is a 413 in OpenAI's error shape naming the flag, whatever the
// endpoint; one under it is served.
import { assertEquals, assertMatch } from "../_assert.ts";
import { setupLogger } from "../../src/core/logging.ts";
import { startGateway } from "../../src/gateway/gateway_server.ts";
import type { HttpLogger } from "../../src/http/logger.ts";
import { demoEngineServer } from "../_helpers/demo_server.ts";

setupLogger("error");
const QUIET: HttpLogger = { error: () => {}, warn: () => {} };

Deno.test("a body over --max-body-bytes is a 413 on every endpoint, engine and gateway", async () => {
  const engine = await demoEngineServer("demo/chat", undefined, {
    httpLimits: { maxBodyBytes: 4096 },
  });
  const gateway = await startGateway({
    logger: QUIET,
    httpLimits: { maxBodyBytes: 4096 },
    backends: [{ id: "e", baseUrl: engine.baseUrl, kind: "llm", models: ["demo/chat"] }],
  });
  try {
    for (const base of [engine.baseUrl, gateway.baseUrl]) {
      for (const path of ["/chat/completions", "/completions", "/embeddings", "/tokenize"]) {
        const res = await fetch(`${base}${path}`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ model: "demo/chat", prompt: "x".repeat(5000) }),
        });
        const body = await res.json();
        assertEquals(res.status, 413, `${base}${path}`);
        assertEquals(body.error.code, "payload_too_large");
        assertMatch(body.error.message, /4096 bytes.*--max-body-bytes/);
      }
      const ok = await fetch(`${base}/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          model: "demo/chat",
          messages: [{ role: "user", content: "hi" }],
          max_tokens: 2,
        }),
      });
      assertEquals(ok.status, 200);
      await ok.body?.cancel();
    }
  } finally {
    await gateway.stop();
    await engine.stop();
  }
});

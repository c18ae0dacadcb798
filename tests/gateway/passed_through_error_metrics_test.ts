// A backend's error answer that the gateway passes through is counted in the gateway's /metrics by
// the backend's own code, as the backend counts it (it used to be a bare http_4xx). A real engine on
// the demo model, a gateway in front of it, raw fetch.
import { assertEquals } from "../_assert.ts";
import { setupLogger } from "../../src/core/logging.ts";
import { startGateway } from "../../src/gateway/gateway_server.ts";
import type { HttpLogger } from "../../src/http/logger.ts";
import { demoEngineServer } from "../_helpers/demo_server.ts";

setupLogger("error");

const QUIET: HttpLogger = { error: () => {}, warn: () => {} };

async function post(url: string, body: Record<string, unknown>): Promise<string> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const { error } = await res.json();
  assertEquals(res.status, 400, error?.message);
  return error.code;
}

// The error codes /metrics counts for a route.
async function errorCodes(metricsUrl: string, route: string): Promise<string[]> {
  const text = await (await fetch(metricsUrl)).text();
  const line = new RegExp(`^svc_gateway_http_errors_total\\{route="${route}",code="([^"]+)"\\}`);
  return text.split("\n").flatMap((l) => line.exec(l)?.[1] ?? []);
}

Deno.test("gateway: a backend's passed-through error counts in /metrics by its own code", async () => {
  const engine = await demoEngineServer("demo/chat");
  const gateway = await startGateway({
    logger: QUIET,
    backends: [{ id: "e0", baseUrl: engine.baseUrl, kind: "llm", models: ["demo/chat"] }],
  });
  try {
    const metrics = gateway.baseUrl.replace(/\/v1$/, "/metrics");
    const chat = await post(`${gateway.baseUrl}/chat/completions`, {
      model: "demo/chat",
      messages: [{ role: "user", content: "hi" }],
      max_tokens: 100_000,
    });
    assertEquals(chat, "context_length_exceeded");
    const completion = await post(`${gateway.baseUrl}/completions`, {
      model: "demo/chat",
      prompt: [[1, 2], [1_000_000_000]],
    });
    assertEquals(await errorCodes(metrics, "/v1/chat/completions"), [chat]);
    assertEquals(await errorCodes(metrics, "/v1/completions"), [completion]);
  } finally {
    await gateway.stop();
    await engine.stop();
  }
});

// /v1/responses answers the chat path's errors (and, at the gateway, a backend's) as responses,
// not thrown errors: /metrics still counts them by their real code, and their messages name the
// Responses fields. A real engine on the demo model, a gateway in front of it, raw fetch.
import { assert, assertEquals, assertMatch } from "../_assert.ts";
import { setupLogger } from "../../src/core/logging.ts";
import { startGateway } from "../../src/gateway/gateway_server.ts";
import type { HttpLogger } from "../../src/http/logger.ts";
import { demoEngineServer } from "../_helpers/demo_server.ts";

setupLogger("error");

const QUIET: HttpLogger = { error: () => {}, warn: () => {} };

// deno-lint-ignore no-explicit-any
type Json = any;

async function create(baseUrl: string, body: Record<string, unknown>) {
  const res = await fetch(`${baseUrl}/responses`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ input: "hi", ...body }),
  });
  return { status: res.status, error: ((await res.json()) as Json).error };
}

async function errorCodes(baseUrl: string, prefix: string): Promise<string[]> {
  const text = await (await fetch(baseUrl.replace(/\/v1$/, "/metrics"))).text();
  const line = new RegExp(`^${prefix}_http_errors_total\\{route="/v1/responses",code="([^"]+)"\\}`);
  return text.split("\n").flatMap((l) => line.exec(l)?.[1] ?? []).sort();
}

async function withStack(fn: (apis: [string, string][]) => Promise<void>): Promise<void> {
  const engine = await demoEngineServer("demo/chat");
  const gateway = await startGateway({
    logger: QUIET,
    backends: [{ id: "e0", baseUrl: engine.baseUrl, kind: "llm", models: ["demo/chat"] }],
  });
  try {
    // Each API's base URL and its metrics prefix.
    await fn([[engine.baseUrl, "svc"], [gateway.baseUrl, "svc_gateway"]]);
  } finally {
    await gateway.stop();
    await engine.stop();
  }
}

Deno.test("responses: errors of the chat path and of a backend count in /metrics by their code", async () => {
  await withStack(async (apis) => {
    for (const [baseUrl, prefix] of apis) {
      const long = await create(baseUrl, { model: "demo/chat", max_output_tokens: 100_000 });
      assertEquals(long.status, 400);
      assertEquals(long.error.code, "context_length_exceeded");
      const unknown = await create(baseUrl, { model: "no/such-model" });
      assertEquals(unknown.status, 404);
      assertEquals(unknown.error.code, "model_not_found");
      assertEquals(await errorCodes(baseUrl, prefix), [
        "context_length_exceeded",
        "model_not_found",
      ], baseUrl);
    }
  });
});

Deno.test("responses: the chat path's error messages name the Responses fields, quoted or not", async () => {
  const not = { type: "number", not: { const: 5 } };
  const cases: [Record<string, unknown>, string, RegExp][] = [
    [{ max_output_tokens: 100_000 }, "max_output_tokens", /max_output_tokens asks for 100000\b/],
    [
      { text: { format: { type: "json_schema", name: "x", schema: not } } },
      "text.format.schema.not",
      /\(at text\.format\.schema\.not\)/,
    ],
    [
      {
        tools: [{
          type: "function",
          name: "f",
          parameters: { type: "object", properties: { n: not } },
          strict: false,
        }],
        tool_choice: "required",
      },
      "tools.0.parameters.properties.n.not",
      /\(at tools\.0\.parameters\.properties\.n\.not\)/,
    ],
  ];
  await withStack(async (apis) => {
    for (const [baseUrl] of apis) {
      for (const [body, param, message] of cases) {
        const { status, error } = await create(baseUrl, { model: "demo/chat", ...body });
        assertEquals(status, 400);
        assertEquals(error.param, param);
        assertMatch(error.message, message);
        assert(!/max_tokens|response_format|function\./.test(error.message), error.message);
      }
    }
  });
});

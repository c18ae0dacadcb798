// A backend whose address leads back to the gateway (itself, or through another gateway) is an
// error at once, found by the `Via` header each gateway adds, instead of requests that wait for
// one another's slots until every slot is held.
import { assertEquals, assertMatch, assertThrows } from "../_assert.ts";
import { ConfigurationError } from "../../src/core/errors.ts";
import { setupLogger } from "../../src/core/logging.ts";
import { startGateway } from "../../src/gateway/gateway_server.ts";
import { newViaName, viaUpstream } from "../../src/gateway/via.ts";
import type { HttpLogger } from "../../src/http/logger.ts";
import { freePort } from "../_helpers/free_port.ts";

setupLogger("error");
const QUIET: HttpLogger = { error: () => {}, warn: () => {} };

Deno.test("viaUpstream() adds this gateway to the chain and refuses a chain that names it", () => {
  const me = newViaName();
  assertEquals(viaUpstream(null, me), `1.1 ${me}`);
  assertEquals(
    viaUpstream("1.0 fred, 1.1 p.example.net (Apache)", me),
    `1.0 fred, 1.1 p.example.net (Apache), 1.1 ${me}`,
  );
  const err = assertThrows(
    () => viaUpstream(`1.1 other, HTTP/1.1 ${me} (svc)`, me),
    ConfigurationError,
    "came back to the gateway that sent it",
  );
  assertEquals(err.code, "loop_detected");
});

async function ask(
  baseUrl: string,
  model: string,
): Promise<{ status: number; body: { error: { code: string; message: string } } }> {
  const res = await fetch(`${baseUrl}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model, messages: [{ role: "user", content: "hi" }], max_tokens: 2 }),
    signal: AbortSignal.timeout(10_000),
  });
  return { status: res.status, body: await res.json() };
}

Deno.test("a backend that leads back to the gateway, itself or through another, fails at once and holds no slot", async () => {
  const [portA, portB] = [freePort(), freePort()];
  const backend = (id: string, port: number, model: string) => ({
    id,
    baseUrl: `http://127.0.0.1:${port}/v1`,
    kind: "llm" as const,
    models: [model],
    maxConcurrency: 1,
  });
  const a = await startGateway({
    logger: QUIET,
    port: portA,
    dispatcher: { maxRetries: 0 },
    backends: [backend("self", portA, "self/m"), backend("to-b", portB, "cycle/m")],
  });
  const b = await startGateway({
    logger: QUIET,
    port: portB,
    dispatcher: { maxRetries: 0 },
    backends: [backend("to-a", portA, "cycle/m")],
  });
  try {
    for (const gw of [a, b]) {
      for (const backend of gw.gateway.dispatcher.backends()) {
        await gw.gateway.checker.check(backend);
      }
    }
    for (const model of ["self/m", "cycle/m"]) {
      const { status, body } = await ask(a.baseUrl, model);
      assertEquals([status, body.error.code], [502, "backend_error"], model);
      assertMatch(body.error.message, /came back to the gateway that sent it/);
    }
    for (const gw of [a, b]) {
      for (const backend of gw.gateway.dispatcher.backends()) assertEquals(backend.inFlight, 0);
    }
  } finally {
    await a.stop();
    await b.stop();
  }
});

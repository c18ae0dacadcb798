// A client that leaves a stream is one cancelled request in /metrics (one 499, one
// `code="cancelled"`), however the server learns it left: the connection sees the client close
// and aborts the request, the producer stops with a CancelledError, and that is the client's
// leaving, not an error event of the stream. Over a real socket with the official `openai` client.
import OpenAI from "openai";
import { createEngineApp } from "../../src/server/engine_app.ts";
import type { HttpLogger } from "../../src/http/logger.ts";
import { MetricsRegistry } from "../../src/http/metrics.ts";
import { serveApp } from "../../src/http/serve.ts";
import { FakeEngine } from "../_helpers/fake_engine.ts";
import { waitFor } from "../_helpers/wait.ts";
import { assertEquals } from "../_assert.ts";

const QUIET: HttpLogger = { error: () => {}, warn: () => {} };

function counter(text: string, name: string, labels: string): number {
  const line = text.split("\n").find((l) => l.startsWith(`${name}{${labels}} `));
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(" ") + 1));
}

async function leaveMidStream(
  route: "/v1/responses" | "/v1/chat/completions",
  open: (client: OpenAI) => Promise<AsyncIterable<unknown> & { controller: AbortController }>,
): Promise<void> {
  const chat = new FakeEngine({
    id: "demo/chat",
    tokenDelayMs: 20,
    eosAfter: 10_000,
    contextLength: 100_000,
  });
  const metrics = new MetricsRegistry();
  const app = createEngineApp({ engines: [chat], logger: QUIET, metrics });
  const server = serveApp(app, { hostname: "127.0.0.1", port: 0, logger: QUIET });
  const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: "none", maxRetries: 0 });
  try {
    const stream = await open(client);
    let events = 0;
    for await (const _ of stream) {
      if (++events === 3) break; // leaving the loop aborts the SDK's request: the socket closes
    }
    stream.controller.abort();
    await waitFor(() => chat.aborted === 1, { what: "the generation to be cancelled" });
    const inFlight = () => /svc_http_requests_in_flight 0\b/.test(metrics.render());
    await waitFor(inFlight, { what: "the stream to be recorded" });
    // Anything counted late (a second count after the first) has had time to come.
    await new Promise((r) => setTimeout(r, 100));
    const text = metrics.render();
    const labels = `route="${route}"`;
    assertEquals(
      counter(text, "svc_http_requests_total", `${labels},method="POST",status="499"`),
      1,
      text,
    );
    assertEquals(counter(text, "svc_http_errors_total", `${labels},code="cancelled"`), 1, text);
    assertEquals(
      counter(text, "svc_http_requests_total", `${labels},method="POST",status="200"`),
      0,
    );
  } finally {
    await server.shutdown();
  }
}

Deno.test("serveApp() counts a /v1/responses stream the client leaves once, as cancelled (499)", async () => {
  await leaveMidStream(
    "/v1/responses",
    (client) => client.responses.create({ model: "demo/chat", input: "long", stream: true }),
  );
});

Deno.test("serveApp() counts a chat stream the client leaves once, as cancelled (499)", async () => {
  await leaveMidStream("/v1/chat/completions", (client) =>
    client.chat.completions.create({
      model: "demo/chat",
      messages: [{ role: "user", content: "long" }],
      stream: true,
    }));
});

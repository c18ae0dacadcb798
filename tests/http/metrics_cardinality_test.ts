// /metrics must stay small whatever clients send: made-up methods, paths and model names (even
// on 401s) may not become label values, or each one would live, and be scraped, forever.
import { assert, assertEquals } from "../_assert.ts";
import { setupLogger } from "../../src/core/logging.ts";
import { startGateway } from "../../src/gateway/gateway_server.ts";
import type { HttpLogger } from "../../src/http/logger.ts";
import { methodLabel, MetricsRegistry, statusLabel } from "../../src/http/metrics.ts";
import { serveApp } from "../../src/http/serve.ts";
import { createEngineApp } from "../../src/server/engine_app.ts";
import { registerEngineMetrics } from "../../src/server/engine_metrics.ts";
import { EngineRegistry } from "../../src/server/engine_registry.ts";
import { FakeEngine } from "../_helpers/fake_engine.ts";

setupLogger("error");
const QUIET: HttpLogger = { error: () => {}, warn: () => {} };
const KEY = "metrics-test-key-123";
const REQUESTS = 3000;
const CONCURRENCY = 50;
// After this flood the old code served ~190 KB (a series per made-up method); now ~7 KB.

const encoder = new TextEncoder();

/** Sends one raw request (`Connection: close`) and returns the status of the answer. */
async function rawRequest(url: string, head: string, body = ""): Promise<number> {
  const u = new URL(url);
  const conn = await Deno.connect({ hostname: u.hostname, port: Number(u.port) });
  try {
    const bytes = encoder.encode(body);
    await conn.write(encoder.encode(
      `${head}\r\nHost: ${u.host}\r\nConnection: close\r\nContent-Length: ${bytes.length}\r\n` +
        `Content-Type: application/json\r\n\r\n${body}`,
    ));
    const chunks: Uint8Array[] = [];
    const buf = new Uint8Array(8192);
    while (true) {
      const n = await conn.read(buf);
      if (n === null) break;
      chunks.push(buf.slice(0, n));
    }
    const text = new TextDecoder().decode(chunks[0] ?? new Uint8Array());
    return Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
  } finally {
    conn.close();
  }
}

/** The i-th hostile request: a made-up method and path, with and without the key, or a model. */
function hostile(i: number, chatPath: string): { head: string; body?: string } {
  const r = crypto.randomUUID().slice(0, 8).toUpperCase();
  const auth = `Authorization: Bearer ${KEY}`;
  switch (i % 4) {
    case 0: // 401
      return { head: `M${r} /x/${r} HTTP/1.1` };
    case 1: // 404
      return { head: `M${r} /x/${r} HTTP/1.1\r\n${auth}` };
    case 2: // 405
      return { head: `M${r} ${chatPath} HTTP/1.1\r\n${auth}` };
    default: // 404 model_not_found (or the gateway's refusal)
      return {
        head: `POST ${chatPath} HTTP/1.1\r\n${auth}`,
        body: JSON.stringify({
          model: `model-${r}`,
          messages: [{ role: "user", content: "hi" }],
          max_tokens: 1,
        }),
      };
  }
}

/** Floods `url` with hostile requests; returns the statuses seen. */
async function flood(url: string, chatPath: string): Promise<Set<number>> {
  const statuses = new Set<number>();
  let next = 0;
  const worker = async () => {
    while (next < REQUESTS) {
      const { head, body } = hostile(next++, chatPath);
      const status = await rawRequest(url, head, body);
      statuses.add(status);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return statuses;
}

/** Checks what /metrics of `url` shows after the flood. */
async function assertBounded(url: string, servedModels: readonly string[]): Promise<void> {
  const res = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${KEY}` } });
  assertEquals(res.status, 200);
  const text = await res.text();
  const values = (label: string) =>
    new Set([...text.matchAll(new RegExp(`[{,]${label}="([^"]*)"`, "g"))].map((m) => m[1]));
  const methods = values("method");
  assert(methods.size <= 10, `method labels: ${[...methods].slice(0, 20).join(", ")}`);
  assert(methods.has("other"), "made-up methods count as 'other'");
  for (const status of values("status")) assert(/^([1-5]\d\d|other)$/.test(status), status);
  for (const route of values("route")) assert(!route.includes("/x/"), `route label ${route}`);
  for (const model of values("model")) assert(servedModels.includes(model), `model ${model}`);
  assert(!text.includes("model-"), "a model name from a request is a label value");
}

Deno.test("engine server: 3,000 made-up methods, paths and models leave /metrics bounded", async () => {
  const engine = new FakeEngine({ id: "demo/chat" });
  const server = serveApp(createEngineApp({ engines: [engine], apiKey: KEY, logger: QUIET }), {
    port: 0,
    logger: QUIET,
  });
  try {
    const statuses = await flood(server.url, "/v1/chat/completions");
    for (const s of [401, 404, 405]) assert(statuses.has(s), `no ${s} in ${[...statuses]}`);
    await assertBounded(server.url, ["demo/chat"]);
  } finally {
    await server.shutdown();
  }
});

Deno.test("gateway: 3,000 made-up methods, paths and models leave /metrics bounded", async () => {
  const gw = await startGateway({ apiKey: KEY, logger: QUIET });
  try {
    const statuses = await flood(gw.url, "/v1/chat/completions");
    for (const s of [401, 404, 405]) assert(statuses.has(s), `no ${s} in ${[...statuses]}`);
    await assertBounded(gw.url, []);
  } finally {
    await gw.stop();
  }
});

Deno.test("methodLabel and statusLabel keep known values and fold the rest into 'other'", () => {
  for (const m of ["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"]) {
    assertEquals(methodLabel(m), m);
  }
  for (const m of ["FOO123", "get", "PROPFIND", ""]) assertEquals(methodLabel(m), "other");
  assertEquals(statusLabel(200), "200");
  assertEquals(statusLabel(499), "499");
  for (const s of [0, 99, 600, 1000, 200.5, NaN]) assertEquals(statusLabel(s), "other");
});

Deno.test("engine metrics: usage of a model not served here is labelled 'other'", () => {
  const registry = new MetricsRegistry();
  const record = registerEngineMetrics(
    registry,
    new EngineRegistry(new Map([["alias", new FakeEngine({ id: "demo/chat" })]])),
  );
  record("demo/chat", { promptTokens: 1, completionTokens: 1 });
  record("alias", { promptTokens: 1, completionTokens: 1 });
  record("made-up", { promptTokens: 1, completionTokens: 1 });
  const text = registry.render();
  assert(text.includes('svc_prompt_tokens_total{model="demo/chat"} 1'), text);
  assert(text.includes('svc_prompt_tokens_total{model="alias"} 1'), text);
  assert(text.includes('svc_prompt_tokens_total{model="other"} 1'), text);
  assert(!text.includes("made-up"), text);
});

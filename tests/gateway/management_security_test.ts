// The management API against what a web page can send from the user's browser: a cross-origin
// request (Origin header, text/plain "simple" body, CORS preflight) is refused and changes
// nothing, while same-machine tools (JSON, no foreign Origin) still manage engines. The
// inference routes keep their CORS.
import { join } from "node:path";
import { assertEquals } from "../_assert.ts";
import { setupLogger } from "../../src/core/logging.ts";
import { EngineStore } from "../../src/gateway/engines/engine_store.ts";
import { type GatewayServer, startGateway } from "../../src/gateway/gateway_server.ts";
import type { HttpLogger } from "../../src/http/logger.ts";
import { CHILD_HOME } from "./_child_home.ts";

setupLogger("error");
const QUIET: HttpLogger = { error: () => {}, warn: () => {} };
const EVIL = "http://evil.example";
const REGISTER = { base_url: "http://127.0.0.1:9/v1", kind: "chat", models: ["demo/chat"] };

async function withGateway(
  options: { apiKey?: string },
  fn: (gw: GatewayServer) => Promise<void>,
): Promise<void> {
  const dir = await Deno.makeTempDir();
  const gw = await startGateway({
    logger: QUIET,
    apiKey: options.apiKey,
    health: { intervalMs: 60_000 },
    management: { home: CHILD_HOME, store: new EngineStore(join(dir, "engines.json")) },
  });
  try {
    await fn(gw);
  } finally {
    await gw.stop();
    await Deno.remove(dir, { recursive: true });
  }
}

async function send(
  gw: GatewayServer,
  method: string,
  path: string,
  init: { headers?: Record<string, string>; body?: string } = {},
): Promise<{ status: number; headers: Headers; code: string | null }> {
  const res = await fetch(`${gw.url}${path}`, { method, ...init });
  const text = await res.text();
  const code = text ? JSON.parse(text)?.error?.code ?? null : null;
  return { status: res.status, headers: res.headers, code };
}

async function engineIds(
  gw: GatewayServer,
  headers: Record<string, string> = {},
): Promise<string[]> {
  const res = await fetch(`${gw.url}/v1/management/engines`, { headers });
  return (await res.json()).data.map((e: { id: string }) => e.id);
}

Deno.test("management API refuses cross-origin pages (Origin, text/plain, preflight) and changes nothing", async () => {
  await withGateway({}, async (gw) => {
    const page = { origin: EVIL, "content-type": "text/plain" };
    const attacks = [
      await send(gw, "POST", "/v1/management/engines/register", {
        headers: page,
        body: JSON.stringify(REGISTER),
      }),
      await send(gw, "POST", "/v1/management/engines", {
        headers: page,
        body: JSON.stringify({ model: "demo/chat" }),
      }),
      await send(gw, "DELETE", "/v1/management/engines/chat", { headers: { origin: EVIL } }),
      // A page that hides its Origin still carries the browser's Sec-Fetch-Site.
      await send(gw, "POST", "/v1/management/engines/register", {
        headers: { "sec-fetch-site": "cross-site", "content-type": "application/json" },
        body: JSON.stringify(REGISTER),
      }),
      await send(gw, "OPTIONS", "/v1/management/engines/register", {
        headers: {
          origin: EVIL,
          "access-control-request-method": "POST",
          "access-control-request-headers": "content-type",
        },
      }),
    ];
    for (const a of attacks) {
      assertEquals(a.status, 403);
      assertEquals(a.code, "origin_not_allowed");
      assertEquals(a.headers.get("access-control-allow-origin"), null);
    }
    // Without a foreign Origin, a text/plain body is still not taken as JSON.
    const plain = await send(gw, "POST", "/v1/management/engines/register", {
      headers: { "content-type": "text/plain" },
      body: JSON.stringify(REGISTER),
    });
    assertEquals([plain.status, plain.code], [415, "unsupported_media_type"]);
    assertEquals(await engineIds(gw), [], "nothing was registered");

    // Same-machine tools: JSON, no Origin or the gateway's own origin.
    const json = { "content-type": "application/json; charset=utf-8" };
    const ok = await send(gw, "POST", "/v1/management/engines/register", {
      headers: json,
      body: JSON.stringify({ ...REGISTER, id: "mine" }),
    });
    assertEquals(ok.status, 201);
    assertEquals(ok.headers.get("access-control-allow-origin"), null);
    assertEquals(await engineIds(gw, { origin: gw.url }), ["mine"]);
    assertEquals((await send(gw, "DELETE", "/v1/management/engines/mine")).status, 200);

    // The inference API keeps its CORS for pages.
    const models = await send(gw, "GET", "/v1/models", { headers: { origin: EVIL } });
    assertEquals([models.status, models.headers.get("access-control-allow-origin")], [200, "*"]);
  });
});

Deno.test("management API needs the key when one is set, and refuses other origins even with it", async () => {
  await withGateway({ apiKey: "k-123" }, async (gw) => {
    const body = JSON.stringify(REGISTER);
    const json = { "content-type": "application/json" };
    const noKey = await send(gw, "POST", "/v1/management/engines/register", {
      headers: json,
      body,
    });
    assertEquals(noKey.status, 401);
    const keyed = { ...json, authorization: "Bearer k-123" };
    const foreign = await send(gw, "POST", "/v1/management/engines/register", {
      headers: { ...keyed, origin: EVIL },
      body,
    });
    assertEquals(foreign.status, 403);
    assertEquals(await engineIds(gw, { authorization: "Bearer k-123" }), []);
  });
});
